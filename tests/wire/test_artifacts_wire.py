"""AIMArtifact end to end: the real operator (kopf watches + engine) against the API emulator.

Only the watches are under test here (every step must be triggered by an
event, not by a timer): the controller's decisions are covered in
tests/artifact/test_artifacts_wire.py and tests/artifact/.
"""

from __future__ import annotations

from typing import Any

from aim_core.reconcile import naming
from tests.wire.conftest import eventually

NS = "ml-team"
ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
JOBS = "batch/v1/jobs"
PVCS = "v1/persistentvolumeclaims"


def _condition(obj: dict[str, Any] | None, type_: str) -> dict[str, Any] | None:
    return next((c for c in ((obj or {}).get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def _create(api, kube, body):
    response = await api.post(kube.path(ART, NS), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def _complete(api, kube, job: dict[str, Any], log: str = "") -> None:
    """Play the Job controller and the kubelet: one pod that succeeded, then the Job Complete."""
    name = job["metadata"]["name"]
    template = job["spec"]["template"]
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name[:50]}-x1",
                "namespace": NS,
                "labels": {**template["metadata"]["labels"], "job-name": name},
            },
            "spec": template["spec"],
            "status": {"phase": "Succeeded"},
        }
    )
    if log:
        kube.set_log(NS, f"{name[:50]}-x1", log)
    response = await api.patch(
        kube.path(JOBS, NS, name, "status"),
        json={"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text


async def test_artifact_goes_from_size_check_to_ready_driven_by_watch_events(kube, api, operator):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    created = await _create(
        api,
        kube,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMArtifact",
            "metadata": {"name": "tiny", "namespace": NS},
            "spec": {"sourceUri": "hf://sshleifer/tiny-gpt2"},
        },
    )
    uid = created["metadata"]["uid"]
    check = await eventually(lambda: kube.get(JOBS, NS, naming.check_size_job_name("tiny", uid)))
    await _complete(api, kube, check, '{"url":"hf://sshleifer/tiny-gpt2","sizeBytes":2469200}')

    # the size, the PVC, the RoleBinding and then the download Job, each step triggered by the last
    download = await eventually(lambda: kube.get(JOBS, NS, naming.download_job_name("tiny", uid)))
    assert kube.get(PVCS, NS, naming.artifact_pvc_name("tiny", uid)) is not None
    assert kube.get("rolebindings", NS, "aim-engine-artifact-status-updater") is not None
    assert kube.get(ART, NS, "tiny")["status"]["discoveredSizeBytes"] == 2469200

    await api.patch(
        kube.path(PVCS, NS, naming.artifact_pvc_name("tiny", uid), "status"),
        json={"status": {"phase": "Bound"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    # the downloader reports all bytes there: noticed through the watch, not by polling
    await api.patch(
        kube.path(ART, NS, "tiny", "status"),
        headers={"Content-Type": "application/merge-patch+json"},
        json={"status": {"progress": {"percentage": 100, "displayPercentage": "100 %"}}},
    )
    await eventually(lambda: _condition(kube.get(ART, NS, "tiny"), "DownloadComplete")["reason"] == "Verifying")
    await _complete(api, kube, download)

    def ready():
        art = kube.get(ART, NS, "tiny")
        assert art["status"]["status"] == "Ready", art["status"]
        return art

    art = await eventually(ready)
    assert _condition(art, "DownloadComplete")["reason"] == "Verified"


async def test_a_service_without_a_warm_cache_runs_once_its_artifact_is_downloaded(kube, api, operator):
    """The whole chain of issue 7: service -> template cache -> artifact -> PVC and download Job -> Ready
    artifact -> Ready cache -> InferenceService mounting the artifact's volume."""
    import copy
    from pathlib import Path

    from aim_core.cli.offline import load_documents

    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    root = Path(__file__).resolve().parents[2]
    service = None
    for doc in load_documents([root / "examples"]):
        doc = copy.deepcopy(doc)
        if doc["kind"] == "AIMService" and doc["metadata"]["name"] == "qwen-chat":
            service = doc
        if doc["kind"] in (
            "AIMService",
            "AIMClusterModelSource",
            "AIMTemplateCache",
            "AIMArtifact",
            "PersistentVolumeClaim",
        ):
            continue  # no warm cache this time
        if doc["kind"] in ("AIMModel", "AIMClusterModel", "AIMServiceTemplate", "AIMClusterServiceTemplate"):
            doc["metadata"].setdefault("annotations", {})["aim.eai.amd.com/reconciliation-paused"] = "true"
        kube.put_object(doc)
    assert service is not None
    service.pop("status", None)
    response = await api.post(kube.path("aim.eai.amd.com/v1alpha1/aimservices", NS), json=service)
    assert response.status_code in (200, 201), response.text

    def artifact():
        found = [a for a in kube.list(ART, NS) if a["spec"]["sourceUri"] == "hf://Qwen/Qwen3-32B-FP8"]
        assert len(found) == 1, found
        return found[0]

    art = await eventually(artifact, timeout=15)
    uid = art["metadata"]["uid"]
    name = art["metadata"]["name"]
    download = await eventually(lambda: kube.get(JOBS, NS, naming.download_job_name(name, uid)), timeout=15)
    claim = naming.artifact_pvc_name(name, uid)
    assert kube.get(PVCS, NS, claim)["spec"]["resources"]["requests"]["storage"] == "37Gi"
    env = {e["name"]: e for e in download["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "hf-token"  # the team's runtime config
    assert not kube.list("serving.kserve.io/v1beta1/inferenceservices", NS)  # the service waits for its cache

    await api.patch(
        kube.path(PVCS, NS, claim, "status"),
        json={"status": {"phase": "Bound"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    await _complete(api, kube, download)

    def served():
        found = kube.list(
            "serving.kserve.io/v1beta1/inferenceservices", NS, label_selector="aim.eai.amd.com/service=qwen-chat"
        )
        assert len(found) == 1, found
        isvc = found[0]
        claims = [
            v["persistentVolumeClaim"]["claimName"]
            for v in isvc["spec"]["predictor"].get("volumes") or []
            if "persistentVolumeClaim" in v
        ]
        assert claims == [claim], claims
        return isvc

    await eventually(served, timeout=15)
    assert kube.get(ART, NS, name)["status"]["status"] == "Ready"
