"""Model-aware routing in the service plan: ``routing.inferencePool`` with the real route builder.

A service with the pool on gets its HTTPRoute (backend: the pool), an InferencePool over its
predictor pods and the endpoint picker's objects, all owned; the service's settings win over the
runtime config's field by field; ``routing.enabled: false`` wins; turning the pool off or changing
its API prunes what no longer belongs; a cluster without the pool's CRD gets a condition that says
so and nothing of the route changes. A service without ``inferencePool`` plans exactly as before.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from aim_plugin_gateway.inferencepool import DEPLOYMENTS, POOLS, V1, V1ALPHA2

from aim_core.reconcile.labels import COMPONENT_LABEL
from aim_core.reconcile.naming import inference_service_name
from aim_core.service.routing_settings import merge_inference_pool, routing_settings
from tests.service.builders import (
    GATEWAY,
    NS,
    QWEN,
    applied,
    cluster_config,
    kinds,
    live,
    one,
    ready_world,
    reason,
    run,
    service,
)
from tests.service.test_builder_kinds import owned_by

PICKER_KINDS = ["ConfigMap", "Deployment", "Role", "RoleBinding", "Service", "ServiceAccount"]


def pool_service(name: str = "chat", **pool: Any) -> Any:
    return service(name).model_name(QWEN).routing(gateway=GATEWAY, inferencePool={"enabled": True, **pool})


def refs(plan: Any) -> list[tuple[str, str, str]]:
    return sorted((d.resource.api_version, d.resource.kind, d.obj["metadata"]["name"]) for d in plan.apply)


def test_a_service_with_the_pool_gets_route_pool_and_picker_all_owned() -> None:
    svc = pool_service()

    plan, status = run(svc, *ready_world(svc))

    assert sorted(kinds(plan)) == sorted(["HTTPRoute", "InferencePool", "InferenceService", *PICKER_KINDS])
    assert all(d.owned for d in plan.apply)
    pool = one(plan, "InferencePool")
    assert pool["apiVersion"] == V1
    backend = one(plan, "HTTPRoute")["spec"]["rules"][0]["backendRefs"]
    assert backend == [
        {
            "group": "inference.networking.k8s.io",
            "kind": "InferencePool",
            "name": pool["metadata"]["name"],
            "namespace": NS,
        }
    ]
    for kind in ["InferencePool", *PICKER_KINDS]:
        assert one(plan, kind)["metadata"]["labels"][COMPONENT_LABEL] == "routing", kind
    assert plan.delete == []
    assert reason(status, "HTTPRouteReady") == ("False", "HTTPRouteCreating")
    assert any(
        n.startswith("routing.inferencePool: on (spec.routing.inferencePool.enabled of the AIMService)")
        for n in plan.notes
    )


def test_the_pool_selects_the_predictor_pods_of_the_inference_service_on_the_model_port() -> None:
    svc = pool_service()

    plan, _ = run(svc, *ready_world(svc))

    spec = one(plan, "InferencePool")["spec"]
    isvc = inference_service_name("chat", NS)
    assert one(plan, "InferenceService")["metadata"]["name"] == isvc
    assert spec["selector"] == {"matchLabels": {"serving.kserve.io/inferenceservice": isvc}}
    assert spec["targetPorts"] == [{"number": 8000}]
    assert spec["endpointPickerRef"]["port"] == {"number": 9002}


def test_a_service_without_inference_pool_plans_exactly_as_before() -> None:
    """The whole plan and status: unset, ``{}`` and ``enabled: false`` are the same as no setting at all."""
    base = service("chat").model_name(QWEN).routing(gateway=GATEWAY)
    plan, status = run(base, *ready_world(base))
    assert sorted(kinds(plan)) == ["HTTPRoute", "InferenceService"]
    assert one(plan, "HTTPRoute")["spec"]["rules"][0]["backendRefs"][0]["kind"] == "Service"
    for pool in ({}, {"enabled": False}, {"enabled": False, "apiVersion": V1ALPHA2, "endpointPicker": {"replicas": 3}}):
        svc = service("chat").model_name(QWEN).routing(gateway=GATEWAY, inferencePool=pool)
        other_plan, other_status = run(svc, *ready_world(svc))
        assert [(d.resource, d.obj, d.owned) for d in other_plan.apply] == [
            (d.resource, d.obj, d.owned) for d in plan.apply
        ]
        assert other_plan.delete == plan.delete
        assert other_status == status
        assert [n for n in other_plan.notes if not n.startswith("routing.inferencePool")] == plan.notes


def test_the_service_wins_over_the_runtime_config_field_by_field() -> None:
    config = cluster_config().routing(
        inferencePool={
            "enabled": True,
            "apiVersion": V1ALPHA2,
            "endpointPicker": {"replicas": 3, "failureMode": "FailOpen", "image": "example.com/epp:1"},
        }
    )
    svc = (
        service("chat")
        .model_name(QWEN)
        .routing(None, inferencePool={"apiVersion": V1, "endpointPicker": {"replicas": 2}})
    )

    plan, _ = run(svc, *ready_world(svc), config)

    pool = one(plan, "InferencePool")
    assert pool["apiVersion"] == V1  # the service's
    assert pool["spec"]["endpointPickerRef"]["failureMode"] == "FailOpen"  # the config's
    deployment = one(plan, "Deployment")
    assert deployment["spec"]["replicas"] == 2  # the service's
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "example.com/epp:1"  # the config's
    notes = "\n".join(plan.notes)
    assert "routing.inferencePool: on (routing.inferencePool.enabled of runtime config 'default')" in notes
    assert (
        "apiVersion inference.networking.k8s.io/v1 (spec.routing.inferencePool.apiVersion of the AIMService)" in notes
    )


def test_a_service_opts_out_of_the_pool_its_runtime_config_turns_on() -> None:
    config = cluster_config().routing(inferencePool={"enabled": True})
    svc = service("chat").model_name(QWEN).routing(None, inferencePool={"enabled": False})

    plan, _ = run(svc, *ready_world(svc), config)

    assert sorted(kinds(plan)) == ["HTTPRoute", "InferenceService"]
    assert one(plan, "HTTPRoute")["spec"]["rules"][0]["backendRefs"][0]["kind"] == "Service"


def test_routing_off_wins_over_the_pool() -> None:
    config = cluster_config().routing(inferencePool={"enabled": True})
    svc = service("chat").model_name(QWEN).routing(False, inferencePool={"enabled": True})

    plan, status = run(svc, *ready_world(svc), config)

    assert kinds(plan) == ["InferenceService"]
    assert plan.delete == []
    assert status["status"] != "Failed"


def _live_pool_objects(svc: Any) -> tuple[dict[str, Any], dict[Any, list[dict[str, Any]]]]:
    """What the service controls after a pass with the pool on: the route and, per kind, the rest."""
    plan, _ = run(svc, *ready_world(svc))
    route = owned_by(copy.deepcopy(one(plan, "HTTPRoute")), svc)
    owned: dict[Any, list[dict[str, Any]]] = {}
    for desired in plan.apply:
        if desired.resource.kind in ("HTTPRoute", "InferenceService"):
            continue
        owned.setdefault(desired.resource, []).append(owned_by(copy.deepcopy(desired.obj), svc))
    return route, owned


def test_turning_the_pool_off_prunes_pool_picker_and_rbac_and_restores_the_service_backend() -> None:
    svc = pool_service()
    route, owned = _live_pool_objects(svc)
    off = copy.deepcopy(svc)
    off["spec"]["routing"]["inferencePool"]["enabled"] = False

    plan, _ = run(off, *ready_world(off), route=route, owned=owned)

    assert sorted(kinds(plan)) == ["HTTPRoute", "InferenceService"]
    backend = one(plan, "HTTPRoute")["spec"]["rules"][0]["backendRefs"]
    assert backend == [
        {"kind": "Service", "name": f"{inference_service_name('chat', NS)}-predictor", "namespace": NS, "port": 80}
    ]
    assert sorted((d.resource.kind, d.name) for d in plan.delete) == sorted(
        (ref.kind, o["metadata"]["name"]) for ref, objs in owned.items() for o in objs
    )
    assert len(plan.delete) == 7


def test_switching_the_api_version_replaces_the_pool() -> None:
    svc = pool_service()
    route, owned = _live_pool_objects(svc)
    switched = pool_service(apiVersion=V1ALPHA2)

    plan, _ = run(switched, *ready_world(switched), route=route, owned=owned)

    old = owned[POOLS[V1]][0]["metadata"]["name"]
    assert [(d.resource.api_version, d.name) for d in plan.delete] == [(V1, old)]
    new = one(plan, "InferencePool")
    assert new["apiVersion"] == V1ALPHA2 and new["metadata"]["name"] == old  # same name, other API
    assert one(plan, "HTTPRoute")["spec"]["rules"][0]["backendRefs"][0]["group"] == "inference.networking.x-k8s.io"
    args = one(plan, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--pool-group") + 1] == "inference.networking.x-k8s.io"
    assert one(plan, "Role")["rules"][1]["apiGroups"] == ["inference.networking.x-k8s.io"]


@pytest.mark.parametrize("version", [V1, V1ALPHA2])
def test_a_cluster_without_the_pool_crd_gets_a_condition_and_no_half_applied_route(version: str) -> None:
    svc = pool_service(apiVersion=version)
    before = service("chat").model_name(QWEN).routing(gateway=GATEWAY)
    old_route = owned_by(copy.deepcopy(one(run(before, *ready_world(before))[0], "HTTPRoute")), svc)

    plan, status = run(svc, *ready_world(svc), route=old_route, unserved=[POOLS[version]])

    assert kinds(plan) == ["InferenceService"]  # the model is served; the old route is left as it was
    assert plan.delete == []
    assert reason(status, "HTTPRouteReady") == ("False", "CRDNotInstalled")
    message = next(c for c in status["conditions"] if c["type"] == "HTTPRouteReady")["message"]
    assert f"InferencePool {version}" in message and "CRD is not installed" in message
    assert "manifests.yaml" in message and "routing.inferencePool.apiVersion" in message
    assert status["status"] == "Degraded"
    assert plan.requeue_after is not None and plan.requeue_after <= 60


def test_the_other_pool_api_missing_does_not_matter() -> None:
    svc = pool_service(apiVersion=V1)

    plan, _ = run(svc, *ready_world(svc), unserved=[POOLS[V1ALPHA2]])

    assert "InferencePool" in kinds(plan)


def _accepted_route(route: dict[str, Any]) -> dict[str, Any]:
    accepted = live(route)
    accepted["status"] = {
        "parents": [
            {
                "parentRef": GATEWAY,
                "controllerName": "x/y",
                "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
            }
        ]
    }
    return accepted


def test_route_health_reads_the_pool_and_the_picker() -> None:
    svc = pool_service()
    route, owned = _live_pool_objects(svc)
    route = _accepted_route(route)
    pool = owned[POOLS[V1]][0]
    picker = owned[DEPLOYMENTS][0]

    _, status = run(svc, *ready_world(svc), route=route, owned=owned)
    assert reason(status, "HTTPRouteReady") == ("False", "EndpointPickerNotReady")

    picker["metadata"]["generation"] = 1
    picker["status"] = {
        "observedGeneration": 1,
        "availableReplicas": 1,
        "conditions": [{"type": "Available", "status": "True"}],
    }
    _, status = run(svc, *ready_world(svc), route=route, owned=owned)
    assert reason(status, "HTTPRouteReady") == ("True", "HTTPRouteAccepted")

    pool["status"] = {
        "parents": [
            {
                "parentRef": {
                    "group": "gateway.networking.k8s.io",
                    "kind": "Gateway",
                    "name": "kserve-ingress-gateway",
                    "namespace": "kgateway-system",
                },
                "conditions": [
                    {"type": "Accepted", "status": "False", "reason": "NotSupported", "message": "unknown group"}
                ],
            }
        ]
    }
    _, status = run(svc, *ready_world(svc), route=route, owned=owned)
    cond = next(c for c in status["conditions"] if c["type"] == "HTTPRouteReady")
    assert (cond["status"], cond["reason"]) == ("False", "InferencePoolNotAccepted")
    assert "routing.inferencePool.apiVersion inference.networking.k8s.io/v1" in cond["message"]
    assert "Gateway kgateway-system/kserve-ingress-gateway" in cond["message"]
    assert status["status"] == "Degraded"


def test_a_gateway_that_cannot_resolve_the_pool_backend_names_the_api_version() -> None:
    svc = pool_service(apiVersion=V1ALPHA2)
    route, owned = _live_pool_objects(svc)
    route = live(route)
    route["status"] = {
        "parents": [
            {
                "parentRef": GATEWAY,
                "controllerName": "x/y",
                "conditions": [
                    {"type": "Accepted", "status": "True", "reason": "Accepted"},
                    {
                        "type": "ResolvedRefs",
                        "status": "False",
                        "reason": "InvalidKind",
                        "message": "InferencePool is not supported",
                    },
                ],
            }
        ]
    }
    # An accepted route with an unresolved backend: accepted wins in the route's own health, so the
    # pool reading must find the unresolved reference itself.
    _, status = run(svc, *ready_world(svc), route=route, owned=owned)

    cond = next(c for c in status["conditions"] if c["type"] == "HTTPRouteReady")
    assert (cond["status"], cond["reason"]) == ("False", "InferencePoolNotAccepted")
    assert "Gateway kgateway-system/kserve-ingress-gateway cannot resolve InferencePool" in cond["message"]
    assert "InvalidKind (InferencePool is not supported)" in cond["message"]
    assert f"routing.inferencePool.apiVersion {V1ALPHA2}" in cond["message"]


def test_merge_inference_pool_field_by_field() -> None:
    shared = {
        "enabled": True,
        "apiVersion": V1ALPHA2,
        "endpointPicker": {"replicas": 3, "resources": {"limits": {"cpu": "1"}}},
    }
    own = {"apiVersion": None, "endpointPicker": {"resources": {"requests": {"cpu": "100m"}}, "image": None}}

    assert merge_inference_pool(shared, own) == {
        "enabled": True,
        "apiVersion": V1ALPHA2,
        "endpointPicker": {"replicas": 3, "resources": {"requests": {"cpu": "100m"}}},  # resources taken whole
    }
    assert merge_inference_pool(None, None) == {}
    assert merge_inference_pool({"enabled": True}, {"enabled": False}) == {"enabled": False}


def test_routing_settings_without_inference_pool_are_the_plain_merge() -> None:
    svc = service("chat").model_name(QWEN).routing(gateway=GATEWAY, requestTimeout="30s")
    config = {"routing": {"enabled": True, "annotations": {"a": "b"}}}

    assert routing_settings(svc, config) == {
        "enabled": True,
        "annotations": {"a": "b"},
        "gatewayRef": GATEWAY,
        "requestTimeout": "30s",
    }


def test_the_builder_applies_picker_objects_by_the_derived_names() -> None:
    svc = pool_service()
    plan, _ = run(svc, *ready_world(svc))
    names = {d.resource.kind: d.obj["metadata"]["name"] for d in plan.apply}
    picker = names["Deployment"]
    assert picker.startswith("epp-chat-") and len(picker) <= 63
    assert {names[k] for k in PICKER_KINDS} == {picker}
    assert names["InferencePool"].startswith("chat-") and names["InferencePool"] != names["HTTPRoute"]
    assert applied(plan, "InferencePool")[0]["spec"]["endpointPickerRef"]["name"] == picker
