"""The KEDA autoscaler: autoscaling through KServe's own KEDA integration.

This plugin creates no KEDA object. It marks the InferenceService with
``serving.kserve.io/autoscalerClass: keda`` and fills the predictor's
``minReplicas``, ``maxReplicas`` and ``autoScaling.metrics``; KServe then
builds the ScaledObject (and, for OpenTelemetry pod metrics, a sidecar
OpenTelemetryCollector), and KEDA builds the HPA
``keda-hpa-<isvc>-predictor`` that this plugin reads back.

Modes (``apply``):

* **Fixed** (``request is None``): ``autoscalerClass: none`` and
  ``minReplicas = maxReplicas``; no autoscaling fields.
* **Pod metrics** (``request.metrics`` given): class ``keda``, the bounds,
  the metrics translated 1:1 (the pod-metric block is spelled ``podmetric``
  in both AIM's and KServe's API), plus
  ``sidecar.opentelemetry.io/inject: <isvc>-predictor`` and
  ``prometheus.kserve.io/port: "8000"`` so that the collector KServe creates
  is injected and scrapes the server.
* **Bounds without metrics** (``min``/``max`` only): class ``keda``, the
  bounds, and one explicit metric, average CPU utilisation of 80 %
  (:data:`DEFAULT_METRICS`); no OpenTelemetry annotations.

A **LeaderWorkerSet** (a service whose replica spans several nodes, built by the lws plugin) has
no KServe to build a ScaledObject: this plugin adds one itself, named as KServe names its own
(``<name>-predictor``, so the HPA is ``keda-hpa-<name>-predictor`` either way), whose
``scaleTargetRef`` is the LeaderWorkerSet (it has a scale subresource, so KEDA scales whole groups),
with the service's bounds and triggers (:func:`scaledobject.for_leader_worker_set`). The lws builder
declares the ScaledObject kind, so the service owns it and it goes when autoscaling is turned off.

Why the last mode differs from upstream AIM: upstream sets class ``keda``
with no metrics, so KServe builds a ScaledObject with no triggers, which
KEDA's CRD rejects (``spec.triggers`` is required); the service never gets
an HPA, and the OpenTelemetry annotation names a collector KServe never
creates. Giving KServe a ``Resource``/``cpu`` metric makes it build a valid
ScaledObject with a ``cpu`` trigger. Staying on KEDA, rather than switching
to KServe's ``hpa`` class, keeps one scaler for every autoscaled service:
the HPA is always ``keda-hpa-<isvc>-predictor`` (the name the upstream
guides tell users to look at, and the one :meth:`KedaAutoscaler.scaler`
returns without knowing the mode), and adding or removing metrics later
never swaps one HPA for another. CPU is a weak load signal for a GPU
inference server (the container requests 4 CPUs per GPU), so in practice
such a service sits near its minimum unless it is CPU-bound; demand-based
scaling needs a pod metric such as ``vllm:num_requests_running``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import Described, Health, KubeObject, ReplicaStatus, ResourceRef, ScalingRequest, plain_copy
from aim_plugin_keda import hpa, scaledobject

AUTOSCALER_CLASS = "serving.kserve.io/autoscalerClass"
OTEL_INJECT = "sidecar.opentelemetry.io/inject"
PROMETHEUS_PORT = "prometheus.kserve.io/port"
SERVER_PORT = "8000"

HORIZONTAL_POD_AUTOSCALER = ResourceRef("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers")

DEFAULT_CPU_UTILIZATION = 80
DEFAULT_METRICS: tuple[Mapping[str, Any], ...] = (
    {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}},
    },
)

_POD_METRIC_FIELDS = ("backend", "serverAddress", "metricNames", "query", "operationOverTime")
_TARGET_FIELDS = ("type", "value", "averageValue", "averageUtilization")


class KedaAutoscaler:
    """Autoscaling through KServe's KEDA integration; reads the HPA KEDA creates."""

    name = "keda"

    def apply(self, objects: list[KubeObject], request: ScalingRequest | None) -> None:
        lws = _leader_worker_set(objects)
        if lws is not None:
            if request is not None:
                objects.append(scaledobject.for_leader_worker_set(lws, request))
            return
        isvc = _inference_service(objects)
        metadata = isvc.setdefault("metadata", {})
        annotations = metadata.get("annotations")
        if annotations is None:
            annotations = metadata["annotations"] = {}
        predictor = isvc.setdefault("spec", {}).setdefault("predictor", {})
        for key in (AUTOSCALER_CLASS, OTEL_INJECT, PROMETHEUS_PORT):
            annotations.pop(key, None)
        predictor.pop("autoScaling", None)

        if request is None:
            replicas = predictor.get("minReplicas", 1)
            predictor["minReplicas"] = predictor["maxReplicas"] = replicas
            annotations[AUTOSCALER_CLASS] = "none"
            return

        annotations[AUTOSCALER_CLASS] = "keda"
        predictor["minReplicas"] = request.min_replicas
        # KServe scales up to max(maxReplicas, minReplicas); say so on the object.
        predictor["maxReplicas"] = max(request.max_replicas, request.min_replicas)
        metrics = [translate_metric(m) for m in request.metrics]
        if not metrics:
            metrics = [plain_copy(m) for m in DEFAULT_METRICS]
        if any(m["type"] == "PodMetric" for m in metrics):
            annotations[OTEL_INJECT] = f"{metadata['name']}-predictor"
            annotations[PROMETHEUS_PORT] = SERVER_PORT
        predictor["autoScaling"] = {"metrics": metrics}

    def scaler(self, serving_name: str) -> tuple[ResourceRef, str]:
        return HORIZONTAL_POD_AUTOSCALER, f"keda-hpa-{serving_name}-predictor"

    def health(self, live: Mapping[str, Any] | None, runtime_ready: bool) -> Health:
        return hpa.health(live, runtime_ready)

    def replicas(self, live: Mapping[str, Any]) -> ReplicaStatus | None:
        return hpa.replicas(live)

    def related(self, serving_name: str) -> Sequence[tuple[ResourceRef, str]]:
        return [(scaledobject.SCALED_OBJECT, scaledobject.name(serving_name))]

    def describe(self, live: Mapping[str, Any]) -> Described:
        return scaledobject.describe(live)


