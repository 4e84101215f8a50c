"""Model-aware routing end to end: the real operator, an AIMService with ``routing.inferencePool``.

On both backends (the real API server has the InferencePool CRDs of both groups installed): the
service gets its InferencePool, the endpoint picker's Deployment, Service, ConfigMap, ServiceAccount,
Role and RoleBinding, all owned and valid for the server, and an HTTPRoute whose backend is the pool;
route health waits for the picker. Turning the pool off deletes all of it and puts the Service
backend back; switching the API replaces the pool. On a cluster without the CRDs the operator keeps
running and the service says which CRD is missing.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from aim_core.cli.offline import load_documents
from aim_testing.crdschema import third_party_crd, validate_against_crd
from tests.wire.conftest import eventually
from tests.wire.serving import accept_route
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, condition, create  # noqa: F401 - fixture

V1 = "inference.networking.k8s.io/v1"
V1ALPHA2 = "inference.networking.x-k8s.io/v1alpha2"
POOLS = {V1: f"{V1}/inferencepools", V1ALPHA2: f"{V1ALPHA2}/inferencepools"}
PICKER = {
    "Deployment": "apps/v1/deployments",
    "Service": "v1/services",
    "ConfigMap": "v1/configmaps",
    "ServiceAccount": "v1/serviceaccounts",
    "Role": "rbac.authorization.k8s.io/v1/roles",
    "RoleBinding": "rbac.authorization.k8s.io/v1/rolebindings",
}
LABEL = "aim.eai.amd.com/service.name"
ROUTING_EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "routing-examples.yaml"


@pytest.fixture()
def routed(kube, cluster):
    """The cluster of examples/ plus docs/routing-examples.yaml: its runtime config seeded, its services returned."""
    services = dict(cluster)
    for doc in load_documents([ROUTING_EXAMPLES]):
        if doc["kind"] == "AIMService":
            services[doc["metadata"]["name"]] = doc
        else:
            kube.put_object(copy.deepcopy(doc))
    return services


def mine(kube: Any, resource: str, name: str) -> list[dict[str, Any]]:
    """The objects of ``resource`` the service ``name`` controls (its label and controller reference)."""
    return [
        o
        for o in kube.list(resource, NS, label_selector=f"{LABEL}={name}")
        if any(r.get("controller") and r["name"] == name for r in o["metadata"].get("ownerReferences") or ())
    ]


def pool_objects(kube: Any, name: str) -> dict[str, list[dict[str, Any]]]:
    found = {kind: mine(kube, resource, name) for kind, resource in PICKER.items()}
    for version, resource in POOLS.items():
        found[version] = mine(kube, resource, name)
    return found


async def patch_service(api: Any, kube: Any, name: str, spec: dict[str, Any]) -> None:
    response = await api.patch(
        kube.path(SVC, NS, name), json={"spec": spec}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text


async def test_a_service_with_the_pool_gets_pool_picker_and_a_route_to_the_pool(kube, api, routed, operator):
    await create(api, kube, routed["qwen-pool"])

    def built():
        found = pool_objects(kube, "qwen-pool")
        assert [len(found[k]) for k in PICKER] == [1] * len(PICKER), {k: len(v) for k, v in found.items()}
        assert len(found[V1]) == 1 and found[V1ALPHA2] == []
        return found

    found = await eventually(built, timeout=15)
    [pool] = found[V1]
    validate_against_crd(pool, third_party_crd("inference.networking.k8s.io_inferencepools.yaml"))
    [isvc] = await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-pool"))
    assert pool["spec"]["selector"]["matchLabels"] == {"serving.kserve.io/inferenceservice": isvc["metadata"]["name"]}
    assert pool["spec"]["targetPorts"] == [{"number": 8000}]
    picker = found["Service"][0]["metadata"]["name"]
    assert pool["spec"]["endpointPickerRef"]["name"] == picker
    assert pool["spec"]["endpointPickerRef"]["port"] == {"number": 9002}
    assert [p["port"] for p in found["Service"][0]["spec"]["ports"]] == [9002, 9090]
    deployment = found["Deployment"][0]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--pool-name") + 1] == pool["metadata"]["name"]
    assert found["Role"][0]["rules"][0] == {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    for kind in ("InferencePool", *PICKER):
        obj = pool if kind == "InferencePool" else found[kind][0]
        assert obj["metadata"]["labels"]["aim.eai.amd.com/component"] == "routing", kind

    [route] = await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-pool"))
    validate_against_crd(route, third_party_crd("gateway.networking.k8s.io_httproutes.yaml"))
    [backend] = route["spec"]["rules"][0]["backendRefs"]
    backend.pop("weight", None)  # the server's default
    assert backend == {
        "group": "inference.networking.k8s.io",
        "kind": "InferencePool",
        "name": pool["metadata"]["name"],
        "namespace": NS,
    }

    # The gateway accepts the route; the picker has no available replica (nothing runs pods here).
    accept_route(kube, route)

    def picker_waited_for():
        ready = condition(kube.get(SVC, NS, "qwen-pool"), "HTTPRouteReady")
        assert ready is not None and ready["reason"] == "EndpointPickerNotReady", ready
        return ready

    ready = await eventually(picker_waited_for, timeout=15)
    assert deployment["metadata"]["name"] in ready["message"]


async def test_turning_the_pool_off_deletes_it_and_switching_the_api_replaces_it(kube, api, routed, operator):
    body = copy.deepcopy(routed["qwen-pool-v1"])
    await create(api, kube, body)
    first = await eventually(lambda: pool_objects(kube, "qwen-pool-v1")[V1][0], timeout=15)
    await eventually(lambda: all(pool_objects(kube, "qwen-pool-v1")[k] for k in PICKER), timeout=15)

    # the older API: the v1 pool goes, a v1alpha2 pool of the same name comes, the route follows
    await patch_service(api, kube, "qwen-pool-v1", {"routing": {"inferencePool": {"apiVersion": V1ALPHA2}}})

    def switched():
        found = pool_objects(kube, "qwen-pool-v1")
        assert found[V1] == [] and len(found[V1ALPHA2]) == 1
        [route] = kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-pool-v1")
        assert route["spec"]["rules"][0]["backendRefs"][0]["group"] == "inference.networking.x-k8s.io"
        return found[V1ALPHA2][0]

    alpha = await eventually(switched, timeout=15)
    validate_against_crd(alpha, third_party_crd("inference.networking.x-k8s.io_inferencepools.yaml"))
    assert alpha["metadata"]["name"] == first["metadata"]["name"]
    assert alpha["spec"]["extensionRef"]["portNumber"] == 9002

    # off: pool, picker and its RBAC are deleted, the route goes back to the predictor Service
    await patch_service(api, kube, "qwen-pool-v1", {"routing": {"inferencePool": {"enabled": False}}})

    def restored():
        found = pool_objects(kube, "qwen-pool-v1")
        leftover = {
            k: [o["metadata"]["name"] for o in v if not o["metadata"].get("deletionTimestamp")]
            for k, v in found.items()
        }
        assert all(not names for names in leftover.values()), leftover
        [route] = kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-pool-v1")
        [backend] = route["spec"]["rules"][0]["backendRefs"]
        assert backend["kind"] == "Service" and backend["name"].endswith("-predictor") and backend["port"] == 80
        return route

    await eventually(restored, timeout=20)


@pytest.fixture()
def without_pool_crds(kube):
    """A cluster without the Gateway API Inference Extension: neither InferencePool API is served."""
    for resource in POOLS.values():
        kube.emulator.resources.pop(resource)


@pytest.mark.emulator_only("the real API server of the session has the CRDs installed for every test")
async def test_without_the_crds_the_operator_runs_and_the_service_says_what_is_missing(
    kube, api, routed, without_pool_crds, operator
):
    await create(api, kube, routed["qwen-chat"])  # no pool: untouched by the missing CRDs
    await create(api, kube, routed["qwen-pool"])

    def reported():
        svc = kube.get(SVC, NS, "qwen-pool")
        ready = condition(svc, "HTTPRouteReady")
        assert ready is not None and ready["reason"] == "CRDNotInstalled", ready
        return svc, ready

    svc, ready = await eventually(reported, timeout=15)
    assert f"InferencePool {V1}" in ready["message"] and "manifests.yaml" in ready["message"]
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-pool")  # the model still serves
    assert kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-pool") == []  # no route to nothing
    assert pool_objects(kube, "qwen-pool")["Deployment"] == []
    await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat"))
    chat = await eventually(lambda: condition(kube.get(SVC, NS, "qwen-chat"), "HTTPRouteReady"))
    assert chat["reason"] == "HTTPRouteCreating" or chat["reason"].startswith("HTTPRoute"), chat
    assert operator.runtime is not None


async def test_a_service_with_the_pool_settles_with_zero_writes(kube, api, routed, operator):
    """The pool, the picker's objects and the route to the pool, as the server stores them (its defaults
    in a Deployment, a Service, a backendRef's weight), are not applied again once settled."""
    from tests.wire.test_settled_wire import quiet_pass

    await create(api, kube, routed["qwen-pool-alpha"])
    await eventually(lambda: all(pool_objects(kube, "qwen-pool-alpha")[k] for k in [*PICKER, V1ALPHA2]), timeout=15)
    await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-pool-alpha"))

    assert await quiet_pass(operator, kube) == []
