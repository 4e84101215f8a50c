"""The emulator refuses changes to fields a real API server keeps immutable (422 Invalid)."""

from __future__ import annotations

import httpx

APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JOBS = "/apis/batch/v1/namespaces/ns1/jobs"
PVCS = "/api/v1/namespaces/ns1/persistentvolumeclaims"
BINDINGS = "/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings"


def job(image: str) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns1"},
        "spec": {
            "backoffLimit": 2,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": image}]}},
        },
    }


async def test_a_job_pod_template_cannot_change(api: httpx.AsyncClient):
    assert (await api.patch(f"{JOBS}/j?fieldManager=t", json=job("a:1"), headers=APPLY)).status_code in (200, 201)
    changed = await api.patch(f"{JOBS}/j?fieldManager=t", json=job("a:2"), headers=APPLY)
    assert changed.status_code == 422 and "spec.template" in changed.json()["message"]
    same = await api.patch(f"{JOBS}/j?fieldManager=t", json=job("a:1"), headers=APPLY)
    assert same.status_code == 200
    labels = await api.patch(
        f"{JOBS}/j", json={"metadata": {"labels": {"x": "y"}}, "spec": {"backoffLimit": 3}}, headers=MERGE
    )
    assert labels.status_code == 200  # metadata and other spec fields may change
    status = await api.patch(f"{JOBS}/j/status", json={"status": {"succeeded": 1}}, headers=MERGE)
    assert status.status_code == 200


async def test_a_role_binding_cannot_change_its_role(api: httpx.AsyncClient):
    body = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "rb", "namespace": "ns1"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "a"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "ns1"}],
    }
    assert (await api.post(BINDINGS, json=body)).status_code == 201
    body["roleRef"]["name"] = "b"
    response = await api.patch(f"{BINDINGS}/rb?fieldManager=t", json=body, headers=APPLY)
    assert response.status_code == 422 and "roleRef" in response.json()["message"]


async def test_a_claim_may_only_change_its_requests(api: httpx.AsyncClient):
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "namespace": "ns1"},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "nfs",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    assert (await api.post(PVCS, json=body)).status_code == 201
    grow = await api.patch(f"{PVCS}/c", json={"spec": {"resources": {"requests": {"storage": "2Gi"}}}}, headers=MERGE)
    assert grow.status_code == 200
    other = await api.patch(f"{PVCS}/c", json={"spec": {"storageClassName": "fast"}}, headers=MERGE)
    assert other.status_code == 422


async def test_aim_fields_under_a_transition_rule_cannot_change_once_set(api: httpx.AsyncClient):
    services = "/apis/aim.eai.amd.com/v1alpha1/namespaces/ns1/aimservices"
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "s", "namespace": "ns1"},
        "spec": {"model": {"name": "qwen"}},
    }
    assert (await api.post(services, json=body)).status_code == 201
    model = await api.patch(f"{services}/s", json={"spec": {"model": {"name": "llama"}}}, headers=MERGE)
    assert model.status_code == 422 and "model selection is immutable after creation" in model.json()["message"]
    # A CEL transition rule applies only when the field exists before and after: adding it is allowed.
    added = await api.patch(f"{services}/s", json={"spec": {"template": {"name": "t1"}}}, headers=MERGE)
    assert added.status_code == 200
    changed = await api.patch(f"{services}/s", json={"spec": {"template": {"name": "t2"}}}, headers=MERGE)
    assert changed.status_code == 422 and "template selection is immutable" in changed.json()["message"]
    other = await api.patch(f"{services}/s", json={"spec": {"replicas": 2}}, headers=MERGE)
    assert other.status_code == 200  # fields without a rule may change
