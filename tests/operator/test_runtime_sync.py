"""The operator's streams and the periodic listing (``--resync-seconds``), against the API emulator.

A listing made beside a running watch races it: an object created while the
listing was under way is missing from the (older) listing and was deleted
from the store when the listing finished; an object deleted meanwhile came
back from the listing's page. A resync now makes each stream list again in
its own loop (the watch stops for the listing and resumes from its version),
so the events of the listing's time reach the store after it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from aim_core.kube import Credentials, Kube
from aim_core.operator.controllers import build_controllers
from aim_core.operator.settings import Settings
from aim_core.operator.wiring import Runtime
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import RUNTIME_CONFIGS

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


def config(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {},
    }


class Racing:
    """The API client, but the armed listing of runtime configs sees a create and a delete happen
    between fetching its page and handing it over (the page is then older than the changes)."""

    def __init__(self, client: Kube, api: Any, kube: Any) -> None:
        self.client, self.api, self.kube = client, api, kube
        self.armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    async def list_pages(self, ref: Any, namespace: Any = None, **kwargs: Any) -> Any:
        async for items, version in self.client.list_pages(ref, namespace, **kwargs):
            if self.armed and ref == RUNTIME_CONFIGS:
                self.armed = False
                self.kube.put_object(config("newcomer"))
                assert (await self.api.delete(self.kube.path(RC, "team", "doomed"))).status_code == 200
                await asyncio.sleep(0.3)  # a watch running beside the listing delivers both meanwhile
            yield items, version


async def until(check: Any, timeout: float = 3.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def test_a_resync_loses_no_change_made_during_its_listing(kube, api) -> None:
    kube.put_object(config("doomed"))
    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    client = Kube(Credentials(server=kube.url))
    racing = Racing(client, api, kube)
    runtime.ctx.kube = racing
    tasks = [asyncio.create_task(r.run()) for r in runtime._make_reflectors()]
    store = runtime.store
    try:
        for reflector in runtime.reflectors:
            await asyncio.wait_for(reflector.listed.wait(), 5)
        assert store.get(RUNTIME_CONFIGS, "team", "doomed") is not None
        racing.armed = True
        await asyncio.wait_for(runtime.resync(), 10)
        assert not racing.armed  # the listing of runtime configs was made again
        # the store ends as the server is: the newcomer stays, the deleted one does not come back
        await until(
            lambda: (
                store.get(RUNTIME_CONFIGS, "team", "newcomer") is not None
                and store.get(RUNTIME_CONFIGS, "team", "doomed") is None
            )
        )
        await asyncio.sleep(0.3)
        assert store.get(RUNTIME_CONFIGS, "team", "newcomer") is not None
        assert store.get(RUNTIME_CONFIGS, "team", "doomed") is None
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.aclose()


class PartialCluster:
    """Answers like an API server without the Gateway API installed; watches wait forever."""

    def __init__(self, missing_group: str) -> None:
        self.missing_group = missing_group
        self.listed: list[str] = []

    async def list_pages(self, ref, namespace=None, **_):
        if ref.group == self.missing_group:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self.listed.append(ref.plural)
        yield [], "1"

    async def watch(self, *args, **kwargs):
        await asyncio.sleep(3600)
        yield {}


async def test_a_missing_api_is_listed_as_empty_and_a_resync_still_ends():
    pm = get_plugin_manager()
    runtime = Runtime(Settings(), build_controllers(pm), pm)
    runtime.ctx.kube = PartialCluster("gateway.networking.k8s.io")
    tasks = [asyncio.create_task(r.run()) for r in runtime._make_reflectors()]
    try:
        for reflector in runtime.reflectors:
            await asyncio.wait_for(reflector.listed.wait(), 5)
        assert "aimservices" in runtime.ctx.kube.listed and "httproutes" not in runtime.ctx.kube.listed
        await asyncio.wait_for(runtime.resync(), 5)
        assert runtime.ctx.kube.listed.count("aimservices") == 2
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
