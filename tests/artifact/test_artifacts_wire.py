"""The artifact controller run by the real engine over HTTP against the API emulator (F70-F76).

The test plays the kubelet and the Job controller: it creates the pods a Job
would run, sets their phase and log, and marks Jobs Complete or Failed
through the status subresource, as a real cluster would.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import attrs
import pytest
import pytest_asyncio

from aim_core.artifact.controller import ArtifactController
from aim_core.kube import Credentials, Kube
from aim_core.reconcile import naming
from aim_core.reconcile.resources import ARTIFACTS, JOBS, PODS, PVCS, TEMPLATE_CACHES
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from aim_core.templatecache.controller import TemplateCacheController
from tests.wire.conftest import eventually

NS = "ml-team"
ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
CACHES = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
CRC = "aim.eai.amd.com/v1alpha1/aimclusterruntimeconfigs"
IMAGE = "registry.example/aim-downloader:1"


@attrs.define
class Harness:
    kube: Any
    client: Kube
    store: Store
    engine: Engine

    async def reconcile(self, name: str, controller: str = "artifact", namespace: str = NS) -> Any:
        """One reconcile; returns the engine's requeue hint (seconds, "backoff" or None)."""
        for ref in self.engine.resources():  # what the operator's watches would have delivered
            self.store.replace_all(ref, await self.client.list(ref))
        result = await self.engine.reconcile(self.engine.controllers[controller], namespace, name)
        await self.engine.events.flush()  # its Events, as the operator's senders post them
        return result

    def artifact(self, name: str) -> dict[str, Any]:
        return self.kube.get(ART, NS, name)

    def names(self, name: str) -> dict[str, str]:
        uid = self.artifact(name)["metadata"]["uid"]
        return {
            "pvc": naming.artifact_pvc_name(name, uid),
            "download": naming.download_job_name(name, uid),
            "check": naming.check_size_job_name(name, uid),
        }

    async def job_status(self, name: str, **status: Any) -> None:
        await self.client.patch(JOBS, NS, name, {"status": status}, subresource="status")

    def run_pod(self, job_name: str, pod_name: str, phase: str, log: str = "", exit_code: int | None = None) -> None:
        """A pod of ``job_name`` as the Job controller and the kubelet would make it."""
        job = self.kube.get("batch/v1/jobs", NS, job_name)
        template = job["spec"]["template"]
        labels = {**template["metadata"]["labels"], "job-name": job_name}
        status: dict[str, Any] = {"phase": phase}
        if exit_code is not None:
            status["containerStatuses"] = [
                {
                    "name": template["spec"]["containers"][0]["name"],
                    "image": "x",
                    "state": {"terminated": {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}},
                }
            ]
        self.kube.put_object(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "namespace": NS,
                    "labels": labels,
                    "ownerReferences": [
                        {"apiVersion": "batch/v1", "kind": "Job", "name": job_name, "uid": job["metadata"]["uid"]}
                    ],
                },
                "spec": copy.deepcopy(template["spec"]),
                "status": status,
            }
        )
        if log:
            self.kube.set_log(NS, pod_name, log)

    async def bind(self, pvc: str) -> None:
        """What the volume controller does once the first consumer is scheduled."""
        await self.client.patch(PVCS, NS, pvc, {"status": {"phase": "Bound"}}, subresource="status")

    async def downloader_reports(self, name: str, percentage: int) -> None:
        """What the download pod patches (2.13), with the namespace's default ServiceAccount."""
        await self.client.patch(
            ARTIFACTS,
            NS,
            name,
            {
                "status": {
                    "progress": {"percentage": percentage, "displayPercentage": f"{percentage} %"},
                    "download": {
                        "protocol": "XET",
                        "attempt": 1,
                        "totalAttempts": 2,
                        "protocolSequence": "XET,HF_TRANSFER",
                    },
                }
            },
            subresource="status",
        )


@pytest_asyncio.fixture()
async def harness(kube) -> AsyncIterator[Harness]:
    client = Kube(Credentials(server=kube.url, insecure=True))
    store = Store()
    engine = Engine(Context(store, client, None, "aim-system"), [ArtifactController(IMAGE), TemplateCacheController()])
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    yield Harness(kube, client, store, engine)
    await client.aclose()


