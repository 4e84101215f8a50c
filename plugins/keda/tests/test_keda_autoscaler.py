"""The KEDA autoscaler: InferenceService autoscaling fields (wire-facts 2.6-2.8) and HPA read-back (F62, F52).

Bounds without metrics: the plugin keeps KServe's ``keda`` class and adds an
explicit CPU-utilisation metric, so that KServe builds a ScaledObject with a
trigger. Upstream AIM sends no metric, and KServe then builds a ScaledObject
without triggers, which KEDA refuses. ``scaledobject_kserve_would_build``
below models KServe v0.16's translation (wire-facts 2.7) to check both
claims against KEDA's CRD.
"""

from __future__ import annotations

import copy

import pytest
from aim_plugin_keda.autoscaler import DEFAULT_METRICS, KedaAutoscaler, translate_metric

from aim_core import Autoscaler, ReplicaStatus, ScalingRequest, State
from aim_testing.crdschema import crd_errors, third_party_crd, validate_against_crd

ISVC_CRD = "serving.kserve.io_inferenceservices.yaml"
KEDA_CRD = "keda.sh_scaledobjects.yaml"
NAME = "qwen-chat-1080a608"

POD_METRIC = {
    "type": "PodMetric",
    "podmetric": {
        "metric": {
            "backend": "opentelemetry",
            "metricNames": ["vllm:num_requests_running"],
            "query": "vllm:num_requests_running",
            "operationOverTime": "avg",
        },
        "target": {"type": "Value", "value": "1"},
    },
}


def isvc(annotations: dict | None = None, **predictor) -> dict:
    """An InferenceService as the kserve runtime builder makes it."""
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": NAME,
            "namespace": "default",
            "labels": {"app.kubernetes.io/component": "inference"},
            "annotations": dict(annotations or {}),
        },
        "spec": {
            "predictor": {
                **predictor,
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": "docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5",
                        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "4", "amd.com/gpu": "1"}, "limits": {"amd.com/gpu": "1"}},
                    }
                ],
            }
        },
    }


def applied(request: ScalingRequest | None, obj: dict | None = None) -> dict:
    objects = [obj if obj is not None else isvc(minReplicas=1, maxReplicas=1)]
    KedaAutoscaler().apply(objects, request)
    return objects[0]


def test_is_an_autoscaler():
    assert isinstance(KedaAutoscaler(), Autoscaler)
    assert KedaAutoscaler().name == "keda"


# ---------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------


