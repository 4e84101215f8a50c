"""Part 2 of bench_modelsources.py: what one sync costs against a real registry on loopback.

The controller runs on the real engine against the in-process API emulator; the
registry is Debian's ``docker-registry`` behind a front that pages tag lists
100 at a time and logs every request. One wildcard filter covers every
repository. Three phases:

* ``first``: the first sync, creating the models;
* ``between``: a reconcile before the interval is up (what a model's change causes);
* ``unchanged``: the next sync, after the interval, of a registry that did not change.
"""

from __future__ import annotations

import datetime
from typing import Any

import kmock

from aim_core.api.crds import generate_crds
from aim_core.kube import Credentials, Kube
from aim_core.modelsource.controller import ClusterModelSourceController
from aim_core.modelsource.runner import SyncRunner
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.resources import CLUSTER_MODEL_SOURCES, CLUSTER_MODELS
from aim_core.registry import close_clients
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from aim_testing.emulator import Emulator, declare_resources
from aim_testing.registry import Registry, RegistryFront, RegistryServer, find_registry_binary
from benchmarks.harness import QuickServer

START = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC)
PAGE_SIZE = 100


class _Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime.datetime:
        return self.now


async def bench_sync(repositories: int, tags: int) -> dict[str, Any]:
    if find_registry_binary() is None:
        return {"sync_skipped": "docker-registry is not installed (./scripts/setup installs it)"}
    server = RegistryServer().start()
    front = RegistryFront(server.url, page_size=PAGE_SIZE).start()
    registry = Registry(front.url, storage=server.storage)
    try:
        for i in range(repositories):
            repo = f"bench/aim-{i:03d}"
            pushed = registry.push_image(repo, "latest")
            registry.add_tags(
                repo,
                pushed.digest,
                [f"0.{k}.{j}" for k in range(max(tags // 100, 1)) for j in range(min(tags, 100))][: tags - 1],
            )
        emulator = declare_resources(Emulator(), crds=generate_crds())
        async with emulator, kmock.Server(emulator, server_cls=QuickServer) as http:
            url = str(http.url).rstrip("/")
            client = Kube(Credentials(server=url, insecure=True))
            plugins = get_plugin_manager(only=["registry_oci"], disabled=())
            clock = _Clock()
            controller = ClusterModelSourceController(SyncRunner(clock=clock))
            store = Store()
            engine = Engine(Context(store, client, plugins, "aim-system"), [controller])
            body = {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMClusterModelSource",
                "metadata": {"name": "bench"},
                "spec": {
                    "filters": [{"image": f"{front.host}/bench/aim-*", "versions": [">=0.1.90", "<0.2.0"]}],
                    "maxModels": 10000,
                    "syncInterval": "1h",
                },
            }
            await client.create(CLUSTER_MODEL_SOURCES, body)

            async def phase() -> dict[str, Any]:
                front.log.clear()
                mark = len(emulator.calls)
                for ref in engine.resources():
                    store.replace_all(ref, await client.list(ref))
                listed = len(emulator.calls)
                await engine.reconcile(controller, None, "bench")
                await engine.events.flush()  # its Events, as the operator's senders post them
                calls = emulator.calls[listed:]
                writes = [c for c in calls if c.verb not in ("get", "list", "watch")]
                verbs: dict[str, int] = {}
                for c in writes:
                    key = f"{c.verb} {c.resource.rsplit('/', 1)[-1] if c.resource else '?'}" + (
                        f"/{c.subresource}" if c.subresource else ""
                    )
                    verbs[key] = verbs.get(key, 0) + 1
                del mark
                return {
                    "registry_requests": len(front.log),
                    "api_writes": len(writes),
                    "api_write_verbs": verbs,
                    "api_reads": len(calls) - len(writes),
                    "models_created": sum(
                        1
                        for c in writes
                        if c.verb in ("apply", "create") and c.resource and c.resource.endswith("aimclustermodels")
                    ),
                }

            first = await phase()
            between = await phase()
            clock.now += datetime.timedelta(hours=1)
            unchanged = await phase()
            models = len(await client.list(CLUSTER_MODELS))
            await close_clients(plugins)
            await client.aclose()
        return {
            "sync": {
                "repositories": repositories,
                "tags_per_repository": tags,
                "page_size": PAGE_SIZE,
                "models": models,
                "first": first,
                "between": between,
                "unchanged": unchanged,
            }
        }
    finally:
        registry.close()
        front.stop()
        server.stop()
