"""The KServe runtime builder: one ``serving.kserve.io/v1beta1`` InferenceService per service.

The core resolves everything AIM-specific (name, labels, env, resources,
cache volumes, node affinity, replicas) and hands over plain values in a
:class:`~aim_core.RuntimeRequest`. This module only places them in the
InferenceService shape and reads the object's health back.

The serving container is inline in ``spec.predictor.containers`` (a KServe
"custom predictor"): no ``model``, ``storageUri`` or ServingRuntime.

Replicas: fixed replicas (``request.replicas``) give ``minReplicas =
maxReplicas = replicas`` and ``serving.kserve.io/autoscalerClass: none``, which
is KServe's own switch for "no autoscaler", so it is set here and a cluster
without any autoscaler plugin still gets a complete object. With
``min_replicas``/``max_replicas`` instead, the bounds are set and the
annotation is left to the autoscaler, which the core applies next. With
nothing set the service runs one replica, fixed.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aim_core import Health, KubeObject, ResourceRef, RuntimeRequest, State, carry_over_storage, plain_copy

INFERENCESERVICE = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")

CONTAINER_NAME = "kserve-container"
CONTAINER_PORT = 8000
AUTOSCALER_CLASS = "serving.kserve.io/autoscalerClass"
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "aim-engine"
POD_SELECTOR_LABEL = "serving.kserve.io/inferenceservice"

SHM_VOLUME = "dshm"
SHM_MOUNT_PATH = "/dev/shm"
SHM_SIZE = "8Gi"

# KServe reports a failed optimistic-lock update ("Operation cannot be fulfilled
# on ...: the object has been modified") as an InternalError; it retries by
# itself, so such a message does not make the runtime Failed (as upstream).
_TRANSIENT_INTERNAL_ERRORS = ("Operation cannot be fulfilled", "the object has been modified")


def _transient(message: str) -> bool:
    return any(marker in message for marker in _TRANSIENT_INTERNAL_ERRORS)


class InferenceServiceBuilder:
    """Builds a KServe InferenceService and reads its health back."""

    name = "kserve"
    resource = INFERENCESERVICE

    def build(self, request: RuntimeRequest) -> list[KubeObject]:
        predictor: dict[str, Any] = {}
        annotations: dict[str, str] = {}
        if request.replicas is not None or (request.min_replicas is None and request.max_replicas is None):
            replicas = 1 if request.replicas is None else request.replicas
            predictor["minReplicas"] = predictor["maxReplicas"] = replicas
            annotations[AUTOSCALER_CLASS] = "none"
        else:
            minimum = request.min_replicas if request.min_replicas is not None else 1
            predictor["minReplicas"] = minimum
            predictor["maxReplicas"] = request.max_replicas if request.max_replicas is not None else minimum
        if request.image_pull_secrets:
            predictor["imagePullSecrets"] = plain_copy(request.image_pull_secrets)
        if request.service_account_name:
            predictor["serviceAccountName"] = request.service_account_name
        if request.priority_class_name:
            predictor["priorityClassName"] = request.priority_class_name

        container: dict[str, Any] = {
            "name": CONTAINER_NAME,
            "image": request.image,
            "ports": [{"containerPort": CONTAINER_PORT, "name": "http", "protocol": "TCP"}],
        }
        if request.env:
            container["env"] = plain_copy(request.env)
        if request.resources:
            container["resources"] = plain_copy(request.resources)
        container["volumeMounts"] = [
            {"name": SHM_VOLUME, "mountPath": SHM_MOUNT_PATH},
            *plain_copy(request.volume_mounts),
        ]
        volumes = [
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}},
            *plain_copy(request.volumes),
        ]
        if request.live is not None:
            live_pod = (request.live.get("spec") or {}).get("predictor") or {}
            carry_over_storage(
                live_pod,
                _live_container(live_pod),
                container["volumeMounts"],
                volumes,
                tuple(getattr(request, "owned_volume_prefixes", ()) or ()),
            )
        predictor["containers"] = [container]
        predictor["volumes"] = volumes
        affinity = request.affinity
        if affinity:
            predictor["affinity"] = plain_copy(affinity)
        elif request.node_affinity:
            predictor["affinity"] = {"nodeAffinity": plain_copy(request.node_affinity)}
        if request.node_selector:
            predictor["nodeSelector"] = dict(request.node_selector)
        if request.tolerations:
            predictor["tolerations"] = plain_copy(request.tolerations)

        labels = {**request.labels, LABEL_COMPONENT: "inference", LABEL_MANAGED_BY: MANAGED_BY}
        isvc: KubeObject = {
            "apiVersion": INFERENCESERVICE.api_version,
            "kind": INFERENCESERVICE.kind,
            "metadata": {
                "name": request.name,
                "namespace": request.namespace,
                "labels": labels,
                "annotations": annotations,
            },
            "spec": {"predictor": predictor},
        }
        return [isvc]

    def health(
        self, live: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
    ) -> Health:
        """InferenceService health (F53). Pods are a separate component, inspected by the core."""
        if live is None:
            return Health.progressing("CreatingRuntime", "Creating the InferenceService")
        name = (live.get("metadata") or {}).get("name", "")
        ready = _condition(live, "Ready")
        if ready is not None and ready.get("status") == "True":
            return Health.ok("RuntimeReady", f"InferenceService {name} is ready")

        warning = _latest(
            e
            for e in _own_events(live, events)
            if e.get("type") == "Warning"
            and (
                e.get("reason") == "ServerlessModeRejected"
                or (e.get("reason") == "InternalError" and not _transient(e.get("message", "")))
            )
        )
        if warning is not None and warning.get("reason") == "ServerlessModeRejected":
            # Failed with this reason and no error category, as upstream: the service's Ready
            # names ServerlessModeRejected and no ConfigValid appears (the AIMService spec is fine;
            # KServe's deployment mode is what needs changing).
            return Health(
                State.FAILED,
                "ServerlessModeRejected",
                f"KServe rejected InferenceService {name} in Serverless mode: {warning.get('message', '')}. "
                "AIM needs KServe's RawDeployment (Standard) deployment mode; set it as the KServe default",
            )
        if warning is not None:
            return Health(
                State.FAILED,
                "InternalError",
                f"KServe failed to reconcile InferenceService {name}: {warning.get('message', '')}",
            )

        detail = ""
        if ready is not None and (ready.get("reason") or ready.get("message")):
            detail = ": " + ", ".join(p for p in (ready.get("reason"), ready.get("message")) if p)
        return Health.progressing("CreatingRuntime", f"InferenceService {name} is not ready yet{detail}")

    def backend_service(self, name: str) -> str:
        return f"{name}-predictor"

    def pod_selector(self, name: str) -> Mapping[str, str]:
        return {POD_SELECTOR_LABEL: name}


def _live_container(predictor: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The serving container of the live predictor; its first container if none has our name."""
    containers = predictor.get("containers") or ()
    found = next((c for c in containers if c.get("name") == CONTAINER_NAME), None)
    if found is None and containers:
        return containers[0]
    return found


def _condition(obj: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == type_:
            return cond
    return None


def _own_events(live: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> Iterable[Mapping[str, Any]]:
    """Events about this InferenceService: same UID, so events of a deleted predecessor do not count."""
    meta = live.get("metadata") or {}
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if involved.get("kind", INFERENCESERVICE.kind) != INFERENCESERVICE.kind:
            continue
        if meta.get("uid"):
            if involved.get("uid") == meta["uid"]:
                yield event
        elif involved.get("name") == meta.get("name"):
            yield event


def _event_time(event: Mapping[str, Any]) -> datetime.datetime:
    series = event.get("series") or {}
    meta = event.get("metadata") or {}
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        meta.get("creationTimestamp"),
    ):
        if value:
            try:
                parsed = datetime.datetime.fromisoformat(str(value))
            except ValueError:
                continue
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
    return datetime.datetime.min.replace(tzinfo=datetime.UTC)


def _latest(events: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    ordered = sorted(events, key=_event_time)  # stable: equal times keep list order
    return ordered[-1] if ordered else None
