"""Model-aware routing: an InferencePool and its endpoint picker (EPP) behind a service's HTTPRoute.

The Gateway API Inference Extension (GAIE, release v1.3.0) routes a request to the model server pod
the endpoint picker chooses (queue depth, KV-cache use, prefix-cache hits, read from the servers'
vLLM metrics) instead of the gateway's round robin. With ``routing.inferencePool.enabled`` a service
gets, besides its HTTPRoute (whose backend becomes the pool):

* an **InferencePool** of the chosen API (``inference.networking.k8s.io/v1`` or
  ``inference.networking.x-k8s.io/v1alpha2``) that selects exactly the runtime's model server pods
  (the runtime builder's :class:`~aim_core.ServingEndpoint`) on their model port, its picker
  reference naming the picker Service on port 9002 (the ext-proc port, never the model port);
* the **endpoint picker**: a Deployment (CPU only), its Service (9002 ext-proc, 9090 metrics), a
  ConfigMap with the EndpointPickerConfig (unless ``configRef`` names the user's), and a
  ServiceAccount with a Role and RoleBinding to read pods and inferencepools of the namespace.

The shapes follow GAIE's reference Helm chart ``config/charts/inferencepool`` at v1.3.0 (arguments,
ports, probes, environment, default scorers). Names are derived from the service's name and
namespace (``derived_name``), unique per service and within the 63-character limit.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import Health, KubeObject, ResourceRef, RouteRequest, State, derived_name

V1 = "inference.networking.k8s.io/v1"
V1ALPHA2 = "inference.networking.x-k8s.io/v1alpha2"
API_VERSIONS = (V1, V1ALPHA2)
POOLS = {
    V1: ResourceRef(V1, "InferencePool", "inferencepools"),
    V1ALPHA2: ResourceRef(V1ALPHA2, "InferencePool", "inferencepools"),
}
DEPLOYMENTS = ResourceRef("apps/v1", "Deployment", "deployments")
SERVICES = ResourceRef("v1", "Service", "services")
CONFIG_MAPS = ResourceRef("v1", "ConfigMap", "configmaps")
SERVICE_ACCOUNTS = ResourceRef("v1", "ServiceAccount", "serviceaccounts")
ROLES = ResourceRef("rbac.authorization.k8s.io/v1", "Role", "roles")
ROLE_BINDINGS = ResourceRef("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings")
KINDS = (*POOLS.values(), DEPLOYMENTS, SERVICES, CONFIG_MAPS, SERVICE_ACCOUNTS, ROLES, ROLE_BINDINGS)

#: the EPP release this operator was built against; ``--endpoint-picker-image`` or
#: ``$AIM_ENDPOINT_PICKER_IMAGE`` (set by the operator from its flag) replace it
DEFAULT_IMAGE = "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.0"
IMAGE_ENV = "AIM_ENDPOINT_PICKER_IMAGE"

EXT_PROC_PORT = 9002  # the gateway asks the picker here (gRPC ext-proc)
HEALTH_PORT = 9003  # gRPC health service "inference-extension"
METRICS_PORT = 9090
HEALTH_SERVICE = "inference-extension"
CONFIG_DIR = "/config"
CONFIG_FILE = "default-plugins.yaml"
FAILURE_MODES = ("FailClose", "FailOpen")

PICKER_LABEL = "aim.eai.amd.com/endpoint-picker"  # the picker's pods (its Service selects them)
POOL_LABEL = "aim.eai.amd.com/inference-pool"  # the pool a picker Deployment serves
LABEL_COMPONENT = "app.kubernetes.io/component"
PICKER_COMPONENT = "endpoint-picker"

#: what the picker's Role grants: its own pool and the pods it picks from, read-only. The operator
#: must hold all of it to create the Role (RBAC escalation prevention; tests/test_deploy.py derives
#: the operator's needs from this).
PICKER_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("", "pods", ("get", "list", "watch")),
    ("inference.networking.k8s.io", "inferencepools", ("get", "list", "watch")),
    ("inference.networking.x-k8s.io", "inferencepools", ("get", "list", "watch")),
)


class PoolSettings:
    """``routing.inferencePool`` with defaults applied (the settings are already merged, service first)."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        picker = raw.get("endpointPicker") or {}
        self.enabled = bool(raw.get("enabled"))
        self.api_version = raw.get("apiVersion") or V1
        self.image = picker.get("image") or os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE
        self.replicas = int(picker.get("replicas") or 1)
        self.failure_mode = picker.get("failureMode") or "FailClose"
        self.config_ref = picker.get("configRef") or None
        self.resources = picker.get("resources") or None

    @property
    def group(self) -> str:
        return self.api_version.split("/", 1)[0]


