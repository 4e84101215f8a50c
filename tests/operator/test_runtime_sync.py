"""Start-up listing: an API the cluster does not serve does not keep the operator from starting."""

from __future__ import annotations

import pytest

from aim_core.operator.controllers import build_controllers
from aim_core.operator.wiring import Runtime
from aim_core.operator.settings import Settings
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.errors import ApiError


class PartialCluster:
    """Answers lists like an API server without the Gateway API installed."""

    def __init__(self, missing_group: str, failing: int | None = None) -> None:
        self.missing_group = missing_group
        self.failing = failing
        self.listed: list[str] = []

    async def list_pages(self, ref, namespace=None, **_):
        if ref.group == self.missing_group:
            raise ApiError(self.failing or 404, "NotFound", "the server could not find the requested resource")
        self.listed.append(ref.plural)
        yield [], "1"


async def test_a_missing_api_is_listed_as_empty_and_the_store_is_ready():
    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    runtime.ctx.kube = PartialCluster("gateway.networking.k8s.io")
    await runtime.sync()
    assert runtime.ready.is_set()
    assert "aimservices" in runtime.ctx.kube.listed and "httproutes" not in runtime.ctx.kube.listed


async def test_other_listing_errors_still_stop_the_start():
    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    runtime.ctx.kube = PartialCluster("gateway.networking.k8s.io", failing=403)
    with pytest.raises(ApiError):
        await runtime.sync()
    assert not runtime.ready.is_set()


class Cluster:
    def __init__(self, objects):
        self.objects = objects

    async def list_pages(self, ref, namespace=None, **_):
        yield [dict(o) for o in self.objects.get(ref.plural, [])], "1"


async def test_a_later_listing_forgets_objects_deleted_while_nobody_watched():
    from aim_core.reconcile.resources import RUNTIME_CONFIGS

    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    gone = {"metadata": {"name": "old", "namespace": "team", "resourceVersion": "5"}, "spec": {}}
    kept = {"metadata": {"name": "kept", "namespace": "team", "resourceVersion": "6"}, "spec": {}}
    runtime.ctx.kube = Cluster({"aimruntimeconfigs": [gone, kept]})
    await runtime.sync()
    assert runtime.store.get(RUNTIME_CONFIGS, "team", "old") is not None
    runtime.ctx.kube = Cluster({"aimruntimeconfigs": [kept]})  # deleted during a watch gap
    await runtime.sync()
    assert runtime.store.get(RUNTIME_CONFIGS, "team", "old") is None
    assert runtime.store.get(RUNTIME_CONFIGS, "team", "kept") is not None
