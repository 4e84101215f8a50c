"""Reading the KEDA ScaledObject that KServe builds for an InferenceService, for ``aim-engine describe``.

KServe names it ``<isvc>-predictor`` (wire-facts 2.7); KEDA then creates the HPA
``keda-hpa-<isvc>-predictor`` from it. The operator never writes it: it is shown
so that a user sees the bounds and triggers KEDA actually scales on, and KEDA's
own verdict (``Ready``: the object is valid; ``Active``: a trigger asks for more
than the minimum).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core import Described, Health, ResourceRef, State

SCALED_OBJECT = ResourceRef("keda.sh/v1alpha1", "ScaledObject", "scaledobjects")

# KEDA's defaults when the spec leaves the bounds out (keda.sh/v1alpha1 ScaledObject).
DEFAULT_MIN_REPLICAS = 0
DEFAULT_MAX_REPLICAS = 100

_SHOWN_CONDITIONS = ("Ready", "Active", "Fallback", "Paused")


def name(serving_name: str) -> str:
    return f"{serving_name}-predictor"


# KServe's default for where pod metrics go (its opentelemetryCollector configmap entry).
DEFAULT_SCALER_ADDRESS = "keda-otel-scaler.keda.svc:4318"
DEFAULT_CPU_UTILIZATION = "80"


def for_leader_worker_set(lws: Mapping[str, Any], request: Any) -> dict[str, Any]:
    """The ScaledObject that scales a LeaderWorkerSet by whole groups, with a service's bounds and metrics.

    Triggers as KServe builds them for an InferenceService: one ``external`` trigger per pod metric
    (``sum(<query>{namespace, leaderworkerset})`` at the metric's server, else KServe's default
    ``keda-otel-scaler``; the pods' metrics must reach it with those attributes), else CPU utilisation
    of 80 %.
    """
    meta = lws.get("metadata") or {}
    serving, namespace = str(meta.get("name")), meta.get("namespace")
    triggers: list[dict[str, Any]] = []
    for metric in request.metrics:
        block = metric.get("podmetric") or {}
        source, target = block.get("metric") or {}, block.get("target") or {}
        query = source.get("query") or (source.get("metricNames") or [""])[0]
        if metric.get("type") != "PodMetric" or not query:
            raise ValueError("a PodMetric autoscaling metric needs a 'podmetric' block with a metric query")
        trigger_meta = {
            "scalerAddress": source.get("serverAddress") or DEFAULT_SCALER_ADDRESS,
            "metricQuery": f'sum({query}{{namespace="{namespace}", leaderworkerset="{serving}"}})',
            "targetValue": str(target.get("value") if target.get("value") is not None else "0"),
        }
        if source.get("operationOverTime"):
            trigger_meta["operationOverTime"] = str(source["operationOverTime"])
        triggers.append({"type": "external", "metadata": trigger_meta})
    if not triggers:
        triggers = [{"type": "cpu", "metricType": "Utilization", "metadata": {"value": DEFAULT_CPU_UTILIZATION}}]
    return {
        "apiVersion": SCALED_OBJECT.api_version,
        "kind": SCALED_OBJECT.kind,
        "metadata": {"name": name(serving), "namespace": namespace, "labels": dict(meta.get("labels") or {})},
        "spec": {
            "scaleTargetRef": {"apiVersion": lws.get("apiVersion"), "kind": lws.get("kind"), "name": serving},
            "minReplicaCount": request.min_replicas,
            "maxReplicaCount": max(request.max_replicas, request.min_replicas),
            "triggers": triggers,
        },
    }


def describe(live: Mapping[str, Any]) -> Described:
    """Bounds, triggers and conditions of a ScaledObject, and its health from ``Ready``."""
    spec = live.get("spec") or {}
    conditions = {
        c.get("type"): c for c in (live.get("status") or {}).get("conditions") or () if isinstance(c, Mapping)
    }
    details: dict[str, Any] = {
        "minReplicas": spec.get("minReplicaCount", DEFAULT_MIN_REPLICAS),
        "maxReplicas": spec.get("maxReplicaCount", DEFAULT_MAX_REPLICAS),
        "triggers": [trigger_summary(t) for t in spec.get("triggers") or () if isinstance(t, Mapping)],
        "conditions": {t: conditions[t].get("status") for t in _SHOWN_CONDITIONS if t in conditions},
    }
    return Described(_health(conditions, details["triggers"]), details)


def _health(conditions: Mapping[str, Mapping[str, Any]], triggers: list[str]) -> Health:
    ready, active = conditions.get("Ready"), conditions.get("Active") or {}
    if ready is None:
        if not triggers:
            return Health(State.FAILED, "NoTriggers", "the ScaledObject has no triggers, which KEDA rejects")
        return Health.progressing("WaitingForKEDA", "KEDA has not reported on the ScaledObject yet")
    if ready.get("status") != "True":
        return Health(
            State.FAILED,
            str(ready.get("reason") or "ScaledObjectNotReady"),
            str(ready.get("message") or "KEDA reports the ScaledObject not ready"),
        )
    if active.get("status") == "True":
        return Health.ok(
            str(active.get("reason") or "ScalerActive"), "active: a trigger asks for more than the minimum"
        )
    return Health.ok(
        str(active.get("reason") or ready.get("reason") or "ScaledObjectReady"),
        "ready, not active: no trigger asks for more than the minimum",
    )


def trigger_summary(trigger: Mapping[str, Any]) -> str:
    """One line per trigger: its type, what it measures, the target and (for external scalers) where from.

    ``cpu Utilization 80``, ``external sum(vllm:num_requests_running{...}) target 1 via keda-otel-scaler.keda.svc:4318``.
    """
    meta = trigger.get("metadata") or {}
    parts = [str(trigger.get("type") or "?")]
    if trigger.get("name"):
        parts[0] += f" ({trigger['name']})"
    if trigger.get("metricType"):
        parts.append(str(trigger["metricType"]))
    query = meta.get("metricQuery") or meta.get("query") or meta.get("metricName")
    if query:
        parts.append(str(query))
    target = next((meta[k] for k in ("targetValue", "threshold", "value") if meta.get(k) not in (None, "")), None)
    if target is not None:
        parts.append(f"target {target}" if query else str(target))
    address = meta.get("scalerAddress") or meta.get("serverAddress")
    if address:
        parts.append(f"via {address}")
    return " ".join(parts)