def make_artifact(name: str = "tiny", uri: str = "hf://sshleifer/tiny-gpt2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMArtifact",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"sourceUri": uri, **spec},
    }


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


def jobs(kube) -> dict[str, dict[str, Any]]:
    return {j["metadata"]["name"]: j for j in kube.list("batch/v1/jobs", NS)}


async def test_hf_artifact_from_size_check_to_ready(harness: Harness):
    kube = harness.kube
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "default", "namespace": NS},
            "spec": {"env": [{"name": "HF_ENDPOINT", "value": "https://hf.example"}]},
        }
    )
    kube.put_object(make_artifact())
    await harness.reconcile("tiny")
    n = harness.names("tiny")

    # 1. size unknown: only the size check
    assert list(jobs(kube)) == [n["check"]]
    check = jobs(kube)[n["check"]]
    assert check["spec"]["template"]["spec"]["containers"][0]["command"] == [
        "/check-size.sh",
        "hf://sshleifer/tiny-gpt2",
    ]
    assert check["metadata"]["ownerReferences"][0]["name"] == "tiny"
    assert kube.list("v1/persistentvolumeclaims", NS) == [] and kube.list("rolebindings", NS) == []
    art = harness.artifact("tiny")
    assert art["status"]["status"] == "Progressing" and art["status"]["mode"] == "Shared"

    # 2. the size check prints its JSON line and completes
    harness.run_pod(
        n["check"],
        "check-1",
        "Succeeded",
        'fetching\n{"url":"hf://sshleifer/tiny-gpt2","sizeBytes":2469200}\n',
        exit_code=0,
    )
    await harness.job_status(n["check"], conditions=[{"type": "Complete", "status": "True"}], succeeded=1)
    await harness.reconcile("tiny")
    art = harness.artifact("tiny")
    assert art["status"]["discoveredSizeBytes"] == 2469200 and art["status"]["displaySize"] == "2.4 MiB"
    (claim,) = kube.list("v1/persistentvolumeclaims", NS)
    assert claim["metadata"]["name"] == n["pvc"] and claim["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert claim["metadata"]["ownerReferences"][0]["uid"] == art["metadata"]["uid"]
    (binding,) = kube.list("rolebindings", NS)
    assert binding["metadata"]["name"] == "aim-engine-artifact-status-updater"
    assert not binding["metadata"].get("ownerReferences")
    assert art["status"]["persistentVolumeClaim"] == n["pvc"] and art["status"]["allocatedSize"] == "1Gi"

    # 3. PVC and RoleBinding exist: the download Job
    await harness.reconcile("tiny")
    download = jobs(kube)[n["download"]]
    container = download["spec"]["template"]["spec"]["containers"][0]
    assert container["name"] == "model-download" and container["image"] == IMAGE
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["EXPECTED_SIZE_BYTES"] == "2469200" and env["HF_ENDPOINT"] == "https://hf.example"

    # steady state while nothing changes: no write at all (every status field the plan sets survives
    # the server's schema pruning, so no patch is re-sent)
    await harness.reconcile("tiny")  # takes in the Job it created
    mark = kube.mark()
    await harness.reconcile("tiny")
    assert kube.writes(since=mark) == 0, [
        (c.verb, c.resource, c.name, c.subresource) for c in kube.calls[mark:] if c.verb not in ("get", "list")
    ]

    # 4. downloading, then all bytes there: Verifying
    harness.run_pod(n["download"], "download-1", "Running")
    await harness.bind(n["pvc"])
    await harness.downloader_reports("tiny", 42)
    await harness.reconcile("tiny")
    art = harness.artifact("tiny")
    assert condition(art, "DownloadComplete")["reason"] == "Downloading"
    assert art["status"]["progress"]["percentage"] == 42  # the downloader's field is left alone
    await harness.downloader_reports("tiny", 100)
    await harness.reconcile("tiny")
    assert condition(harness.artifact("tiny"), "DownloadComplete")["reason"] == "Verifying"

    # 5. the Job completes: Ready
    harness.run_pod(n["download"], "download-1", "Succeeded", exit_code=0)
    await harness.job_status(n["download"], conditions=[{"type": "Complete", "status": "True"}], succeeded=1)
    await harness.reconcile("tiny")
    art = harness.artifact("tiny")
    assert art["status"]["status"] == "Ready"
    assert condition(art, "DownloadComplete")["reason"] == "Verified"
    assert art["status"]["progress"]["displayPercentage"] == "100 %"
    assert art["status"]["download"]["message"] == "Complete" and art["status"]["download"]["protocol"] == "XET"
    reasons = {e["reason"] for e in kube.events_for("tiny", NS)}
    assert {"Verified", "AllComponentsReady"} <= reasons

    # 6. the Job expires (TTL): still Ready, nothing recreated, nothing written
    await harness.client.delete(JOBS, NS, n["download"])
    await harness.reconcile("tiny")
    mark = kube.mark()
    await harness.reconcile("tiny")
    assert harness.artifact("tiny")["status"]["status"] == "Ready"
    assert n["download"] not in jobs(kube)
    assert kube.writes(since=mark) == 0


async def test_s3_artifact_with_a_size_skips_the_check(harness: Harness):
    kube = harness.kube
    kube.put_object(
        make_artifact(
            "weights",
            "s3://models/llama/7b",
            size="20Gi",
            storageClassName="nfs",
            env=[{"name": "AWS_ENDPOINT_URL", "value": "http://minio:9000"}],
        )
    )
    await harness.reconcile("weights")
    await harness.reconcile("weights")
    n = harness.names("weights")
    assert list(jobs(kube)) == [n["download"]]
    (claim,) = kube.list("v1/persistentvolumeclaims", NS)
    assert claim["spec"]["resources"]["requests"]["storage"] == "22Gi" and claim["spec"]["storageClassName"] == "nfs"
    env = {
        e["name"]: e.get("value") for e in jobs(kube)[n["download"]]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["AWS_ENDPOINT_URL"] == "http://minio:9000"


@pytest.mark.parametrize(
    "log, reason, ready",
    [
        ("An error occurred (InvalidAccessKeyId) when calling the ListObjectsV2 operation", "AuthError", "AuthError"),
        ("ERROR: S3 error: 404 (NoSuchBucket): The specified bucket does not exist", "SourceNotFound", "InvalidSpec"),
        ("OSError: [Errno 28] No space left on device", "StorageFull", "StorageFull"),
    ],
)
async def test_failed_download_reports_why(harness: Harness, log: str, reason: str, ready: str):
    kube = harness.kube
    kube.put_object(make_artifact("weights", "s3://models/llama", size="1Gi"))
    await harness.reconcile("weights")
    await harness.reconcile("weights")
    n = harness.names("weights")
    harness.run_pod(n["download"], "download-1", "Failed", log, exit_code=1)
    await harness.job_status(
        n["download"],
        failed=3,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    )
    await harness.reconcile("weights")
    art = harness.artifact("weights")
    assert art["status"]["status"] == "Failed"
    assert condition(art, "DownloadJobPodsReady")["reason"] == reason
    assert condition(art, "Ready")["reason"] == ready
    assert condition(art, "DownloadComplete")["status"] == "False"
    assert art["status"]["progress"]["displayPercentage"] == "N/A"
    assert any(e["reason"] == reason and e["type"] == "Warning" for e in kube.events_for("weights", NS))
    assert any(e["reason"] == "JobBackoffLimitExceeded" for e in kube.events_for("weights", NS))
    # the failed Job is not replaced until it expires (Q17); then a new attempt starts
    mark = kube.mark()
    await harness.reconcile("weights")
    assert kube.count("create", "apply", resource="jobs", since=mark) == 0
    await harness.client.delete(JOBS, NS, n["download"])
    await harness.reconcile("weights")
    assert n["download"] in jobs(kube)
    assert harness.artifact("weights")["status"]["status"] == "Progressing"


@pytest.mark.parametrize(
    "spec, why",
    [
        ({"size": "-1Gi"}, "negative"),
        ({"uri": "hf://org/../secrets"}, "'..'"),
        ({"downloadFilter": {"include": ["[unclosed"]}}, "unclosed"),
        ({"downloadFilter": {"exclude": ["../../etc/*"]}}, "outside the repository"),
        ({"size": "1Gi", "runtimeConfigName": "missing"}, "not found"),
    ],
)
async def test_hostile_spec_is_refused_without_children_or_retries(harness: Harness, spec: dict[str, Any], why: str):
    kube = harness.kube
    spec = dict(spec)
    kube.put_object(make_artifact("bad", spec.pop("uri", "hf://org/model"), **spec))
    requeue = await harness.reconcile("bad")
    art = harness.artifact("bad")
    assert art["status"]["status"] == "Failed"
    assert condition(art, "Ready")["reason"] in ("InvalidSpec", "ReferenceNotFound")
    assert why in condition(art, "Ready")["message"]
    assert jobs(kube) == {} and kube.list("v1/persistentvolumeclaims", NS) == []
    assert requeue is None  # waits for a change of the spec or the config, no retry loop
    mark = kube.mark()
    assert await harness.reconcile("bad") is None
    assert kube.writes(since=mark) == 0


def _quota(cluster: str | None = None, namespace: str | None = None) -> dict[str, Any]:
    quota = {k: v for k, v in (("clusterLimit", cluster), ("defaultNamespaceLimit", namespace)) if v}
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": "default"},
        "spec": {"artifactStorageQuota": quota},
    }


def _stored(name: str, gib: int, **spec: Any) -> dict[str, Any]:
    """A Ready artifact that holds a PVC of ``gib`` GiB."""
    art = make_artifact(name, f"hf://org/{name}", size=f"{gib}Gi", **spec)
    art["status"] = {
        "status": "Ready",
        "allocatedSize": f"{gib}Gi",
        "persistentVolumeClaim": f"{name}-pvc",
        "lastUsed": "2026-01-01T00:00:00Z",
    }
    return art


async def test_quota_refuses_a_pvc_and_says_why(harness: Harness):
    kube = harness.kube
    kube.put_object(_quota(namespace="10Gi"))
    kube.put_object(_stored("kept", 5))  # no retention priority: never evicted
    kube.put_object(make_artifact("big", size="8Gi"))
    await harness.reconcile("big")
    art = harness.artifact("big")
    assert kube.list("v1/persistentvolumeclaims", NS) == [] and jobs(kube) == {}
    pvc = condition(art, "CachePvcReady")
    assert pvc["reason"] == "StorageQuotaExceeded" and "limit of 10 GiB" in pvc["message"]
    assert art["status"]["status"] == "Pending"
    assert harness.artifact("kept") is not None
    # raising the limit lets it through
    kube.put_object(_quota(namespace="20Gi"))
    await harness.reconcile("big")
    assert len(kube.list("v1/persistentvolumeclaims", NS)) == 1


def _listed(harness: Harness, name: str) -> dict[str, Any]:
    """A template cache's status entry for a Ready artifact (model and uid are required by the CRD)."""
    return {"name": name, "model": f"org/{name}", "uid": harness.artifact(name)["metadata"]["uid"], "status": "Ready"}


async def test_eviction_frees_space_lowest_priority_then_least_recently_used(harness: Harness):
    kube = harness.kube
    kube.put_object(_quota(cluster="20Gi"))
    kube.put_object(_stored("a-recent", 6, retentionPriority=0))
    await harness.client.patch(
        ARTIFACTS, NS, "a-recent", {"status": {"lastUsed": "2026-01-02T00:00:00Z"}}, subresource="status"
    )
    kube.put_object(_stored("b-old", 6, retentionPriority=0))
    kube.put_object(_stored("c-important", 6, retentionPriority=9))
    # an idle Shared template cache that lists b-old (it would re-create it): evicted with it
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": "tc-old", "namespace": NS},
            "spec": {"templateName": "old-template", "templateScope": "Namespace", "mode": "Shared"},
            "status": {"status": "Ready", "artifacts": {"b-old": _listed(harness, "b-old")}},
        }
    )
    kube.put_object(make_artifact("new", size="5Gi"))  # 6Gi with headroom; 18 + 6 > 20
    await harness.reconcile("new")
    assert harness.artifact("b-old") is None and kube.get(CACHES, NS, "tc-old") is None
    assert harness.artifact("a-recent") is not None
    assert harness.artifact("c-important") is not None
    assert condition(harness.artifact("new"), "CachePvcReady")["reason"] == "EvictingArtifacts"
    assert kube.list("v1/persistentvolumeclaims", NS) == []
    await harness.reconcile("new")
    (claim,) = kube.list("v1/persistentvolumeclaims", NS)
    assert claim["metadata"]["name"] == harness.names("new")["pvc"]