def test_pod_metrics_upstream_e2e_example():
    obj = applied(ScalingRequest(min_replicas=1, max_replicas=3, metrics=(POD_METRIC,)))
    assert obj["metadata"]["annotations"] == {
        "serving.kserve.io/autoscalerClass": "keda",
        "sidecar.opentelemetry.io/inject": f"{NAME}-predictor",
        "prometheus.kserve.io/port": "8000",
    }
    predictor = obj["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 3)
    assert predictor["autoScaling"] == {"metrics": [POD_METRIC]}
    validate_against_crd(obj, third_party_crd(ISVC_CRD))


def test_fixed_replicas():
    obj = applied(None, isvc({"serving.kserve.io/autoscalerClass": "none"}, minReplicas=3, maxReplicas=3))
    assert obj["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "none"}
    predictor = obj["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (3, 3)
    assert "autoScaling" not in predictor
    validate_against_crd(obj, third_party_crd(ISVC_CRD))


def test_switching_back_to_fixed_drops_every_autoscaling_field():
    obj = applied(ScalingRequest(min_replicas=1, max_replicas=3, metrics=(POD_METRIC,)))
    KedaAutoscaler().apply([obj], None)
    assert obj["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "none"}
    assert "autoScaling" not in obj["spec"]["predictor"]
    assert obj["spec"]["predictor"]["maxReplicas"] == obj["spec"]["predictor"]["minReplicas"] == 1


def test_bounds_without_metrics_use_an_explicit_cpu_metric_and_no_otel_sidecar():
    obj = applied(ScalingRequest(min_replicas=2, max_replicas=5))
    assert obj["metadata"]["annotations"] == {"serving.kserve.io/autoscalerClass": "keda"}
    predictor = obj["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 5)
    assert predictor["autoScaling"] == {
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]
    }
    validate_against_crd(obj, third_party_crd(ISVC_CRD))
    # The default is copied, never shared.
    predictor["autoScaling"]["metrics"][0]["resource"]["name"] = "memory"
    assert DEFAULT_METRICS[0]["resource"]["name"] == "cpu"


def test_max_below_min_is_raised_to_min_as_kserve_would():
    predictor = applied(ScalingRequest(min_replicas=4, max_replicas=2))["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (4, 4)


def test_needs_an_inference_service():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}
    with pytest.raises(ValueError, match="serving objects are: Deployment"):
        KedaAutoscaler().apply([deployment], ScalingRequest(min_replicas=1, max_replicas=2))


def test_only_the_inference_service_is_touched():
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    objects = [copy.deepcopy(other), isvc(minReplicas=1, maxReplicas=1)]
    KedaAutoscaler().apply(objects, ScalingRequest(min_replicas=1, max_replicas=2, metrics=(POD_METRIC,)))
    assert objects[0] == other
    assert objects[1]["spec"]["predictor"]["maxReplicas"] == 2


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        (POD_METRIC, POD_METRIC),
        (
            # Unset fields are left out, server address and other targets pass through.
            {
                "type": "PodMetric",
                "podmetric": {
                    "metric": {
                        "backend": "opentelemetry",
                        "serverAddress": "otel.keda:4318",
                        "query": "q",
                        "metricNames": None,
                    },
                    "target": {"type": "AverageValue", "averageValue": "500m", "value": None},
                },
            },
            {
                "type": "PodMetric",
                "podmetric": {
                    "metric": {"backend": "opentelemetry", "serverAddress": "otel.keda:4318", "query": "q"},
                    "target": {"type": "AverageValue", "averageValue": "500m"},
                },
            },
        ),
        (
            {"type": "PodMetric", "podmetric": {"metric": {"query": "q"}, "target": {"type": "Value", "value": 2.5}}},
            {"type": "PodMetric", "podmetric": {"metric": {"query": "q"}, "target": {"type": "Value", "value": "2.5"}}},
        ),
        (
            {
                "type": "PodMetric",
                "podmetric": {"metric": {"query": "q"}, "target": {"type": "Utilization", "averageUtilization": 70}},
            },
            {
                "type": "PodMetric",
                "podmetric": {"metric": {"query": "q"}, "target": {"type": "Utilization", "averageUtilization": 70}},
            },
        ),
    ],
)
def test_translate_metric(metric, expected):
    translated = translate_metric(metric)
    assert translated == expected
    obj = isvc(minReplicas=1, maxReplicas=2, autoScaling={"metrics": [translated]})
    validate_against_crd(obj, third_party_crd(ISVC_CRD))


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ({"type": "Resource", "resource": {"name": "cpu"}}, "'Resource' is not supported"),
        ({"type": "PodMetric"}, "needs a 'podmetric' block"),
        ({"type": "PodMetric", "podMetric": {}}, "needs a 'podmetric' block"),
    ],
)
def test_translate_metric_rejects(metric, message):
    with pytest.raises(ValueError, match=message):
        translate_metric(metric)


# ---------------------------------------------------------------------------
# What KServe builds from it (a model of wire-facts 2.7, KServe v0.16)
# ---------------------------------------------------------------------------


def scaledobject_kserve_would_build(obj: dict) -> dict:
    name = obj["metadata"]["name"]
    namespace = obj["metadata"]["namespace"]
    predictor = obj["spec"]["predictor"]
    triggers = []
    for metric in (predictor.get("autoScaling") or {}).get("metrics", []):
        if metric["type"] == "PodMetric" and metric["podmetric"]["metric"].get("backend") == "opentelemetry":
            source, target = metric["podmetric"]["metric"], metric["podmetric"]["target"]
            meta = {
                "scalerAddress": source.get("serverAddress") or "keda-otel-scaler.keda.svc:4318",
                "metricQuery": f'sum({source["query"]}{{namespace="{namespace}", deployment="{name}-predictor"}})',
                "targetValue": str(target.get("value", "0")),
            }
            if source.get("operationOverTime"):
                meta["operationOverTime"] = source["operationOverTime"]
            triggers.append({"type": "external", "metadata": meta})
        elif metric["type"] == "Resource":
            target = metric["resource"]["target"]
            triggers.append(
                {
                    "type": metric["resource"]["name"],
                    "metricType": target["type"],
                    "metadata": {"value": str(target["averageUtilization"])},
                }
            )
    minimum = predictor.get("minReplicas", 1)
    spec = {
        "scaleTargetRef": {"name": f"{name}-predictor"},
        "minReplicaCount": minimum,
        "maxReplicaCount": max(predictor.get("maxReplicas", minimum), minimum),
    }
    if triggers:  # KServe's slice stays nil without metrics, and a nil slice is written as null
        spec["triggers"] = triggers
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": f"{name}-predictor", "namespace": namespace},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "request_",
    [
        ScalingRequest(min_replicas=1, max_replicas=3, metrics=(POD_METRIC,)),
        ScalingRequest(min_replicas=1, max_replicas=3),
        ScalingRequest(min_replicas=2, max_replicas=2),
    ],
    ids=["pod-metric", "bounds-only", "min-equals-max"],
)
def test_kserve_gets_what_it_needs_for_a_valid_scaledobject(request_):
    scaled = scaledobject_kserve_would_build(applied(request_))
    assert scaled["spec"]["triggers"]
    validate_against_crd(scaled, third_party_crd(KEDA_CRD))


