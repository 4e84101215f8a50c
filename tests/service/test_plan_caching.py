"""The service plan's template cache (F47, F51, F63-F65, Q16) and autoscaling (F52, F61, F62, Q14)."""

from __future__ import annotations

from typing import Any

import pytest

from aim_core.reconcile.naming import dedicated_cache_name, shared_cache_name
from tests.service.builders import (
    NS,
    POD_METRIC,
    QWEN_TEMPLATE,
    cache_for,
    condition,
    hpa,
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
)


def cache_desired(plan: Any) -> Any:
    [desired] = [d for d in plan.apply if d.resource.kind == "AIMTemplateCache"]
    return desired


# ---------------------------------------------------------------- caching


def test_shared_mode_creates_an_unowned_labelled_cache_and_waits_for_it() -> None:
    svc = service("chat").model_name("qwen3-32b")

    plan, status = run(svc, qwen_model(), qwen_template())

    assert kinds(plan) == ["AIMTemplateCache"]  # no InferenceService before the cache is Ready (F47)
    desired = cache_desired(plan)
    assert not desired.owned  # shared: it outlives the service
    assert desired.obj["metadata"]["name"] == shared_cache_name(QWEN_TEMPLATE, NS)
    assert desired.obj["metadata"]["labels"] == {"aim.eai.amd.com/service": "chat"}
    assert desired.obj["spec"] == {"templateName": QWEN_TEMPLATE, "templateScope": "Cluster", "mode": "Shared"}
    assert status["status"] == "Starting"
    assert reason(status, "CacheReady") == ("False", "CacheCreating")
    assert reason(status, "InferenceServiceReady") == ("False", "CreatingRuntime")
    assert "cache" not in status


def test_shared_mode_reuses_a_ready_cache_another_service_created() -> None:
    other = service("first-user").model_name("qwen3-32b")
    tpl = qwen_template()
    shared = ready_cache(other, tpl)  # labelled with the other service
    svc = service("chat").model_name("qwen3-32b")

    plan, status = run(svc, qwen_model(), tpl, shared)

    assert kinds(plan) == ["InferenceService"]
    assert status["cache"]["templateCacheRef"] == {
        "kind": "AIMTemplateCache",
        "name": shared["metadata"]["name"],
        "namespace": NS,
        "scope": "Namespace",
        "uid": shared["metadata"]["uid"],
    }
    claim = one(plan, "InferenceService")["spec"]["predictor"]["volumes"][1]["persistentVolumeClaim"]["claimName"]
    assert claim == "qwen-qwen3-32b-fp8-cache-bcc76768"


@pytest.mark.parametrize(
    ("state", "condition_reason", "root"),
    [
        ("Progressing", "CacheNotReady", "Starting"),
        ("Pending", "CacheCreating", "Starting"),
        ("Failed", "CacheFailed", "Failed"),
    ],
)
def test_a_cache_that_is_not_ready_holds_back_the_inference_service(
    state: str, condition_reason: str, root: str
) -> None:
    svc = service("chat").model_name("qwen3-32b")
    tpl = qwen_template()

    plan, status = run(svc, qwen_model(), tpl, cache_for(svc, tpl).status(state, "downloading 3 of 33 Gi"))

    assert kinds(plan) == []  # found, so not planned again; no InferenceService either
    assert status["status"] == root
    assert reason(status, "CacheReady") == ("False", condition_reason)
    assert "cache" not in status  # the reference is written only once the cache is Ready


def test_dedicated_mode_creates_an_owned_cache_named_after_the_service_uid_and_ignores_shared_ones() -> None:
    svc = service("batch").model_name("qwen3-32b").caching("Dedicated")
    tpl = qwen_template()
    someone_elses = ready_cache(service("chat"), tpl)

    plan, status = run(svc, qwen_model(), tpl, someone_elses)

    desired = cache_desired(plan)
    assert desired.owned
    assert desired.obj["metadata"]["name"] == dedicated_cache_name(QWEN_TEMPLATE, "batch", svc["metadata"]["uid"])
    assert desired.obj["metadata"]["name"] != someone_elses["metadata"]["name"]
    assert desired.obj["spec"]["mode"] == "Dedicated"
    assert kinds(plan) == ["AIMTemplateCache"]
    assert reason(status, "CacheReady") == ("False", "CacheCreating")

    earlier = service("batch").model_name("qwen3-32b").caching("Dedicated")  # same name, recreated: new uid
    earlier["metadata"]["uid"] = "0d9c8b7a-6f5e-4d3c-2b1a-098765432100"
    plan, _ = run(svc, qwen_model(), tpl, ready_cache(earlier, tpl, mode="Dedicated"))
    assert cache_desired(plan).obj["metadata"]["name"] == desired.obj["metadata"]["name"]  # not adopted

    own = ready_cache(svc, tpl, mode="Dedicated")
    plan, status = run(svc, qwen_model(), tpl, someone_elses, own)
    assert kinds(plan) == ["InferenceService"]
    assert status["cache"]["templateCacheRef"]["name"] == own["metadata"]["name"]