async def test_artifacts_a_service_uses_are_not_evicted_and_their_last_use_is_kept(harness: Harness):
    kube = harness.kube
    kube.put_object(_quota(cluster="10Gi"))
    kube.put_object(_stored("used", 8, retentionPriority=0))
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": "tc", "namespace": NS},
            "spec": {"templateName": "tmpl", "templateScope": "Namespace"},
            "status": {"status": "Ready", "artifacts": {"used": _listed(harness, "used")}},
        }
    )
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": "chat", "namespace": NS},
            "spec": {"model": {"name": "m"}},
            "status": {"status": "Running", "cache": {"templateCacheRef": {"name": "tc"}}},
        }
    )
    kube.put_object(make_artifact("new", size="5Gi"))
    await harness.reconcile("new")
    assert harness.artifact("used") is not None
    assert condition(harness.artifact("new"), "CachePvcReady")["reason"] == "StorageQuotaExceeded"
    await harness.reconcile("used")
    assert harness.artifact("used")["status"]["lastUsed"] > "2026-01-01T00:00:00Z"


async def test_cache_finalizer_deletes_unready_artifacts_and_their_children_but_keeps_ready_ones(harness: Harness):
    """Q23: a deleted template cache takes its non-Ready artifacts (and their Jobs and PVCs) along."""
    kube = harness.kube
    labels = {"aim.eai.amd.com/template-cache.name": "tc", "template-created": "true"}
    for name in ("ready", "pending"):
        body = make_artifact(name, f"hf://org/{name}", size="1Gi")
        body["metadata"]["labels"] = labels
        kube.put_object(body)
        await harness.reconcile(name)
        await harness.reconcile(name)
    await harness.client.patch(ARTIFACTS, NS, "ready", {"status": {"status": "Ready"}}, subresource="status")
    assert len(kube.list("v1/persistentvolumeclaims", NS)) == 2
    assert (
        kube.list("v1/persistentvolumeclaims", NS)[0]["metadata"]["labels"]["aim.eai.amd.com/cache.type"]
        == "template-cache"
    )
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": "tc", "namespace": NS, "finalizers": ["aim.eai.amd.com/artifactcleanup"]},
            "spec": {"templateName": "tmpl", "templateScope": "Namespace"},
        }
    )
    await harness.client.delete(TEMPLATE_CACHES, NS, "tc")
    await harness.reconcile("tc", controller="template-cache")
    assert kube.get(CACHES, NS, "tc") is None
    assert harness.artifact("ready") is not None and harness.artifact("pending") is None

    def only_the_ready_ones_children_remain() -> bool:
        # a real cluster's garbage collector removes the dependents a moment later (the emulator at once)
        claims = {c["metadata"]["ownerReferences"][0]["name"] for c in kube.list("v1/persistentvolumeclaims", NS)}
        assert claims == {"ready"}
        assert {j["metadata"]["ownerReferences"][0]["name"] for j in jobs(kube).values()} == {"ready"}
        return True

    await eventually(only_the_ready_ones_children_remain)


