"""The model-source controller on the real engine against the API emulator, with registries
provided by a throwaway ``aim_registry_client`` plugin (or a real registry on loopback)."""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Callable
from typing import Any

import attrs

from aim_core.kube import Kube
from aim_core.modelsource.controller import ClusterModelSourceController
from aim_core.modelsource.runner import SyncRunner
from aim_core.plugin.hookspecs import hookimpl
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.resources import CLUSTER_MODEL_SOURCES
from aim_core.registry import RegistryError
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from tests.modelsource.docexamples import CATALOG

SOURCES = "aim.eai.amd.com/v1alpha1/aimclustermodelsources"
MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
START = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)


class MemoryClient:
    """A registry client answering from a catalog; records what it was asked and with which credentials."""

    def __init__(self, plugin: MemoryRegistries, registry: str) -> None:
        self.plugin, self.registry, self.name = plugin, registry, f"memory:{registry}"

    def _maybe_fail(self, what: str) -> None:
        error = self.plugin.failures.get(self.registry)
        if error is not None:
            raise error

    async def list_tags(self, repository, credentials):
        self.plugin.requests.append(("tags", self.registry, repository, credentials))
        self._maybe_fail(repository)
        repos = self.plugin.catalog[self.registry]
        if repository not in repos:
            raise RegistryError(
                "not_found",
                f"repository {repository} not found on {self.registry}",
                registry=self.registry,
                image=repository,
            )
        return list(repos[repository])

    async def list_repositories(self, pattern, credentials):
        self.plugin.requests.append(("repositories", self.registry, pattern, credentials))
        self._maybe_fail(pattern)
        return sorted(self.plugin.catalog[self.registry])

    async def image_info(self, image, credentials):  # pragma: no cover - not used by model sources
        raise RegistryError("invalid", "not supported", registry=self.registry)


class MemoryRegistries:
    """Plugin: the hosts of a catalog, answered from memory."""

    def __init__(self, catalog: dict[str, dict[str, list[str]]] | None = None) -> None:
        self.catalog = catalog if catalog is not None else CATALOG
        self.requests: list[tuple[str, str, str, Any]] = []
        self.failures: dict[str, Exception] = {}

    @hookimpl
    def aim_registry_client(self, registry: str) -> MemoryClient | None:
        return MemoryClient(self, registry) if registry in self.catalog else None


def pull_secret(name: str, host: str, username: str, password: str, namespace: str = "aim-system") -> dict[str, Any]:
    config = {"auths": {host: {"username": username, "password": password}}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": {"name": name, "namespace": namespace},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }


@attrs.define
class Clock:
    now: datetime.datetime = START

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += datetime.timedelta(**delta)


@attrs.define
class Harness:
    kube: Any  # the emulator fixture
    client: Kube
    store: Store
    controller: ClusterModelSourceController
    engine: Engine
    clock: Clock
    plugins: Any

    async def refresh(self) -> None:
        for ref in self.engine.resources():  # what the operator's watches would have delivered
            self.store.replace_all(ref, await self.client.list(ref))

    async def reconcile(self, name: str) -> float | str | None:
        await self.refresh()
        result = await self.engine.reconcile(self.controller, None, name)
        await self.engine.events.flush()  # its Events, as the operator's senders post them
        await self.refresh()
        return result

    async def create(self, api: Any, source: dict[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in source.items() if k != "status"}
        body["metadata"] = {"name": source["metadata"]["name"]}
        response = await api.post(self.kube.path(SOURCES), json=body)
        assert response.status_code in (200, 201), response.text
        return response.json()

    def source(self, name: str) -> dict[str, Any]:
        return self.kube.get(SOURCES, None, name)

    def models(self, source: str | None = None) -> dict[str, dict[str, Any]]:
        selector = f"aim.eai.amd.com/model-source={source}" if source else None
        return {m["metadata"]["name"]: m for m in self.kube.list(MODELS, label_selector=selector)}


def make_harness(
    kube: Any, client: Kube, plugin: Any, *, clock: Clock | None = None, catalog: Callable[[Any], Any] | None = None
) -> Harness:
    plugins = get_plugin_manager(load_entrypoints=False)
    plugins.register(plugin, name="test-registries")
    clock = clock or Clock()
    store = Store()
    controller = ClusterModelSourceController(SyncRunner(catalog, clock=clock))
    engine = Engine(Context(store, client, plugins, "aim-system"), [controller])
    return Harness(kube, client, store, controller, engine, clock, plugins)


__all__ = ["CLUSTER_MODEL_SOURCES", "Clock", "Harness", "MemoryRegistries", "make_harness", "pull_secret"]
