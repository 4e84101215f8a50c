"""The operator's watch streams when the API server restarts: they resume from their last version.

The operator talks to the API server through a proxy the test takes away
(every open connection cut, new ones refused, as an API server that restarts
does) and brings back. Every stream resumes from the resourceVersion it had
reached: what changed meanwhile (a deletion too) is replayed by the server and
nothing is listed again (client-go's reflectors do the same; before, every
stream of every replica listed everything from etcd the moment the server came back).
"""

from __future__ import annotations

import asyncio

import pytest

from aim_core.kube import USER_AGENT
from aim_core.reconcile.resources import RUNTIME_CONFIGS
from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


def config(name: str) -> dict:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"env": [{"name": "HF_HOME", "value": "/c"}]},
    }


def ready(obj: dict | None) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in ((obj or {}).get("status") or {}).get("conditions", [])
    )


async def team(kube) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})


async def create(api, kube, body: dict) -> None:
    response = await api.post(kube.path(RC, "team"), json=body)
    assert response.status_code in (200, 201), response.text


async def test_streams_resume_after_an_api_server_restart_without_listing(kube, api, proxy, behind_proxy):
    store = behind_proxy.runtime.store
    await team(kube)
    await create(api, kube, config("old"))
    await eventually(lambda: ready(kube.get(RC, "team", "old")))
    streams = len(behind_proxy.runtime.reflectors)
    mark = kube.mark()

    proxy.down()  # the API server restarts: every watch is cut, nothing answers for a while
    await create(api, kube, config("new"))  # meanwhile (straight to the server, not through the proxy)
    assert (await api.delete(kube.path(RC, "team", "old"))).status_code == 200
    await asyncio.sleep(1.5)
    proxy.up()

    await eventually(lambda: ready(kube.get(RC, "team", "new")), timeout=20)  # reconciled after the restart
    await eventually(lambda: store.get(RUNTIME_CONFIGS, "team", "old") is None)  # the deletion was replayed
    # every stream came back by watching from where it was; not one listed again
    await eventually(lambda: kube.count("watch", since=mark, agent=USER_AGENT) >= streams, timeout=20)
    assert kube.count("list", since=mark, agent=USER_AGENT) == 0
    assert all(r.lists == 1 for r in behind_proxy.runtime.reflectors)


@pytest.mark.emulator_only("kmock's fault injection answers the watch requests with 503 for a while")
async def test_streams_resume_after_the_server_answered_watches_with_503(kube, api, proxy, behind_proxy):
    await team(kube)
    failing = True
    kube[lambda request: failing and request.params.get("watch") == "true"] << 503
    mark = kube.mark()
    proxy.down()  # cut the open watches: they are reopened and refused with 503 until the server recovers
    proxy.up()
    reflectors = behind_proxy.runtime.reflectors
    await eventually(lambda: sum(r.failures for r in reflectors) >= len(reflectors), timeout=10)
    await create(api, kube, config("during"))
    failing = False

    await eventually(lambda: ready(kube.get(RC, "team", "during")), timeout=20)
    assert kube.count("list", since=mark, agent=USER_AGENT) == 0
    assert all(r.lists == 1 for r in reflectors)