async def _downloading(harness: Harness, name: str = "weights") -> dict[str, str]:
    harness.kube.put_object(make_artifact(name, "hf://org/model", size="1Gi"))
    await harness.reconcile(name)
    await harness.reconcile(name)
    n = harness.names(name)
    assert n["download"] in jobs(harness.kube)
    return n


async def test_download_pod_that_cannot_pull_its_image_is_explained_by_its_events(harness: Harness):
    kube = harness.kube
    n = await _downloading(harness)
    harness.run_pod(n["download"], "download-1", "Pending")
    pod = kube.get("v1/pods", NS, "download-1")
    await harness.client.patch(
        PODS,
        NS,
        "download-1",
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "model-download",
                        "image": IMAGE,
                        "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}},
                    }
                ]
            }
        },
        subresource="status",
    )
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "download-1.pull", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": "download-1", "namespace": NS, "uid": pod["metadata"]["uid"]},
            "reason": "Failed",
            "type": "Warning",
            "lastTimestamp": "2026-01-01T00:00:00Z",
            "message": f'Failed to pull image "{IMAGE}": 401 Unauthorized',
        }
    )
    await harness.reconcile("weights")
    art = harness.artifact("weights")
    assert condition(art, "DownloadJobPodsReady")["reason"] == "ImagePullAuthFailure"
    assert condition(art, "Ready")["reason"] == "AuthError" and art["status"]["status"] == "Failed"