@pytest.mark.parametrize(("mode", "cache_reason"), [("Shared", "CacheLost"), ("Dedicated", "CacheCreating")])
def test_a_lost_cache_degrades_the_service_but_the_running_deployment_keeps_its_volumes(
    mode: str, cache_reason: str
) -> None:
    svc = service("chat").model_name("qwen3-32b").caching(mode)
    tpl = qwen_template()
    running = live(
        prepared(run(svc, qwen_model(), tpl, ready_cache(svc, tpl, mode))[0], svc, "InferenceService"), ready=True
    )
    name = running["metadata"]["name"]

    plan, status = run(svc, qwen_model(), tpl, runtime=running, pods=[pod(name)])  # the cache is gone

    assert kinds(plan) == ["AIMTemplateCache", "InferenceService"]  # planned again; ISVC still re-applied
    predictor = one(plan, "InferenceService")["spec"]["predictor"]
    assert predictor["volumes"] == running["spec"]["predictor"]["volumes"]  # Q16: the volume stays
    assert predictor["containers"][0]["volumeMounts"] == running["spec"]["predictor"]["containers"][0]["volumeMounts"]
    assert status["status"] == "Degraded"
    assert reason(status, "CacheReady") == ("False", cache_reason)
    assert reason(status, "Ready") == ("False", cache_reason)
    assert "keeps its volumes" in condition(status, "Ready")["message"]
    assert "cache" not in status


# ---------------------------------------------------------------- autoscaling


def test_fixed_replicas_switch_autoscaling_off() -> None:
    svc = service("chat").model_name("qwen3-32b").replicas(3)

    plan, status = run(svc, *ready_world(svc))

    isvc = one(plan, "InferenceService")
    assert isvc["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "none"}
    assert (isvc["spec"]["predictor"]["minReplicas"], isvc["spec"]["predictor"]["maxReplicas"]) == (3, 3)
    assert "autoScaling" not in isvc["spec"]["predictor"]
    assert condition(status, "HPAReady") is None
    assert status["runtime"]["replicas"] == "3"


def test_bounds_and_a_pod_metric_go_to_kserve_keda_with_opentelemetry() -> None:
    svc = service("chat").model_name("qwen3-32b").scaling(1, 3, POD_METRIC)

    plan, status = run(svc, *ready_world(svc))

    isvc = one(plan, "InferenceService")
    name = isvc["metadata"]["name"]
    assert isvc["metadata"]["annotations"] == {
        "serving.kserve.io/autoscalerClass": "keda",
        "sidecar.opentelemetry.io/inject": f"{name}-predictor",
        "prometheus.kserve.io/port": "8000",
    }
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 3)
    assert predictor["autoScaling"] == {"metrics": [POD_METRIC]}  # 1:1, 'podmetric' spelled in lower case
    assert reason(status, "HPAReady") == ("False", "HPANotFound")
    # Q14: without an HPA the configured bounds are reported (upstream would say 1-1)
    assert status["runtime"] == {
        "currentReplicas": 1,
        "desiredReplicas": 1,
        "minReplicas": 1,
        "maxReplicas": 3,
        "replicas": "1/1 (1-3)",
    }


def test_bounds_without_metrics_scale_on_cpu_through_keda() -> None:
    """The keda plugin's documented choice: a CPU utilisation metric, so KServe builds a valid ScaledObject."""
    svc = service("chat").model_name("qwen3-32b").scaling(2, 5)

    plan, status = run(svc, *ready_world(svc))

    isvc = one(plan, "InferenceService")
    assert isvc["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "keda"}  # no OTel sidecar
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 5)
    assert predictor["autoScaling"] == {
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]
    }
    assert status["runtime"]["replicas"] == "2/2 (2-5)"


def test_only_a_minimum_makes_the_maximum_equal_to_it() -> None:
    svc = service("chat").model_name("qwen3-32b").scaling(2)

    predictor = one(run(svc, *ready_world(svc))[0], "InferenceService")["spec"]["predictor"]

    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 2)


def _autoscaled_with_hpa(isvc_ready: bool, active: bool) -> dict[str, Any]:
    svc = service("chat").model_name("qwen3-32b").scaling(2, 5, POD_METRIC)
    world = ready_world(svc)
    running = live(prepared(run(svc, *world)[0], svc, "InferenceService"), ready=isvc_ready)
    name = running["metadata"]["name"]
    scaler = hpa(name, minimum=2, maximum=5, current=3, desired=4, active=active)
    return run(svc, *world, runtime=running, pods=[pod(name, ready=isvc_ready)], scaler=scaler)[1]


def test_a_live_hpa_reports_the_replicas_and_makes_the_scaler_ready() -> None:
    status = _autoscaled_with_hpa(isvc_ready=True, active=True)

    assert status["runtime"] == {
        "currentReplicas": 3,
        "desiredReplicas": 4,
        "minReplicas": 2,
        "maxReplicas": 5,
        "replicas": "3/4 (2-5)",
    }
    assert reason(status, "HPAReady") == ("True", "HPAOperational")
    assert status["status"] == "Running"


@pytest.mark.parametrize(
    ("isvc_ready", "hpa_reason", "root"),
    [
        (False, "WaitingForMetrics", "Starting"),
        (True, "MetricsFailed", "Failed"),
    ],
)
def test_an_hpa_without_metrics_waits_for_the_runtime_then_fails(isvc_ready: bool, hpa_reason: str, root: str) -> None:
    status = _autoscaled_with_hpa(isvc_ready=isvc_ready, active=False)

    assert reason(status, "HPAReady") == ("False", hpa_reason)
    assert status["status"] == root