def test_upstream_bounds_only_shape_would_give_keda_an_invalid_scaledobject():
    upstream = isvc(
        {
            "serving.kserve.io/autoscalerClass": "keda",
            "sidecar.opentelemetry.io/inject": f"{NAME}-predictor",
            "prometheus.kserve.io/port": "8000",
        },
        minReplicas=1,
        maxReplicas=3,
    )
    assert crd_errors(scaledobject_kserve_would_build(upstream), third_party_crd(KEDA_CRD)) == [
        "$.spec: 'triggers' is a required property"
    ]


# ---------------------------------------------------------------------------
# The HPA KEDA creates
# ---------------------------------------------------------------------------


def test_scaler_is_the_keda_hpa():
    ref, name = KedaAutoscaler().scaler(NAME)
    assert (ref.api_version, ref.kind, ref.plural) == (
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
    )
    assert name == f"keda-hpa-{NAME}-predictor"


def hpa(*conditions: tuple[str, str, str], status: dict | None = None) -> dict:
    obj = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{NAME}-predictor", "namespace": "default"},
        "spec": {
            "minReplicas": 1,
            "maxReplicas": 3,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"{NAME}-predictor"},
        },
        "status": {
            "currentReplicas": 2,
            "desiredReplicas": 3,
            "conditions": [{"type": t, "status": s, "reason": r, "message": f"{r} message"} for t, s, r in conditions],
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


ACTIVE = ("ScalingActive", "True", "ValidMetricFound")
ABLE = ("AbleToScale", "True", "ReadyForNewScale")
INACTIVE = ("ScalingActive", "False", "FailedGetExternalMetric")


@pytest.mark.parametrize(
    ("live", "runtime_ready", "state", "reason", "in_message"),
    [
        (None, False, State.PROGRESSING, "HPANotFound", "KEDA"),
        (None, True, State.PROGRESSING, "HPANotFound", ""),
        (hpa(ABLE, ACTIVE), True, State.READY, "HPAOperational", ""),
        (hpa(ABLE, INACTIVE), False, State.PROGRESSING, "WaitingForMetrics", "FailedGetExternalMetric"),
        (hpa(ABLE, INACTIVE), True, State.FAILED, "MetricsFailed", "FailedGetExternalMetric message"),
        (hpa(ABLE), True, State.FAILED, "MetricsFailed", ""),  # no ScalingActive yet counts as not active
        (
            hpa(("AbleToScale", "False", "FailedGetScale"), ACTIVE),
            True,
            State.PROGRESSING,
            "ScaleTargetNotReady",
            "FailedGetScale",
        ),
    ],
)
def test_health(live, runtime_ready, state, reason, in_message):
    health = KedaAutoscaler().health(live, runtime_ready)
    assert (health.state, health.reason) == (state, reason), health
    assert health.category is None
    assert in_message in health.message


def test_replicas_from_spec_and_status():
    assert KedaAutoscaler().replicas(hpa(ABLE, ACTIVE)) == ReplicaStatus(
        min_replicas=1, max_replicas=3, current_replicas=2, desired_replicas=3
    )


def test_replicas_unknown_until_the_hpa_reports():
    assert KedaAutoscaler().replicas(hpa(status={})) is None
    partial = hpa(status={"currentReplicas": 1})
    assert KedaAutoscaler().replicas(partial) == ReplicaStatus(1, 3, 1, 0)