async def test_download_pod_killed_for_memory(harness: Harness):
    n = await _downloading(harness)
    harness.run_pod(n["download"], "download-1", "Failed")
    await harness.client.patch(
        PODS,
        NS,
        "download-1",
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "model-download",
                        "image": IMAGE,
                        "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
                    }
                ]
            }
        },
        subresource="status",
    )
    await harness.reconcile("weights")
    art = harness.artifact("weights")
    assert condition(art, "DownloadJobPodsReady")["reason"] == "PodOOMKilled"
    assert art["status"]["status"] == "Failed"


async def test_size_check_with_unusable_output_fails_until_a_new_check_runs(harness: Harness):
    kube = harness.kube
    kube.put_object(make_artifact())
    await harness.reconcile("tiny")
    n = harness.names("tiny")
    harness.run_pod(n["check"], "check-1", "Succeeded", "Traceback (most recent call last):\nboom", exit_code=0)
    await harness.job_status(n["check"], conditions=[{"type": "Complete", "status": "True"}], succeeded=1)
    assert await harness.reconcile("tiny") is None  # no retry loop
    art = harness.artifact("tiny")
    assert condition(art, "CheckSizeOutputReady")["reason"] == "InvalidSizeOutput"
    assert "not JSON: boom" in condition(art, "CheckSizeOutputReady")["message"]
    assert art["status"]["status"] == "Failed" and kube.list("v1/persistentvolumeclaims", NS) == []
    # the Job expires: a new size check starts
    await harness.client.delete(JOBS, NS, n["check"])
    await harness.client.delete(PODS, NS, "check-1")
    await harness.reconcile("tiny")
    assert n["check"] in jobs(kube) and harness.artifact("tiny")["status"]["status"] == "Progressing"