def translate_metric(metric: Mapping[str, Any]) -> dict[str, Any]:
    """One AIM ``spec.autoScaling.metrics`` entry as a KServe ``autoScaling.metrics`` entry.

    Only ``PodMetric`` exists in AIM's API. Unset fields are left out;
    quantities stay strings (KServe writes back the string it was given).

    :raises ValueError: another metric type, or a pod metric without its block.
    """
    kind = metric.get("type")
    if kind != "PodMetric":
        raise ValueError(f"autoscaling metric type {kind!r} is not supported; use PodMetric")
    block = metric.get("podmetric")
    if not isinstance(block, Mapping):
        raise ValueError("a PodMetric autoscaling metric needs a 'podmetric' block with 'metric' and 'target'")
    source = block.get("metric") or {}
    target = block.get("target") or {}
    return {
        "type": "PodMetric",
        "podmetric": {
            "metric": {k: plain_copy(source[k]) for k in _POD_METRIC_FIELDS if source.get(k) is not None},
            "target": {k: _quantity(k, target[k]) for k in _TARGET_FIELDS if target.get(k) is not None},
        },
    }


def _quantity(field: str, value: Any) -> Any:
    """Target values are int-or-string quantities; a float would be rejected, so it is written as text."""
    if field in ("value", "averageValue") and isinstance(value, float):
        return format(value, "g")
    return value


def _leader_worker_set(objects: Sequence[KubeObject]) -> KubeObject | None:
    """The LeaderWorkerSet of a service whose replica spans several nodes (KServe does not build those)."""
    return next(
        (
            o
            for o in objects
            if o.get("kind") == "LeaderWorkerSet"
            and str(o.get("apiVersion", "")).startswith("leaderworkerset.x-k8s.io/")
        ),
        None,
    )


def _inference_service(objects: Sequence[KubeObject]) -> KubeObject:
    for obj in objects:
        if obj.get("kind") == "InferenceService" and str(obj.get("apiVersion", "")).startswith("serving.kserve.io/"):
            return obj
    kinds = ", ".join(str(o.get("kind")) for o in objects) or "none"
    raise ValueError(
        f"the keda autoscaler works through a KServe InferenceService, but the serving objects are: {kinds}"
    )
