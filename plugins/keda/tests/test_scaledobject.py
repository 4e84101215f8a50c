"""What ``aim-engine describe`` shows of the ScaledObject KServe builds (bounds, triggers, KEDA's verdict)."""

from __future__ import annotations

import pytest
from aim_plugin_keda.autoscaler import KedaAutoscaler

from aim_core import DescribesRelated, ScalingRequest, State

from .test_keda_autoscaler import NAME, POD_METRIC, applied, scaledobject_kserve_would_build


def built(request: ScalingRequest, conditions: list[dict] | None = None) -> dict:
    obj = scaledobject_kserve_would_build(applied(request))
    if conditions is not None:
        obj["status"] = {"conditions": conditions}
    return obj


READY = {"type": "Ready", "status": "True", "reason": "ScaledObjectReady"}


def test_the_autoscaler_names_the_scaledobject_kserve_builds():
    keda = KedaAutoscaler()
    assert isinstance(keda, DescribesRelated)
    [(ref, name)] = keda.related(NAME)
    assert (ref.api_version, ref.kind, ref.plural, name) == (
        "keda.sh/v1alpha1",
        "ScaledObject",
        "scaledobjects",
        f"{NAME}-predictor",
    )
    assert keda.scaler(NAME)[1] == f"keda-hpa-{name}"  # KEDA names its HPA after the ScaledObject


@pytest.mark.parametrize(
    ("request_", "triggers"),
    [
        (ScalingRequest(min_replicas=1, max_replicas=3), ["cpu Utilization 80"]),
        (
            ScalingRequest(min_replicas=2, max_replicas=5, metrics=(POD_METRIC,)),
            [
                f'external sum(vllm:num_requests_running{{namespace="default", deployment="{NAME}-predictor"}}) target 1 '
                "via keda-otel-scaler.keda.svc:4318"
            ],
        ),
    ],
    ids=["bounds-only", "pod-metric"],
)
def test_bounds_and_triggers_are_summarised(request_, triggers):
    shown = KedaAutoscaler().describe(built(request_, [READY]))
    assert shown.details["minReplicas"] == request_.min_replicas
    assert shown.details["maxReplicas"] == request_.max_replicas
    assert shown.details["triggers"] == triggers


@pytest.mark.parametrize(
    ("conditions", "state", "reason", "shown"),
    [
        (None, State.PROGRESSING, "WaitingForKEDA", {}),
        (
            [READY, {"type": "Active", "status": "True", "reason": "ScalerActive"}],
            State.READY,
            "ScalerActive",
            {"Ready": "True", "Active": "True"},
        ),
        (
            [READY, {"type": "Active", "status": "False", "reason": "ScalerNotActive"}],
            State.READY,
            "ScalerNotActive",
            {"Ready": "True", "Active": "False"},
        ),
        (
            [
                {"type": "Ready", "status": "False", "reason": "ScaledObjectCheckFailed", "message": "no such target"},
                {"type": "Paused", "status": "False"},
            ],
            State.FAILED,
            "ScaledObjectCheckFailed",
            {"Ready": "False", "Paused": "False"},
        ),
    ],
    ids=["no-status", "active", "not-active", "refused"],
)
def test_keda_conditions_decide_its_state(conditions, state, reason, shown):
    described = KedaAutoscaler().describe(built(ScalingRequest(min_replicas=1, max_replicas=3), conditions))
    assert (described.health.state, described.health.reason) == (state, reason)
    assert described.details["conditions"] == shown
    if state is State.FAILED:
        assert described.health.message == "no such target"


def test_a_scaledobject_without_triggers_or_bounds_says_what_keda_will_do():
    bare = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "x"},
        "spec": {"scaleTargetRef": {"name": "x"}},
    }
    described = KedaAutoscaler().describe(bare)
    assert (described.details["minReplicas"], described.details["maxReplicas"]) == (0, 100)  # KEDA's defaults
    assert described.details["triggers"] == []
    assert (described.health.state, described.health.reason) == (State.FAILED, "NoTriggers")