async def test_an_artifact_whose_volume_a_running_pod_mounts_is_in_use(harness: Harness):
    """Q16: an inference pod keeps its volumes after its cache is gone; the artifact must not be evicted."""
    kube = harness.kube
    kube.put_object(_quota(cluster="10Gi"))
    kube.put_object(_stored("mounted", 8, retentionPriority=0))
    claim = harness.names("mounted")["pvc"]  # a complete Ready artifact: its real PVC, download verified
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": NS, "labels": {"aim.eai.amd.com/cache.name": "mounted"}},
            "spec": {"resources": {"requests": {"storage": "8Gi"}}},
            "status": {"phase": "Bound"},
        }
    )
    await harness.client.patch(
        ARTIFACTS,
        NS,
        "mounted",
        {
            "status": {
                "persistentVolumeClaim": claim,
                "conditions": [
                    {
                        "type": "DownloadComplete",
                        "status": "True",
                        "reason": "Verified",
                        "message": "",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
            }
        },
        subresource="status",
    )
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "chat-predictor-1",
                "namespace": NS,
                "labels": {"serving.kserve.io/inferenceservice": "chat"},
            },
            "spec": {
                "containers": [{"name": "kserve-container", "image": "x"}],
                "volumes": [{"name": "mounted", "persistentVolumeClaim": {"claimName": claim}}],
            },
            "status": {"phase": "Running"},
        }
    )
    kube.put_object(make_artifact("new", size="5Gi"))
    await harness.reconcile("new")
    assert harness.artifact("mounted") is not None
    assert condition(harness.artifact("new"), "CachePvcReady")["reason"] == "StorageQuotaExceeded"
    await harness.reconcile("mounted")
    assert harness.artifact("mounted")["status"]["status"] == "Ready"
    assert harness.artifact("mounted")["status"]["lastUsed"] > "2026-01-01T00:00:00Z"
    # the pod goes: the artifact is idle and may make room
    await harness.client.delete(PODS, NS, "chat-predictor-1")
    await harness.reconcile("new")
    assert harness.artifact("mounted") is None


