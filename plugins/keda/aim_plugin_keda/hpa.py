"""Reading the HorizontalPodAutoscaler that KEDA creates for an InferenceService (F62, F52)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core import Health, ReplicaStatus, State


def health(live: Mapping[str, Any] | None, runtime_ready: bool) -> Health:
    """Scaler health from the HPA's conditions.

    Missing -> ``HPANotFound``; ``ScalingActive`` not True -> ``WaitingForMetrics``
    while the runtime is not ready (no pods, no metrics yet), ``MetricsFailed``
    once it is; ``AbleToScale`` False -> ``ScaleTargetNotReady``; else
    ``HPAOperational``.
    """
    if live is None:
        return Health.progressing("HPANotFound", "Waiting for KEDA to create the HorizontalPodAutoscaler")
    name = (live.get("metadata") or {}).get("name", "")
    conditions = {c.get("type"): c for c in (live.get("status") or {}).get("conditions") or ()}
    active = conditions.get("ScalingActive") or {}
    if active.get("status") != "True":
        detail = _detail(active)
        if not runtime_ready:
            return Health.progressing(
                "WaitingForMetrics", f"HPA {name} is waiting for metrics until the runtime is ready{detail}"
            )
        # A Failed state without an error category: it neither blocks applying
        # children nor asks for a retry loop; the HPA reports again on its own.
        return Health(State.FAILED, "MetricsFailed", f"HPA {name} cannot read its metrics{detail}")
    able = conditions.get("AbleToScale") or {}
    if able.get("status") == "False":
        return Health.progressing("ScaleTargetNotReady", f"HPA {name} cannot scale its target{_detail(able)}")
    return Health.ok("HPAOperational", f"HPA {name} is active")


def replicas(live: Mapping[str, Any]) -> ReplicaStatus | None:
    """Bounds from the HPA spec, current and desired counts from its status.

    ``None`` until the HPA has reported a status, so that the caller falls
    back to the configured counts instead of showing zeros.
    """
    spec = live.get("spec") or {}
    status = live.get("status")
    if not status or "maxReplicas" not in spec:
        return None
    return ReplicaStatus(
        min_replicas=int(spec.get("minReplicas", 1)),
        max_replicas=int(spec["maxReplicas"]),
        current_replicas=int(status.get("currentReplicas", 0)),
        desired_replicas=int(status.get("desiredReplicas", 0)),
    )


def _detail(condition: Mapping[str, Any]) -> str:
    parts = [p for p in (condition.get("reason"), condition.get("message")) if p]
    return (": " + ", ".join(parts)) if parts else ""