def pool_settings(settings: Mapping[str, Any]) -> PoolSettings | None:
    """The pool settings of a route request, or ``None`` when the pool is off."""
    raw = settings.get("inferencePool") or {}
    pool = PoolSettings(raw)
    return pool if pool.enabled else None


def service_name(request: RouteRequest) -> str:
    return str((request.service.get("metadata") or {}).get("name") or request.name)


def pool_name(request: RouteRequest) -> str:
    """The InferencePool's name (the route's backend), unique per service."""
    return derived_name([service_name(request)], [request.namespace, service_name(request), "inferencepool"], 8)


def picker_name(request: RouteRequest) -> str:
    """The picker's Deployment, Service, ConfigMap, ServiceAccount, Role and RoleBinding name.

    It starts with ``epp-`` so that it is a DNS-1035 label (a Service name) whatever the service is called.
    """
    return derived_name(["epp", service_name(request)], [request.namespace, service_name(request), "epp"], 8)


def backend_ref(request: RouteRequest, pool: PoolSettings) -> dict[str, Any]:
    """The HTTPRoute backend: the pool instead of the predictor Service."""
    return {"group": pool.group, "kind": "InferencePool", "name": pool_name(request), "namespace": request.namespace}


def build_pool_objects(request: RouteRequest, pool: PoolSettings, labels: Mapping[str, str]) -> list[KubeObject]:
    """The InferencePool and the picker's objects of a service whose pool is on (the route aside)."""
    name = picker_name(request)
    objects = [
        inference_pool(request, pool, labels),
        _deployment(request, pool, labels),
        _service(request, labels),
        *([] if pool.config_ref else [_config_map(request, labels)]),
        _meta("v1", "ServiceAccount", name, request, labels),
        {
            **_meta("rbac.authorization.k8s.io/v1", "Role", name, request, labels),
            "rules": [
                {"apiGroups": [group], "resources": [plural], "verbs": list(verbs)}
                for group, plural, verbs in PICKER_RULES
                if group in ("", pool.group)
            ],
        },
        {
            **_meta("rbac.authorization.k8s.io/v1", "RoleBinding", name, request, labels),
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": request.namespace}],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        },
    ]
    return objects


def inference_pool(request: RouteRequest, pool: PoolSettings, labels: Mapping[str, str]) -> KubeObject:
    """The pool over the runtime's model server pods, in the shape of the chosen API."""
    selector = {str(k): str(v) for k, v in request.endpoint.pod_selector.items()}
    port = int(request.endpoint.port)
    picker = picker_name(request)
    if pool.api_version == V1ALPHA2:
        spec: dict[str, Any] = {
            "selector": selector,
            "targetPortNumber": port,
            "extensionRef": {
                "kind": "Service",
                "name": picker,
                "portNumber": EXT_PROC_PORT,
                "failureMode": pool.failure_mode,
            },
        }
    else:
        spec = {
            "selector": {"matchLabels": selector},
            "targetPorts": [{"number": port}],
            "endpointPickerRef": {
                "kind": "Service",
                "name": picker,
                "port": {"number": EXT_PROC_PORT},
                "failureMode": pool.failure_mode,
            },
        }
    return {**_meta(pool.api_version, "InferencePool", pool_name(request), request, labels), "spec": spec}


def picker_config(adapters: bool) -> str:
    """The default EndpointPickerConfig (the reference chart's scorers and weights; LoRA affinity when
    the service serves adapters, so a request for an adapter goes where it is loaded)."""
    scorers = [("queue-scorer", 2), ("kv-cache-utilization-scorer", 2), ("prefix-cache-scorer", 3)]
    if adapters:
        scorers.append(("lora-affinity-scorer", 1))
    lines = [
        "apiVersion: inference.networking.x-k8s.io/v1alpha1",
        "kind: EndpointPickerConfig",
        "plugins:",
        *(f"- type: {name}" for name, _ in scorers),
        "- type: max-score-picker",
        "schedulingProfiles:",
        "- name: default",
        "  plugins:",
        *(f"  - pluginRef: {name}\n    weight: {weight}" for name, weight in scorers),
        "  - pluginRef: max-score-picker",
    ]
    return "\n".join(lines) + "\n"


def has_adapters(service: Mapping[str, Any]) -> bool:
    return bool((service.get("spec") or {}).get("adapters"))


def _meta(api_version: str, kind: str, name: str, request: RouteRequest, labels: Mapping[str, str]) -> KubeObject:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": request.namespace, "labels": dict(labels)},
    }


