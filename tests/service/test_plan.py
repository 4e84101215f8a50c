"""The whole AIMService plan (F46-F62): what it applies, and the status a user then sees.

Each test builds the objects a cluster would hold (see :mod:`tests.service.builders`),
runs :func:`plan_service` over a real ``Observed`` (installed plugins, MI300X nodes)
and checks the plan's children and the status ``build_status`` derives from it.
Caching and autoscaling are in ``test_plan_caching.py``; bad input in
``test_plan_bad_input.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aim_core.reconcile.naming import derived_template_name, inference_service_name
from aim_core.runtime.applyset import needs_apply
from tests.service.builders import (
    GATEWAY,
    IMAGE,
    MI300X_IDS,
    NS,
    QWEN,
    QWEN_TEMPLATE,
    applied,
    cluster_config,
    condition,
    controller,
    kinds,
    live,
    one,
    pod,
    prepared,
    qwen_model,
    qwen_template,
    ready_cache,
    ready_world,
    reason,
    run,
    service,
    template,
)

# ---------------------------------------------------------------- happy path


def test_ready_model_template_and_cache_plan_the_documented_inference_service() -> None:
    svc = service("chat").model_name(QWEN).replicas(2).env("VLLM_LOGGING_LEVEL", "DEBUG")
    config = cluster_config().env("VLLM_LOGGING_LEVEL", "WARNING").env("HF_HOME", "/workspace/hf")
    model, tpl, cache = ready_world(svc, gpus=2)

    plan, status = run(svc, model, tpl, cache, config)

    assert plan.issues == []
    assert kinds(plan) == ["InferenceService"]  # the cache exists, routing is off
    assert plan.apply[0].owned
    isvc = one(plan, "InferenceService")
    assert isvc["apiVersion"] == "serving.kserve.io/v1beta1"
    assert isvc["metadata"]["name"] == inference_service_name("chat", NS) == "chat-a04542d9"
    assert isvc["metadata"]["namespace"] == NS
    assert isvc["metadata"]["labels"] == {
        "aim.eai.amd.com/template": QWEN_TEMPLATE,
        "aim.eai.amd.com/service": "chat",
        "aim.eai.amd.com/model": QWEN,
        "aim.eai.amd.com/metric": "latency",
        "aim.eai.amd.com/precision": "fp8",
        "app.kubernetes.io/component": "inference",
        "app.kubernetes.io/managed-by": "aim-engine",
    }
    assert isvc["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "none"}
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 2)
    assert "model" not in predictor and "storageUri" not in str(predictor)
    [container] = predictor["containers"]
    assert container["name"] == "kserve-container"
    assert container["image"] == IMAGE
    assert container["ports"] == [{"containerPort": 8000, "name": "http", "protocol": "TCP"}]
    # F49: defaults, config env, template profile values, service env (wins); sorted by name
    assert container["env"] == [
        {"name": "AIM_CACHE_PATH", "value": "/workspace/cache"},
        {"name": "AIM_METRIC", "value": "latency"},
        {"name": "AIM_PRECISION", "value": "fp8"},
        {"name": "AIM_PROFILE_ID", "value": "vllm-mi300x-fp8-tp1-latency"},
        {"name": "HF_HOME", "value": "/workspace/hf"},
        {"name": "VLLM_ENABLE_METRICS", "value": "true"},
        {"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"},
    ]
    # F50: 4N CPU, 32N Gi memory, 48N Gi memory limit, N GPUs; no CPU limit
    assert container["resources"] == {
        "requests": {"cpu": "8", "memory": "64Gi", "amd.com/gpu": "2"},
        "limits": {"memory": "96Gi", "amd.com/gpu": "2"},
    }
    # F48/F51: dshm first, then the cache volume of the Ready artifact
    assert predictor["volumes"] == [
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        {"name": "qwen-qwen3-32b-fp8", "persistentVolumeClaim": {"claimName": "qwen-qwen3-32b-fp8-cache-bcc76768"}},
    ]
    assert container["volumeMounts"] == [
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "qwen-qwen3-32b-fp8", "mountPath": "/workspace/cache/Qwen/Qwen3-32B-FP8"},
    ]
    assert predictor["affinity"] == {"nodeAffinity": tpl["status"]["resolvedNodeAffinity"]}
    assert (
        predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
            "matchExpressions"
        ][0]["values"]
        == MI300X_IDS
    )

    assert status["status"] == "Starting"
    assert reason(status, "Ready") == ("False", "Progressing")
    assert "InferenceService" in condition(status, "Ready")["message"]
    assert reason(status, "ModelReady") == ("True", "ModelResolved")
    assert reason(status, "TemplateReady") == ("True", "Resolved")
    assert reason(status, "CacheReady") == ("True", "CacheReady")
    assert reason(status, "InferenceServiceReady") == ("False", "CreatingRuntime")
    assert condition(status, "HTTPRouteReady") is None and condition(status, "HPAReady") is None
    assert reason(status, "RuntimeConfigReady") == ("True", "RuntimeConfigResolved")
    assert status["resolvedRuntimeConfig"]["kind"] == "AIMClusterRuntimeConfig"
    assert status["resolvedModel"] == {
        "kind": "AIMClusterModel",
        "name": QWEN,
        "scope": "Cluster",
        "uid": model["metadata"]["uid"],
    }
    assert status["resolvedTemplate"] == {
        "kind": "AIMClusterServiceTemplate",
        "name": QWEN_TEMPLATE,
        "scope": "Cluster",
        "uid": tpl["metadata"]["uid"],
    }
    assert status["cache"]["templateCacheRef"]["name"] == cache["metadata"]["name"]
    assert status["runtime"] == {
        "currentReplicas": 2,
        "desiredReplicas": 2,
        "minReplicas": 2,
        "maxReplicas": 2,
        "replicas": "2",
    }


def test_a_ready_inference_service_with_ready_pods_makes_the_service_running_and_writes_nothing() -> None:
    svc = service("chat").model_name(QWEN)
    world = ready_world(svc)
    first, _ = run(svc, *world)
    isvc = live(prepared(first, svc, "InferenceService"), ready=True)

    plan, status = run(svc, *world, runtime=isvc, pods=[pod(isvc["metadata"]["name"])])

    assert status["status"] == "Running"
    assert reason(status, "Ready") == ("True", "AllComponentsReady")
    assert reason(status, "InferenceServiceReady") == ("True", "RuntimeReady")
    assert reason(status, "InferenceServicePodsReady") == ("True", "PodsReady")
    # re-applied on every reconcile (F47), but identical to what runs: the engine sends nothing
    assert kinds(plan) == ["InferenceService"]
    assert not needs_apply(prepared(plan, svc, "InferenceService"), isvc, controller().field_manager)


@pytest.mark.parametrize(
    ("isvc_ready", "pods", "component", "expected"),
    [
        (False, [], "InferenceServiceReady", ("False", "CreatingRuntime")),
        (True, [], "InferenceServicePodsReady", ("False", "NoPods")),
        (True, [False], "InferenceServicePodsReady", ("False", "PodsStarting")),
    ],
    ids=["isvc-not-ready", "no-pods-yet", "pod-not-ready"],
)
def test_until_the_inference_service_and_its_pods_are_ready_the_service_is_starting(
    isvc_ready: bool, pods: list[bool], component: str, expected: tuple[str, str]
) -> None:
    svc = service("chat").model_name(QWEN)
    world = ready_world(svc)
    isvc = live(prepared(run(svc, *world)[0], svc, "InferenceService"), ready=isvc_ready)
    name = isvc["metadata"]["name"]

    _, status = run(svc, *world, runtime=isvc, pods=[pod(name, ready=r, index=i) for i, r in enumerate(pods)])

    assert status["status"] == "Starting"
    assert reason(status, component) == expected
    assert condition(status, "Ready")["message"].startswith("Component InferenceService")


def test_an_existing_inference_service_is_reapplied_while_the_model_is_unhealthy() -> None:
    """F47: once it exists, edits to the service reach it whatever the model's or cache's state."""
    svc = service("chat").model_name(QWEN)
    model, tpl, cache = ready_world(svc)
    running = live(prepared(run(svc, model, tpl, cache)[0], svc, "InferenceService"), ready=True)
    svc.replicas(3)

    plan, status = run(
        svc,
        qwen_model().status("Degraded", "registry unreachable"),
        tpl,
        cache,
        runtime=running,
        pods=[pod(running["metadata"]["name"])],
    )

    assert one(plan, "InferenceService")["spec"]["predictor"]["minReplicas"] == 3
    assert status["status"] == "Failed"
    assert reason(status, "ModelReady") == ("False", "ModelNotReady")
    assert "resolvedModel" not in status  # written only while the model is Ready


# ---------------------------------------------------------------- routing (F58-F60)


ROUTE_CASES: dict[str, tuple[Callable[[], Any], Callable[[], Any], str, str | None]] = {
    # id: (service, runtime config, expected path, expected request timeout)
    "via-runtime-config": (
        lambda: service("chat").model_name(QWEN),
        lambda: cluster_config().routing(requestTimeout="120s"),
        "/ml-team/{uid}",
        "2m0s",
    ),
    "via-service": (
        lambda: (
            service("chat")
            .model_name(QWEN)
            .labels(**{"example.com/team": "nlp"})
            .routing(
                gateway=GATEWAY,
                path="/{.metadata.namespace}/{.metadata.labels['example.com/team']}/{.metadata.name}",
                timeout="300s",
            )
        ),
        lambda: cluster_config(),
        "/ml-team/nlp/chat",
        "5m0s",
    ),
    "service-path-over-config": (
        lambda: service("chat").model_name(QWEN).routing(None, path="/models/{.metadata.name}"),
        lambda: cluster_config().routing(pathTemplate="/cfg/{.metadata.name}"),
        "/models/chat",
        None,
    ),
}


@pytest.mark.parametrize("case", ROUTE_CASES, ids=list(ROUTE_CASES))
def test_routing_on_plans_an_owned_httproute_to_the_predictor(case: str) -> None:
    make_svc, make_config, path, timeout = ROUTE_CASES[case]
    svc = make_svc()

    plan, status = run(svc, *ready_world(svc), make_config())

    assert kinds(plan) == ["HTTPRoute", "InferenceService"]
    assert all(d.owned for d in plan.apply)
    route = one(plan, "HTTPRoute")
    isvc_name = one(plan, "InferenceService")["metadata"]["name"]
    assert route["metadata"]["name"] == isvc_name  # same derived name for short names
    assert route["metadata"]["labels"] == {
        "aim.eai.amd.com/service": "chat",
        "app.kubernetes.io/component": "routing",
        "app.kubernetes.io/managed-by": "aim-engine",
    }
    assert route["spec"]["parentRefs"] == [GATEWAY]
    [rule] = route["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": path.format(uid=svc["metadata"]["uid"])}}]
    assert rule["filters"] == [
        {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}
    ]
    assert rule["backendRefs"] == [{"kind": "Service", "name": f"{isvc_name}-predictor", "namespace": NS, "port": 80}]
    assert rule.get("timeouts") == ({"request": timeout} if timeout else None)
    assert reason(status, "HTTPRouteReady") == ("False", "HTTPRouteCreating")
    assert "routing" not in status  # written once the route exists


def test_a_long_service_name_is_cut_for_the_inference_service_but_not_for_the_route() -> None:
    svc = service("qwen3-32b-chat-for-the-customer-support-team-eu").model_name(QWEN).routing(gateway=GATEWAY)

    plan, _ = run(svc, *ready_world(svc))

    isvc, route = one(plan, "InferenceService")["metadata"]["name"], one(plan, "HTTPRoute")
    assert len(f"{isvc}-predictor-{NS}") <= 63 and isvc.endswith("-a04542d9")
    assert len(route["metadata"]["name"]) > len(isvc)
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == f"{isvc}-predictor"


def test_an_accepted_route_is_ready_and_its_path_is_published() -> None:
    svc = service("chat").model_name(QWEN)
    config = cluster_config().routing()
    route = live(prepared(run(svc, *ready_world(svc), config)[0], svc, "HTTPRoute"))
    route["status"] = {
        "parents": [
            {
                "parentRef": GATEWAY,
                "controllerName": "kgateway.dev/kgateway",
                "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted"}],
            }
        ]
    }

    _, status = run(svc, *ready_world(svc), config, route=route)

    assert reason(status, "HTTPRouteReady") == ("True", "HTTPRouteAccepted")
    assert status["routing"] == {"path": f"/{NS}/{svc['metadata']['uid']}"}


def test_the_service_can_turn_off_routing_the_runtime_config_turns_on() -> None:
    svc = service("batch").model_name(QWEN).routing(False)

    plan, status = run(svc, *ready_world(svc), cluster_config().routing())

    assert kinds(plan) == ["InferenceService"]
    assert condition(status, "HTTPRouteReady") is None


def test_the_route_is_planned_before_the_template_is_ready() -> None:
    svc = service("chat").model_name(QWEN).routing(gateway=GATEWAY)

    plan, status = run(svc, qwen_model(), qwen_template().status("Progressing"))

    assert kinds(plan) == ["HTTPRoute"]
    assert status["status"] == "Pending"
    assert reason(status, "TemplateReady") == ("False", "TemplateNotReady")
    assert "resolvedTemplate" not in status


# ---------------------------------------------------------------- template resolution (F43-F45, F56)


def _isvc_template(plan: Any) -> str:
    return one(plan, "InferenceService")["metadata"]["labels"]["aim.eai.amd.com/template"]


def test_an_explicit_namespaced_template_is_used_and_recorded_with_its_namespace() -> None:
    svc = service("chat").model_name(QWEN).template_name("team-qwen")
    tpl = template("team-qwen", QWEN).ready().optimized().gpu("MI300X", 1).metric("throughput").precision("fp16")

    plan, status = run(svc, qwen_model(), qwen_template("team-qwen"), tpl, ready_cache(svc, tpl))

    assert _isvc_template(plan) == "team-qwen"
    assert one(plan, "InferenceService")["metadata"]["labels"]["aim.eai.amd.com/metric"] == "throughput"
    assert status["resolvedTemplate"] == {
        "kind": "AIMServiceTemplate",
        "name": "team-qwen",
        "namespace": NS,
        "scope": "Namespace",
        "uid": tpl["metadata"]["uid"],
    }


def test_an_explicit_cluster_template_is_used_even_when_unoptimized() -> None:
    svc = service("chat").model_name(QWEN).template_name("qwen-bf16")
    tpl = qwen_template("qwen-bf16").unoptimized().precision("bf16")

    plan, status = run(svc, qwen_model(), qwen_template(), tpl, ready_cache(svc, tpl))

    assert _isvc_template(plan) == "qwen-bf16"
    assert status["resolvedTemplate"]["kind"] == "AIMClusterServiceTemplate"
    assert "namespace" not in status["resolvedTemplate"]


AUTO_CASES = {
    # id: (templates, expected winner)
    "optimized-before-unoptimized": (
        lambda: [qwen_template("a-unopt").unoptimized().precision("fp4"), qwen_template("b-opt")],
        "b-opt",
    ),
    "latency-before-throughput": (
        lambda: [qwen_template("a-thr").metric("throughput"), qwen_template("b-lat")],
        "b-lat",
    ),
    "fp8-before-fp16": (lambda: [qwen_template("a-fp16").precision("fp16"), qwen_template("b-fp8")], "b-fp8"),
    "gpu-not-in-cluster-rejected": (
        lambda: [qwen_template("a-mi325x").gpu("MI325X", 1, ["74a5"]), qwen_template("b-mi300x")],
        "b-mi300x",
    ),
    "namespaced-beats-better-cluster": (
        lambda: [
            qwen_template("a-cluster"),
            template("b-team", QWEN).ready().optimized().gpu("MI300X", 1).metric("throughput"),
        ],
        "b-team",
    ),
    "not-ready-skipped": (
        lambda: [qwen_template("a-failed").status("Failed"), qwen_template("b-ready").precision("bf16")],
        "b-ready",
    ),
}


@pytest.mark.parametrize("case", AUTO_CASES, ids=list(AUTO_CASES))
def test_auto_selection_serves_the_best_ranked_template(case: str) -> None:
    make_templates, winner = AUTO_CASES[case]
    svc = service("chat").model_name(QWEN)
    templates = make_templates()
    chosen = next(t for t in templates if t.name == winner)

    plan, status = run(svc, qwen_model(), *templates, ready_cache(svc, chosen))

    assert _isvc_template(plan) == winner
    assert status["resolvedTemplate"]["name"] == winner
    assert status["status"] == "Starting"
    assert any(winner in note and "selected" in note for note in plan.notes)  # render --explain says why


def test_a_recorded_template_sticks_while_ready_even_when_a_better_one_appears() -> None:
    worse = qwen_template("qwen-fp16").precision("fp16")
    better = qwen_template("qwen-fp4").precision("fp4")
    svc = service("chat").model_name(QWEN).resolved("resolvedTemplate", worse, "Cluster")

    plan, status = run(svc, qwen_model(), worse, better, ready_cache(svc, worse))

    assert _isvc_template(plan) == "qwen-fp16"
    assert status["resolvedTemplate"]["name"] == "qwen-fp16"
    assert "status.resolvedTemplate" in condition(status, "TemplateReady")["message"]

    worse.status("NotAvailable")  # the recorded one is no longer usable: selection runs again
    plan, status = run(svc, qwen_model(), worse, better, ready_cache(svc, better))
    assert _isvc_template(plan) == "qwen-fp4"


def test_overrides_plan_an_owned_derived_template_and_use_it_once_ready() -> None:
    svc = service("chat").model_name(QWEN).template_name(QWEN_TEMPLATE).overrides(metric="throughput")
    base = qwen_template()
    derived = derived_template_name(QWEN_TEMPLATE, metric="throughput")

    plan, status = run(svc, qwen_model(), base)

    assert kinds(plan) == ["AIMServiceTemplate"]
    copy_ = one(plan, "AIMServiceTemplate")
    assert plan.apply[0].owned
    assert copy_["metadata"]["name"] == derived
    assert copy_["metadata"]["labels"]["aim.eai.amd.com/origin"] == "derived"
    assert copy_["spec"]["metric"] == "throughput" and copy_["spec"]["modelName"] == QWEN
    assert "profileId" not in copy_["spec"]  # the pinned latency profile does not fit any more
    assert status["status"] == "Pending"
    assert reason(status, "TemplateReady") == ("False", "TemplateNotReady")
    assert derived in condition(status, "Ready")["message"]
    assert "resolvedTemplate" not in status

    made = (
        template(derived, QWEN)
        .label("aim.eai.amd.com/origin", "derived")
        .ready()
        .optimized()
        .gpu("MI300X", 1)
        .metric("throughput")
        .precision("fp8")
    )
    plan, status = run(svc, qwen_model(), base, made, ready_cache(svc, made))

    assert kinds(plan) == ["AIMServiceTemplate", "InferenceService"]  # the copy stays applied
    assert _isvc_template(plan) == derived
    assert one(plan, "InferenceService")["metadata"]["labels"]["aim.eai.amd.com/metric"] == "throughput"
    assert status["resolvedTemplate"]["name"] == derived
    assert status["status"] == "Starting"


def test_by_image_the_matching_cluster_model_is_used_and_no_model_is_created() -> None:
    svc = service("by-image").model_image(IMAGE)

    plan, status = run(svc, *ready_world(svc))

    assert kinds(plan) == ["InferenceService"]
    assert status["resolvedModel"]["name"] == QWEN
    # Q24: no runtime config at all is not an error, and the service then shows no RuntimeConfigReady
    assert condition(status, "RuntimeConfigReady") is None and "resolvedRuntimeConfig" not in status


def test_by_image_without_a_model_creates_a_shared_unowned_model_and_waits() -> None:
    svc = service("by-image").model_image("docker.io/amdenterpriseai/aim-new:1.0")

    plan, status = run(svc, qwen_template())

    [model] = applied(plan, "AIMModel")
    assert not plan.apply[0].owned
    assert model["spec"]["image"] == "docker.io/amdenterpriseai/aim-new:1.0"
    assert model["metadata"]["labels"] == {"aim.eai.amd.com/origin": "auto-generated"}
    assert status["status"] == "Pending"
    assert reason(status, "ModelReady") == ("False", "CreatingModel")
    assert "resolvedModel" not in status


def test_a_not_ready_inference_service_is_not_looked_at_again_on_a_timer() -> None:
    # What explains it (Events, pods) arrives through watches and re-triggers the service.
    svc = service("chat").model_name(QWEN)
    world = ready_world(svc)
    first, _ = run(svc, *world)
    isvc = live(prepared(first, svc, "InferenceService"), ready=False)
    plan, _ = run(svc, *world, runtime=isvc)
    assert plan.requeue_after is None
    ready, _ = run(
        svc,
        *world,
        runtime=live(prepared(first, svc, "InferenceService"), ready=True),
        pods=[pod(isvc["metadata"]["name"])],
    )
    assert ready.requeue_after is None  # a Ready one is left alone until something changes