async def test_an_artifact_a_service_lists_as_an_adapter_is_in_use_until_the_service_drops_it(harness: Harness):
    """Issue 22: ``status.adapters[].artifact`` is a reference; removing the adapter releases it."""
    kube = harness.kube
    kube.put_object(_quota(cluster="10Gi"))
    kube.put_object(_stored("sql-lora", 8, retentionPriority=0))
    claim = harness.names("sql-lora")["pvc"]  # a complete Ready artifact: its real PVC, download verified
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": NS, "labels": {"aim.eai.amd.com/cache.name": "sql-lora"}},
            "spec": {"resources": {"requests": {"storage": "8Gi"}}},
            "status": {"phase": "Bound"},
        }
    )
    await harness.client.patch(
        ARTIFACTS,
        NS,
        "sql-lora",
        {
            "status": {
                "persistentVolumeClaim": claim,
                "conditions": [
                    {
                        "type": "DownloadComplete",
                        "status": "True",
                        "reason": "Verified",
                        "message": "",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ],
            }
        },
        subresource="status",
    )
    adapter = {
        "name": "sql",
        "sourceUri": "hf://org/sql-lora",
        "artifact": "sql-lora",
        "state": "Ready",
        "reason": "Served",
    }
    svc = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": NS},
        "spec": {"model": {"name": "m"}, "adapters": [{"name": "sql", "sourceUri": "hf://org/sql-lora"}]},
        "status": {"status": "Running", "adapters": [adapter]},
    }
    kube.put_object(svc)
    kube.put_object(make_artifact("new", size="5Gi"))
    await harness.reconcile("new")
    assert harness.artifact("sql-lora") is not None
    assert condition(harness.artifact("new"), "CachePvcReady")["reason"] == "StorageQuotaExceeded"
    await harness.reconcile("sql-lora")
    assert harness.artifact("sql-lora")["status"]["status"] == "Ready"
    assert harness.artifact("sql-lora")["status"]["lastUsed"] > "2026-01-01T00:00:00Z"
    # the adapter is removed from the service (and its status): the artifact is idle and may make room
    kube.put_object({**svc, "spec": {"model": {"name": "m"}}, "status": {"status": "Running"}})
    await harness.reconcile("new")
    assert harness.artifact("sql-lora") is None


async def test_credentials_a_failed_download_printed_never_reach_status_or_events(harness: Harness):
    # issue 18: log lines of failed containers are quoted in conditions and Events; credentials are redacted
    from aim_testing.leaks import SecretScanner

    hf, password, aws = "hf_PlantedTokenMustNotLeak1234", "Pl4nted-Pa55word", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYPLANTED"
    scanner = SecretScanner().add("hf token", hf).add("password", password).add("aws secret", aws)
    kube = harness.kube
    kube.put_object(make_artifact("weights", "hf://org/model", size="1Gi"))
    await harness.reconcile("weights")
    await harness.reconcile("weights")
    n = harness.names("weights")
    log = (
        f"HF_TOKEN={hf} AWS_SECRET_ACCESS_KEY={aws}\n"
        f"GET https://bot:{password}@mirror.example.com/org/model failed\n"
        f"huggingface_hub.errors.HfHubHTTPError: 401 Client Error: Unauthorized (Authorization: Bearer {hf})\n"
    )
    harness.run_pod(n["download"], "download-1", "Failed", log, exit_code=1)
    await harness.job_status(
        n["download"],
        failed=3,
        conditions=[
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ],
    )
    await harness.reconcile("weights")

    art = harness.artifact("weights")
    assert art["status"]["status"] == "Failed"
    message = condition(art, "DownloadJobPodsReady")["message"]
    assert "401 Client Error" in message and "[REDACTED]" in message, message  # still says why
    events = kube.events_for("weights", NS)
    leaks = scanner.scan_value("artifact status", art["status"]) + scanner.scan_value("its Events", events)
    assert leaks == [], [str(leak) for leak in leaks]