def _config_map(request: RouteRequest, labels: Mapping[str, str]) -> KubeObject:
    return {
        **_meta("v1", "ConfigMap", picker_name(request), request, labels),
        "data": {CONFIG_FILE: picker_config(has_adapters(request.service))},
    }


def _service(request: RouteRequest, labels: Mapping[str, str]) -> KubeObject:
    name = picker_name(request)
    return {
        **_meta("v1", "Service", name, request, labels),
        "spec": {
            "type": "ClusterIP",
            "selector": {PICKER_LABEL: name},
            "ports": [
                {"name": "grpc-ext-proc", "protocol": "TCP", "port": EXT_PROC_PORT, "targetPort": EXT_PROC_PORT},
                {"name": "http-metrics", "protocol": "TCP", "port": METRICS_PORT, "targetPort": METRICS_PORT},
            ],
        },
    }


def _deployment(request: RouteRequest, pool: PoolSettings, labels: Mapping[str, str]) -> KubeObject:
    name = picker_name(request)
    if pool.config_ref:
        config_volume = {
            "name": "config",
            "configMap": {
                "name": pool.config_ref["name"],
                "items": [{"key": pool.config_ref["key"], "path": CONFIG_FILE}],
            },
        }
    else:
        config_volume = {"name": "config", "configMap": {"name": name}}
    probe = {"grpc": {"port": HEALTH_PORT, "service": HEALTH_SERVICE}}
    container: dict[str, Any] = {
        "name": "epp",
        "image": pool.image,
        "imagePullPolicy": "IfNotPresent",
        "args": [
            "--pool-name",
            pool_name(request),
            "--pool-namespace",
            request.namespace,
            "--pool-group",
            pool.group,
            "--zap-encoder",
            "json",
            "--config-file",
            f"{CONFIG_DIR}/{CONFIG_FILE}",
            "--tracing=false",
        ],
        "ports": [
            {"name": "grpc", "containerPort": EXT_PROC_PORT, "protocol": "TCP"},
            {"name": "grpc-health", "containerPort": HEALTH_PORT, "protocol": "TCP"},
            {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
        ],
        "livenessProbe": {**probe, "initialDelaySeconds": 5, "periodSeconds": 10},
        "readinessProbe": {**probe, "periodSeconds": 2},
        # The EPP reads its namespace from NAMESPACE (the pool's, unless --pool-namespace says) and its
        # pod name from POD_NAME.
        "env": [
            {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ],
        "volumeMounts": [{"name": "config", "mountPath": CONFIG_DIR, "readOnly": True}],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
        },
    }
    if pool.resources:
        container["resources"] = dict(pool.resources)
    pod_labels = {**labels, PICKER_LABEL: name}
    deployment = _meta("apps/v1", "Deployment", name, request, labels)
    deployment["metadata"]["labels"][POOL_LABEL] = pool_name(request)
    return {
        **deployment,
        "spec": {
            "replicas": pool.replicas,
            # As the reference chart: the old picker goes before the new one starts (its prefix-cache
            # view is per process), so an update never runs two generations side by side.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {PICKER_LABEL: name}},
            "template": {
                "metadata": {"labels": pod_labels},
                "spec": {
                    "serviceAccountName": name,
                    "terminationGracePeriodSeconds": 130,
                    "securityContext": {
                        "runAsNonRoot": True,
                        # the distroless EPP image's nonroot user
                        "runAsUser": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [container],
                    "volumes": [config_volume],
                },
            },
        },
    }


# ---------------------------------------------------------------- health


def pool_health(
    route: Mapping[str, Any], route_health: Health, owned: Mapping[Any, Sequence[Mapping[str, Any]]]
) -> Health:
    """The route component's health when the live route's backend is an InferencePool.

    A gateway that refuses the pool, or cannot resolve it (a gateway that does not speak the
    chosen API), makes the service Degraded (``InferencePoolNotAccepted``), naming
    ``routing.inferencePool.apiVersion`` and the gateway; a picker that is not available yet is
    progressing (``EndpointPickerNotReady``); otherwise the route's own health.
    """
    backend = _pool_backend(route)
    if backend is None:
        return route_health
    group, name = backend
    api_version = next((v for v in API_VERSIONS if v.startswith(group + "/")), group)
    ref = POOLS.get(api_version)
    pools = owned.get(ref, ()) if ref is not None else ()
    pool = next((p for p in pools if (p.get("metadata") or {}).get("name") == name), None)
    # The pool's own verdict first, then the route's: a gateway that does not know the pool's API
    # says so on the route (ResolvedRefs False, e.g. InvalidKind) even where it accepts the route.
    refused = (
        _refusal((pool.get("status") or {}).get("parents") or (pool.get("status") or {}).get("parent"))
        if pool
        else None
    )
    what = "did not accept"
    if refused is None:
        refused = _refusal((route.get("status") or {}).get("parents"), ("ResolvedRefs",))
        what = "cannot resolve"
    if refused is not None:
        parent, cond = refused
        detail = cond.get("reason") or cond.get("type")
        if cond.get("message"):
            detail = f"{detail} ({cond['message']})"
        return Health(
            State.DEGRADED,
            "InferencePoolNotAccepted",
            f"{parent} {what} InferencePool {name} ({api_version}): {detail}; check that the gateway supports "
            f"routing.inferencePool.apiVersion {api_version} (or set the other one) and that its inference "
            "extension is enabled",
        )
    if route_health.state in (State.FAILED, State.DEGRADED) or not route_health.ready:
        return route_health
    picker = _picker(owned, name)
    if picker is None:
        return Health.progressing("EndpointPickerNotReady", "Creating the endpoint picker Deployment")
    if not _available(picker):
        return Health.progressing(
            "EndpointPickerNotReady",
            f"endpoint picker Deployment {picker['metadata']['name']} has no available replica yet",
        )
    return route_health


def _pool_backend(route: Mapping[str, Any]) -> tuple[str, str] | None:
    for rule in (route.get("spec") or {}).get("rules") or ():
        for ref in rule.get("backendRefs") or ():
            if ref.get("kind") == "InferencePool" and ref.get("name"):
                return str(ref.get("group") or ""), str(ref["name"])
    return None


def _refusal(
    parents: Sequence[Mapping[str, Any]] | None, types: tuple[str, ...] = ("Accepted", "ResolvedRefs")
) -> tuple[str, Mapping[str, Any]] | None:
    """The first parent (``status.parents`` of v1 and of a route, ``status.parent`` of v1alpha2) with a
    condition of ``types`` that is False: who it is, and the condition."""
    for parent in parents or ():
        ref = parent.get("parentRef") or {}
        where = f"{ref['namespace']}/" if ref.get("namespace") else ""
        who = f"{ref.get('kind') or 'Gateway'} {where}{ref.get('name', '?')}"
        for cond in parent.get("conditions") or ():
            if cond.get("type") in types and cond.get("status") == "False":
                return who, cond
    return None


def _picker(owned: Mapping[Any, Sequence[Mapping[str, Any]]], pool: str) -> Mapping[str, Any] | None:
    for deployment in owned.get(DEPLOYMENTS, ()):
        labels = (deployment.get("metadata") or {}).get("labels") or {}
        if labels.get(POOL_LABEL) == pool:
            return deployment
    return None


def _available(deployment: Mapping[str, Any]) -> bool:
    status = deployment.get("status") or {}
    if (deployment.get("metadata") or {}).get("generation", 0) > status.get("observedGeneration", 0):
        return False
    available = any(c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or ())
    return available and int(status.get("availableReplicas") or 0) > 0
