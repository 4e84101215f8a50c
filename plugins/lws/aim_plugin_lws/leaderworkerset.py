"""The LeaderWorkerSet runtime builder: one replica of a service across several nodes.

A service whose template spans ``hardware.nodes`` = N > 1 nodes gets, instead of an InferenceService:

* a ``leaderworkerset.x-k8s.io/v1`` LeaderWorkerSet named as the InferenceService would be, whose
  groups are the replicas: ``size`` = N (the node count, never derived from a parallel degree),
  ``restartPolicy: RecreateGroupOnPodRestart`` (one pod lost restarts its group: vLLM's collective
  cannot take a member back), ``startupPolicy: LeaderCreated`` and rolling updates. The leader
  and worker pod templates carry the same container, resources, placement, identity and volumes;
* a ClusterIP Service ``<name>-leader`` on port 80 that selects the leader pods only (worker
  index 0): the route's backend. The LWS controller makes its own headless Service named as the
  LeaderWorkerSet, which gives each leader the stable DNS name the workers dial.

vLLM starts natively on several nodes (no Ray in the image): ``AIM_ENGINE_ARGS`` carries the
layout the core resolved (``tensor-parallel-size``, ``pipeline-parallel-size``) and ``nnodes``,
``node-rank``, ``master-addr`` and ``master-port``; workers add ``headless`` and serve no HTTP.
The rank and the leader's name come from the labels the LWS controller puts on every pod
(``leaderworkerset.sigs.k8s.io/worker-index``, ``group-index``), read through the downward API
into variables defined before ``AIM_ENGINE_ARGS``, so that Kubernetes expands ``$(VAR)`` in it
(it expands only variables defined earlier in the list). The leader's address is built as the
LWS webhook builds ``LWS_LEADER_ADDRESS`` (``<lws>-<group>.<lws>.<namespace>``), without relying
on where the webhook puts its variables.

Autoscaling is KEDA's: the keda autoscaler adds a ScaledObject whose target is the LeaderWorkerSet
(it has a scale subresource), declared here as one of this builder's kinds. The LeaderWorkerSet
then leaves ``replicas`` to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import (
    EngineLayout,
    Health,
    KubeObject,
    ResourceRef,
    RuntimeRequest,
    ServingEndpoint,
    carry_over_storage,
    plain_copy,
)

LEADERWORKERSET = ResourceRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets")
SERVICE = ResourceRef("v1", "Service", "services")
SCALED_OBJECT = ResourceRef("keda.sh/v1alpha1", "ScaledObject", "scaledobjects")

# Labels the LWS controller and webhook put on every pod of a LeaderWorkerSet (api/leaderworkerset/v1).
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"

MAX_NODES = 16
CONTAINER_NAME = "aim-inference"
MODEL_PORT = 8000
SERVICE_PORT = 80
MASTER_PORT = 29500
ENGINE_ARGS = "AIM_ENGINE_ARGS"
NODE_RANK_ENV = "AIM_NODE_RANK"
GROUP_INDEX_ENV = "AIM_GROUP_INDEX"
LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "aim-engine"

SHM_VOLUME = "dshm"
SHM_MOUNT_PATH = "/dev/shm"
SHM_SIZE = "8Gi"


def leader_service_name(name: str) -> str:
    return f"{name}-leader"


class LeaderWorkerSetBuilder:
    """Builds a LeaderWorkerSet (and its leaders' Service) for a replica on several nodes."""

    name = "lws"
    resource = LEADERWORKERSET
    kinds = (SERVICE, SCALED_OBJECT)
    max_nodes = MAX_NODES
    pod_label = NAME_LABEL

    def build(self, request: RuntimeRequest) -> list[KubeObject]:
        nodes = max(1, int(getattr(request, "nodes", 1) or 1))
        layout: EngineLayout | None = getattr(request, "layout", None)
        labels = {**request.labels, LABEL_COMPONENT: "inference", LABEL_MANAGED_BY: MANAGED_BY}
        pod_labels = dict(request.labels)
        leader = self._pod_spec(request, nodes, layout, leader=True)
        worker = self._pod_spec(request, nodes, layout, leader=False)
        spec: dict[str, Any] = {
            "leaderWorkerTemplate": {
                "size": nodes,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": {"metadata": {"labels": pod_labels}, "spec": leader},
                "workerTemplate": {"metadata": {"labels": dict(pod_labels)}, "spec": worker},
            },
            "startupPolicy": "LeaderCreated",
            "rolloutStrategy": {"type": "RollingUpdate"},
        }
        if request.replicas is not None or (request.min_replicas is None and request.max_replicas is None):
            spec["replicas"] = 1 if request.replicas is None else request.replicas
        # Autoscaled: replicas are the scaler's (the LeaderWorkerSet's scale subresource); never written here.
        lws: KubeObject = {
            "apiVersion": LEADERWORKERSET.api_version,
            "kind": LEADERWORKERSET.kind,
            "metadata": {"name": request.name, "namespace": request.namespace, "labels": labels},
            "spec": spec,
        }
        service: KubeObject = {
            "apiVersion": SERVICE.api_version,
            "kind": SERVICE.kind,
            "metadata": {
                "name": leader_service_name(request.name),
                "namespace": request.namespace,
                "labels": dict(labels),
            },
            "spec": {
                "type": "ClusterIP",
                "selector": dict(self.endpoint(request.name).pod_selector),
                "ports": [{"name": "http", "port": SERVICE_PORT, "targetPort": MODEL_PORT, "protocol": "TCP"}],
            },
        }
        return [lws, service]

    def _pod_spec(
        self, request: RuntimeRequest, nodes: int, layout: EngineLayout | None, *, leader: bool
    ) -> dict[str, Any]:
        container: dict[str, Any] = {"name": CONTAINER_NAME, "image": request.image}
        if leader:
            container["ports"] = [{"containerPort": MODEL_PORT, "name": "http", "protocol": "TCP"}]
        env = _env(request, nodes, layout, leader=leader)
        if env:
            container["env"] = env
        if request.resources:
            container["resources"] = plain_copy(request.resources)
        mounts = [{"name": SHM_VOLUME, "mountPath": SHM_MOUNT_PATH}, *plain_copy(request.volume_mounts)]
        volumes = [
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}},
            *plain_copy(request.volumes),
        ]
        if request.live is not None:
            # Each template keeps what its own live template has: the leader's may differ from the workers'.
            live_pod = _pod_template(request.live, leader)
            live_container = next(
                (c for c in live_pod.get("containers") or () if c.get("name") == CONTAINER_NAME), None
            )
            carry_over_storage(
                live_pod, live_container, mounts, volumes, tuple(getattr(request, "owned_volume_prefixes", ()) or ())
            )
        container["volumeMounts"] = mounts
        pod: dict[str, Any] = {"containers": [container], "volumes": volumes}
        if request.image_pull_secrets:
            pod["imagePullSecrets"] = plain_copy(request.image_pull_secrets)
        if request.service_account_name:
            pod["serviceAccountName"] = request.service_account_name
        if request.priority_class_name:
            pod["priorityClassName"] = request.priority_class_name
        if request.affinity:
            pod["affinity"] = plain_copy(request.affinity)
        elif request.node_affinity:
            pod["affinity"] = {"nodeAffinity": plain_copy(request.node_affinity)}
        if request.node_selector:
            pod["nodeSelector"] = dict(request.node_selector)
        if request.tolerations:
            pod["tolerations"] = plain_copy(request.tolerations)
        return pod

    def health(
        self, live: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
    ) -> Health:
        """LeaderWorkerSet health from its ``Available`` and ``Progressing`` conditions and ready groups."""
        if live is None:
            return Health.progressing("CreatingRuntime", "Creating the LeaderWorkerSet")
        name = (live.get("metadata") or {}).get("name", "")
        status = live.get("status") or {}
        conditions = {c.get("type"): c for c in status.get("conditions") or () if isinstance(c, Mapping)}
        wanted = (live.get("spec") or {}).get("replicas")
        ready = int(status.get("readyReplicas") or 0)
        groups = f"{ready}/{wanted if wanted is not None else status.get('replicas', '?')} groups ready"
        available = conditions.get("Available") or {}
        if available.get("status") == "True":
            return Health.ok("RuntimeReady", f"LeaderWorkerSet {name} is available ({groups})")
        progressing = conditions.get("Progressing") or {}
        if not conditions:
            return Health.progressing(
                "CreatingRuntime",
                f"LeaderWorkerSet {name} has no status yet: is the LeaderWorkerSet controller running? "
                "(aim-engine doctor checks it)",
            )
        detail = next(
            (
                ", ".join(p for p in (c.get("reason"), c.get("message")) if p)
                for c in (progressing, available)
                if c.get("reason") or c.get("message")
            ),
            "",
        )
        return Health.progressing(
            "CreatingRuntime",
            f"LeaderWorkerSet {name} is not available yet ({groups}){': ' + detail if detail else ''}",
        )

    def backend_service(self, name: str) -> str:
        return leader_service_name(name)

    def pod_selector(self, name: str) -> Mapping[str, str]:
        return {NAME_LABEL: name}

    def endpoint(self, name: str) -> ServingEndpoint:
        """The leader pods only (worker index 0), where the OpenAI server listens."""
        return ServingEndpoint({NAME_LABEL: name, WORKER_INDEX_LABEL: "0"}, MODEL_PORT)


