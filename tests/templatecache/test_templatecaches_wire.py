"""The template-cache controller run by the real engine over HTTP against the API emulator (F66-F69, F15)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest_asyncio

from aim_core.kube import Credentials, Kube
from aim_core.reconcile import naming
from aim_core.reconcile.resources import ARTIFACTS, NAMESPACES, TEMPLATE_CACHES
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from aim_core.templatecache.controller import TemplateCacheController
from tests.wire.conftest import eventually

NS = "ml-team"
ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
CACHES = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
TINY = {"modelId": "sshleifer/tiny-gpt2", "sourceUri": "hf://sshleifer/tiny-gpt2"}
HOLD = "test.aim.eai.amd.com/hold"  # a finalizer of the test's own, to keep an object while it looks
QWEN = {"modelId": "Qwen/Qwen3-0.6B", "sourceUri": "hf://Qwen/Qwen3-0.6B"}


@attrs.define
class Harness:
    """One controller, a store filled by listing the emulator, and the real engine."""

    kube: Any  # the emulator fixture
    client: Kube
    store: Store
    controller: TemplateCacheController
    engine: Engine

    async def reconcile(self, name: str = "tc") -> None:
        for ref in self.engine.resources():  # what the operator's watches would have delivered
            self.store.replace_all(ref, await self.client.list(ref))
        await self.engine.reconcile(self.controller, NS, name)
        await self.engine.events.flush()  # its Events, as the operator's senders post them

    def artifacts(self) -> dict[str, dict[str, Any]]:
        return {a["metadata"]["name"]: a for a in self.kube.list(ART, NS)}

    async def set_artifact_status(self, name: str, status: str, **extra: Any) -> None:
        await self.client.patch(ARTIFACTS, NS, name, {"status": {"status": status, **extra}}, subresource="status")


@pytest_asyncio.fixture()
async def harness(kube) -> AsyncIterator[Harness]:
    client = Kube(Credentials(server=kube.url, insecure=True))
    store, controller = Store(), TemplateCacheController()
    engine = Engine(Context(store, client, None, "aim-system"), [controller])
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMServiceTemplate",
            "metadata": {"name": "tmpl", "namespace": NS},
            "spec": {"modelName": "m"},
            "status": {
                "status": "Ready",
                "modelSources": [TINY, QWEN],
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "AllComponentsReady",
                        "message": "",
                        "lastTransitionTime": "2025-01-01T00:00:00Z",
                    }
                ],
            },
        }
    )
    yield Harness(kube, client, store, controller, engine)
    await client.aclose()


def make_cache(mode: str = "Shared") -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMTemplateCache",
        "metadata": {"name": "tc", "namespace": NS},
        "spec": {"templateName": "tmpl", "templateScope": "Namespace", "mode": mode, "storageClassName": "nfs"},
    }


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


async def test_shared_cache_lifecycle_on_the_wire(harness: Harness):
    kube = harness.kube
    kube.put_object(make_cache())
    await harness.reconcile()

    cache = kube.get(CACHES, NS, "tc")
    assert cache["metadata"]["finalizers"] == ["aim.eai.amd.com/artifactcleanup"]
    arts = harness.artifacts()
    tiny, qwen = naming.artifact_name(TINY["sourceUri"], [], "nfs"), naming.artifact_name(QWEN["sourceUri"], [], "nfs")
    assert set(arts) == {tiny, qwen}
    labels = arts[tiny]["metadata"]["labels"]
    assert labels["template-created"] == "true" and labels["aim.eai.amd.com/template-cache.name"] == "tc"
    assert labels["app.kubernetes.io/managed-by"] == "aim-template-cache-controller"
    assert "ownerReferences" not in arts[tiny]["metadata"]  # Shared: artifacts outlive the cache
    spec = {k: v for k, v in arts[tiny]["spec"].items() if k != "modelDownloadImage"}  # the CRD's default
    assert spec == {"sourceUri": TINY["sourceUri"], "modelId": TINY["modelId"], "storageClassName": "nfs"}
    managers = {m["manager"] for m in arts[tiny]["metadata"]["managedFields"]}
    assert managers == {"aim-template-cache-controller"}
    assert cache["status"]["status"] == "Progressing"
    assert condition(cache, "ArtifactsReady")["reason"] == "CreatingCaches"

    # The artifacts exist but have no status yet: nothing is applied again.
    mark = kube.mark()
    await harness.reconcile()
    assert kube.count("apply", resource="aimartifacts", since=mark) == 0
    assert kube.get(CACHES, NS, "tc")["status"]["artifacts"][tiny]["status"] == "Pending"

    # Downloads finish: the cache turns Ready and lists the volumes.
    await harness.set_artifact_status(tiny, "Ready", persistentVolumeClaim="tiny-pvc")
    await harness.set_artifact_status(qwen, "Ready", persistentVolumeClaim="qwen-pvc")
    await harness.reconcile()
    cache = kube.get(CACHES, NS, "tc")
    assert cache["status"]["status"] == "Ready"
    assert condition(cache, "ArtifactsReady")["reason"] == "AllCachesReady"
    assert cache["status"]["artifacts"][tiny] == {
        "name": tiny,
        "uid": arts[tiny]["metadata"]["uid"],
        "model": TINY["modelId"],
        "status": "Ready",
        "persistentVolumeClaim": "tiny-pvc",
    }

    # Steady state writes nothing.
    mark = kube.mark()
    await harness.reconcile()
    assert kube.writes(since=mark) == 0

    # One download fails; the cache says which and why.
    await harness.set_artifact_status(
        qwen,
        "Failed",
        conditions=[
            {
                "type": "Ready",
                "status": "False",
                "reason": "SourceNotFound",
                "message": "repository not found",
                "lastTransitionTime": "2025-01-01T00:00:00Z",
            }
        ],
    )
    await harness.reconcile()
    cache = kube.get(CACHES, NS, "tc")
    assert cache["status"]["status"] == "Failed"
    assert condition(cache, "ArtifactsReady")["reason"] == "SourceNotFound"
    assert "repository not found" in condition(cache, "Ready")["message"]

    # Deleting the cache removes the failed artifact, keeps the Ready one, and lets the cache go.
    await harness.client.delete(TEMPLATE_CACHES, NS, "tc")
    await harness.reconcile()
    assert kube.get(CACHES, NS, "tc") is None
    assert set(harness.artifacts()) == {tiny}


async def test_dedicated_cache_owns_its_artifacts(harness: Harness):
    kube = harness.kube
    kube.put_object(make_cache("Dedicated"))
    await harness.reconcile()
    uid = kube.get(CACHES, NS, "tc")["metadata"]["uid"]
    arts = harness.artifacts()
    assert set(arts) == {naming.artifact_name(s["sourceUri"], [], "nfs", dedicated_to="tc") for s in (TINY, QWEN)}
    for art in arts.values():
        (owner,) = art["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == ("AIMTemplateCache", uid, True)

    # Ready dedicated artifacts are kept by the finalizer but garbage-collected with their owner.
    for name in arts:
        await harness.set_artifact_status(name, "Ready")
    await harness.client.delete(TEMPLATE_CACHES, NS, "tc")
    await harness.reconcile()
    assert kube.get(CACHES, NS, "tc") is None
    await eventually(lambda: harness.artifacts() == {})  # the garbage collector's work: a moment later on a real one


async def test_terminating_namespace_skips_cleanup(harness: Harness):
    kube = harness.kube
    kube.put_object(make_cache())
    await harness.reconcile()
    assert len(harness.artifacts()) == 2
    assert kube.get(CACHES, NS, "tc")["metadata"]["finalizers"] == ["aim.eai.amd.com/artifactcleanup"]
    for name in harness.artifacts():  # held while the test looks: the namespace controller deletes them too
        await harness.client.patch(ARTIFACTS, NS, name, {"metadata": {"finalizers": [HOLD]}})
    mark = kube.mark()
    await harness.client.delete(NAMESPACES, None, NS)  # Terminating; the namespace controller deletes its contents
    await eventually(lambda: kube.get(CACHES, NS, "tc")["metadata"]["deletionTimestamp"])
    await harness.reconcile()
    assert kube.get(CACHES, NS, "tc") is None  # the finalizer was dropped
    assert kube.count("delete", resource="aimartifacts", since=mark) == 0
    assert len(harness.artifacts()) == 2  # still there (held), and not deleted by the operator
    for name in harness.artifacts():
        await harness.client.patch(ARTIFACTS, NS, name, {"metadata": {"finalizers": None}})
    await eventually(
        lambda: kube.get("v1/namespaces", None, NS) is None, timeout=30
    )  # the namespace deletion took them


async def test_missing_template_fails_without_creating_anything(harness: Harness):
    kube = harness.kube
    cache = make_cache()
    cache["spec"]["templateName"] = "nope"
    kube.put_object(cache)
    await harness.reconcile()
    obj = kube.get(CACHES, NS, "tc")
    assert obj["status"]["status"] == "Failed"
    assert condition(obj, "ServiceTemplateReady")["reason"] == "ReferenceNotFound"
    assert harness.artifacts() == {}
    assert any(e["reason"] == "ReferenceNotFound" for e in kube.events_for("tc", NS))