@pytest.mark.parametrize(
    "log",
    [
        "2026-11-27 17:01:31,807 INFO hf://gpt2: 11 files\n" + '{"url": "hf://gpt2", "sizeBytes": 548118077}\n',
        '{"url": "hf://gpt2", "sizeBytes": 548118077}\n'
        + "2026-11-27 17:01:31,807 INFO hf://gpt2: 11 files\n"
        + "\n".join(f"2026-11-27 17:01:32,{i:03d} INFO done {i}" for i in range(12))
        + "\n",
    ],
    ids=["stderr-first", "stdout-first"],
)
async def test_the_size_check_answer_is_read_whichever_stream_came_last(harness: Harness, log: str):
    # check-size: INFO on stderr, the JSON on stdout; the container log interleaves them (issue 18)
    kube = harness.kube
    kube.put_object(make_artifact("gpt2", "hf://gpt2"))
    await harness.reconcile("gpt2")
    n = harness.names("gpt2")
    harness.run_pod(n["check"], "check-1", "Succeeded", log, exit_code=0)
    await harness.job_status(n["check"], conditions=[{"type": "Complete", "status": "True"}], succeeded=1)
    await harness.reconcile("gpt2")
    art = harness.artifact("gpt2")
    assert art["status"]["discoveredSizeBytes"] == 548118077, art["status"]
    assert (condition(art, "CheckSizeOutputReady") or {}).get("reason") != "InvalidSizeOutput"
    assert kube.list("v1/persistentvolumeclaims", NS)


async def test_labels_propagated_to_a_job_reach_its_pods(harness: Harness):
    # F81/F82 and aim.eai.amd.com/artifact.name: NetworkPolicies and cost tools select pods (issue 18)
    kube = harness.kube
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterRuntimeConfig",
            "metadata": {"name": "default"},
            "spec": {"labelPropagation": {"enabled": True, "match": ["team.example.com/*"]}},
        }
    )
    art = make_artifact()
    art["metadata"]["labels"] = {
        "team.example.com/cost-center": "ml-42",
        "aim.eai.amd.com/project": "chat",
        "unrelated": "x",
    }
    kube.put_object(art)
    await harness.reconcile("tiny")
    n = harness.names("tiny")
    job = jobs(kube)[n["check"]]
    pod_labels = job["spec"]["template"]["metadata"]["labels"]
    for key, value in {
        "team.example.com/cost-center": "ml-42",
        "aim.eai.amd.com/project": "chat",
        "aim.eai.amd.com/artifact.name": "tiny",
    }.items():
        assert job["metadata"]["labels"][key] == value
        assert pod_labels[key] == value, pod_labels
    assert "unrelated" not in pod_labels


async def test_a_burst_of_artifacts_never_exceeds_the_quota_and_evicts_no_more_than_needed(harness: Harness):
    # issue 18: quota and eviction decisions made by several workers at once are serialised
    kube = harness.kube
    kube.put_object(_quota(cluster="12Gi"))
    kube.put_object(_stored("kept", 6))  # no retention priority: never evicted
    kube.put_object(_stored("idle-1", 2, retentionPriority=0))
    kube.put_object(_stored("idle-2", 2, retentionPriority=0))
    burst = [f"new-{i}" for i in range(4)]
    for name in burst:  # 1Gi + 10 % headroom: a 2Gi PVC each; 2Gi free, 4Gi evictable: room for three
        kube.put_object(make_artifact(name, f"hf://org/{name}", size="1Gi"))

    def held() -> int:
        claims = kube.list("v1/persistentvolumeclaims", NS)
        stored = [a for a in kube.list(ART, NS) if a["metadata"]["name"] in ("kept", "idle-1", "idle-2")]
        return sum(int(c["spec"]["resources"]["requests"]["storage"].removesuffix("Gi")) for c in claims) + sum(
            int(a["status"]["allocatedSize"].removesuffix("Gi")) for a in stored
        )

    artifact = harness.engine.controllers["artifact"]
    for _ in range(3):  # every artifact of the burst reconciled by a worker of its own, at the same time
        for ref in harness.engine.resources():
            harness.store.replace_all(ref, await harness.client.list(ref))
        await asyncio.gather(*(harness.engine.reconcile(artifact, NS, name) for name in burst))
        assert held() <= 12, held()
    claims = {
        c["metadata"]["labels"].get("aim.eai.amd.com/artifact.name") for c in kube.list("v1/persistentvolumeclaims", NS)
    }
    assert len(claims) == 3 and held() == 12  # both idle artifacts went, and nothing more
    assert harness.artifact("kept") is not None
    waiting = [n for n in burst if condition(harness.artifact(n), "CachePvcReady")["reason"] == "StorageQuotaExceeded"]
    assert len(waiting) == 1