def _env(request: RuntimeRequest, nodes: int, layout: EngineLayout | None, *, leader: bool) -> list[dict[str, Any]]:
    env = [plain_copy(e) for e in request.env]
    if nodes <= 1 or layout is None:
        return env
    args: dict[str, Any] = {
        **plain_copy(dict(layout.engine_args)),
        "tensor-parallel-size": layout.tensor_parallel,
        "pipeline-parallel-size": layout.pipeline_parallel,
        "nnodes": nodes,
        "node-rank": f"$({NODE_RANK_ENV})",
        "master-addr": f"{request.name}-$({GROUP_INDEX_ENV}).{request.name}.{request.namespace}",
        "master-port": MASTER_PORT,
    }
    if not leader:
        args["headless"] = True
    rest = [e for e in env if e.get("name") not in (ENGINE_ARGS, NODE_RANK_ENV, GROUP_INDEX_ENV)]
    # Defined first: Kubernetes expands $(VAR) only from variables earlier in the list.
    return [
        _label_env(NODE_RANK_ENV, WORKER_INDEX_LABEL),
        _label_env(GROUP_INDEX_ENV, GROUP_INDEX_LABEL),
        {"name": ENGINE_ARGS, "value": json.dumps(args, separators=(",", ":"), sort_keys=True)},
        *rest,
    ]


def _label_env(name: str, label: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{label}']"}}}


def _pod_template(live: Mapping[str, Any], leader: bool) -> Mapping[str, Any]:
    template = ((live.get("spec") or {}).get("leaderWorkerTemplate") or {}).get(
        "leaderTemplate" if leader else "workerTemplate"
    ) or {}
    return template.get("spec") or {}
