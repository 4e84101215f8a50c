"""The operator under exactly the RBAC that deploy/ ships, on a real API server: no request is refused.

The operator authenticates as its ServiceAccount (``aim-system/aim-engine-controller-manager``, a
token the test control plane's token file maps to that account and its groups), the cluster has
the ClusterRole, Role and bindings of ``deploy/`` and nothing else for it, and kube-apiserver's RBAC
authorizer decides. Any 403 the operator gets fails the test with the request it was refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aim_testing.apiserver import OPERATOR_SA_NAME, OPERATOR_SA_NAMESPACE, OPERATOR_TOKEN
from tests.wire.conftest import eventually
from tests.wire.test_inference_pool_wire import routed  # noqa: F401 - fixture
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, condition, create  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.apiserver_only("token authentication and the RBAC authorizer of a real API server")


@pytest.fixture()
def operator_token(kube):
    """The operator runs as its ServiceAccount, bound only by what deploy/ ships."""
    for name in (
        "namespace.yaml",
        "service_account.yaml",
        "role.yaml",
        "role_binding.yaml",
        "artifact_status_updater_role.yaml",
        "leader_election_role.yaml",
        "leader_election_role_binding.yaml",
    ):
        for obj in yaml.safe_load_all((ROOT / "deploy" / name).read_text()):
            if obj:
                kube.put_object(obj)
    return OPERATOR_TOKEN


def refused_to_the_operator(kube):
    return [
        f"{r['status']} {r['method']} {r['path']}: {r.get('error', '')[:300]}"
        for r in kube.refused(401, 403)
        if r["headers"].get("Authorization") == f"Bearer {OPERATOR_TOKEN}"
    ]


async def test_the_operator_reconciles_services_under_the_rbac_of_deploy_without_a_403(kube, api, cluster, operator):
    assert kube.get("v1/serviceaccounts", OPERATOR_SA_NAMESPACE, OPERATOR_SA_NAME) is not None
    for name in ("qwen-chat", "llama-chat"):
        await create(api, kube, cluster[name])

    def reconciled():
        assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert condition(kube.get(SVC, NS, "qwen-chat"), "InferenceServiceReady")
        assert condition(kube.get(SVC, NS, "llama-chat"), "Ready")
        assert kube.events_for("qwen-chat", NS)
        return True

    await eventually(reconciled, timeout=30)
    await operator.settle()
    # Deleting a service: finalizers released, children left to the garbage collector.
    response = await api.delete(kube.path(SVC, NS, "llama-chat"))
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get(SVC, NS, "llama-chat") is None, timeout=30)
    await operator.settle()

    assert refused_to_the_operator(kube) == []
    ours = [r for r in kube.proxy.requests if r["headers"].get("Authorization") == f"Bearer {OPERATOR_TOKEN}"]
    assert len(ours) > 20  # the operator did talk to the server as its ServiceAccount


async def test_the_picker_role_of_an_inference_pool_is_created_under_the_rbac_of_deploy(kube, api, routed, operator):
    """The API server lets the operator create a Role only with what it holds itself (escalation
    prevention): the endpoint picker's Role (pods and inferencepools, read) and RoleBinding go through."""
    await create(api, kube, routed["qwen-pool"])

    def created():
        roles = kube.list(
            "rbac.authorization.k8s.io/v1/roles", NS, label_selector="aim.eai.amd.com/service.name=qwen-pool"
        )
        bindings = kube.list(
            "rbac.authorization.k8s.io/v1/rolebindings", NS, label_selector="aim.eai.amd.com/service.name=qwen-pool"
        )
        assert len(roles) == 1 and len(bindings) == 1
        assert kube.list("inference.networking.k8s.io/v1/inferencepools", NS)
        assert kube.list("apps/v1/deployments", NS, label_selector="aim.eai.amd.com/service.name=qwen-pool")
        return roles[0]

    role = await eventually(created, timeout=30)
    assert {g for rule in role["rules"] for g in rule["apiGroups"]} == {"", "inference.networking.k8s.io"}
    await operator.settle()
    assert refused_to_the_operator(kube) == []


async def test_a_permission_deploy_lacks_is_refused_and_seen(kube, api, operator_token):
    """The check above can fail: a request the ClusterRole does not grant is answered 403 and recorded."""
    import httpx

    async with httpx.AsyncClient(base_url=kube.url, headers={"Authorization": f"Bearer {operator_token}"}) as client:
        response = await client.get("/api/v1/namespaces/kube-system/secrets/nope-not-granted")
        assert response.status_code in (403, 404)
        response = await client.post(
            "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "not-granted"}}
        )
    assert response.status_code == 403, response.text
    assert any("POST /api/v1/namespaces" in line for line in refused_to_the_operator(kube))
