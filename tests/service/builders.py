"""Fluent builders for AIMService plan tests: wire-format objects as the API server returns them.

Every builder is a ``dict`` (so it goes anywhere an object goes) whose methods
return the builder::

    svc = service("chat").model_name("qwen").routing(gateway=GATEWAY)
    tpl = cluster_template("qwen-mi300x", model="qwen").ready().optimized().gpu("MI300X", 1)
    plan = plan_service(svc, observed(svc, model("qwen").ready(), tpl, cache_for(svc, tpl).ready()))
    plan, status = run(svc, model("qwen").ready(), tpl, cache_for(svc, tpl).ready())  # the same, plus status

:func:`observed` builds a real :class:`~aim_core.service.observed.Observed`
with the installed plugins' providers and a GPU inventory read from
realistic AMD MI300X Node objects, so a plan test exercises the same code
the controller runs.
"""

from __future__ import annotations

import copy
import datetime
import functools
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Self

from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.naming import dedicated_cache_name, shared_cache_name
from aim_core.reconcile.plan import Plan
from aim_core.runtime.engine import build_status
from aim_core.runtimeconfig.resolution import config_name, resolve
from aim_core.service.controller import ServiceController
from aim_core.service.observed import Observed, Providers
from aim_core.service.plan import plan_service

API = "aim.eai.amd.com/v1alpha1"
NS = "ml-team"
NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
GATEWAY = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "kserve-ingress-gateway",
    "namespace": "kgateway-system",
}
MI300X_IDS = ["74a1", "74a9", "74b5", "74bd"]
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


def uid_of(kind: str, namespace: str | None, name: str) -> str:
    """A stable, UUID-shaped uid for an object."""
    d = hashlib.sha256(f"{kind}/{namespace}/{name}".encode()).hexdigest()
    return f"{d[:8]}-{d[8:12]}-{d[12:16]}-{d[16:20]}-{d[20:32]}"


class Obj(dict):
    """Base builder: a Kubernetes object with identity fields filled in."""

    def __init__(self, kind: str, name: str, namespace: str | None, api_version: str = API) -> None:
        meta: dict[str, Any] = {"name": name, "uid": uid_of(kind, namespace, name), "generation": 1}
        if namespace is not None:
            meta["namespace"] = namespace
        super().__init__(apiVersion=api_version, kind=kind, metadata=meta, spec={})

    @property
    def meta(self) -> dict[str, Any]:
        return self["metadata"]

    @property
    def name(self) -> str:
        return self["metadata"]["name"]

    def labels(self, **labels: str) -> Self:
        self.meta.setdefault("labels", {}).update(labels)
        return self

    def label(self, key: str, value: str) -> Self:
        self.meta.setdefault("labels", {})[key] = value
        return self

    def status(self, state: str, message: str = "") -> Self:
        status = self.setdefault("status", {})
        status["status"] = state
        if message:
            status["conditions"] = [{"type": "Ready", "status": "False", "reason": "NotReady", "message": message}]
        return self

    def ready(self) -> Self:
        return self.status("Ready")


# ---------------------------------------------------------------- AIMService


class ServiceBuilder(Obj):
    def model_name(self, name: str) -> Self:
        self["spec"].setdefault("model", {})["name"] = name
        return self

    def model_image(self, image: str) -> Self:
        self["spec"].setdefault("model", {})["image"] = image
        return self

    def template_name(self, name: str) -> Self:
        self["spec"].setdefault("template", {})["name"] = name
        return self

    def runtime_config(self, name: str) -> Self:
        self["spec"]["runtimeConfigName"] = name
        return self

    def routing(
        self,
        enabled: bool | None = True,
        *,
        gateway: Mapping[str, Any] | None = None,
        path: str | None = None,
        timeout: str | None = None,
        **extra: Any,
    ) -> Self:
        routing: dict[str, Any] = {}
        if enabled is not None:
            routing["enabled"] = enabled
        if gateway is not None:
            routing["gatewayRef"] = dict(gateway)
        if path is not None:
            routing["pathTemplate"] = path
        if timeout is not None:
            routing["requestTimeout"] = timeout
        routing.update(extra)
        self["spec"]["routing"] = routing
        return self

    def env(self, name: str, value: str) -> Self:
        self["spec"].setdefault("env", []).append({"name": name, "value": value})
        return self

    def caching(self, mode: str) -> Self:
        self["spec"]["caching"] = {"mode": mode}
        return self

    def replicas(self, n: int) -> Self:
        self["spec"]["replicas"] = n
        return self

    def scaling(self, minimum: int | None = None, maximum: int | None = None, *metrics: Mapping[str, Any]) -> Self:
        if minimum is not None:
            self["spec"]["minReplicas"] = minimum
        if maximum is not None:
            self["spec"]["maxReplicas"] = maximum
        if metrics:
            self["spec"]["autoScaling"] = {"metrics": [copy.deepcopy(dict(m)) for m in metrics]}
        return self

    def overrides(
        self,
        *,
        gpu: str | None = None,
        count: int | None = None,
        metric: str | None = None,
        precision: str | None = None,
    ) -> Self:
        o: dict[str, Any] = {}
        if metric:
            o["metric"] = metric
        if precision:
            o["precision"] = precision
        if gpu or count:
            o["hardware"] = {"gpu": {k: v for k, v in (("model", gpu), ("requests", count)) if v}}
        self["spec"]["overrides"] = o
        return self

    def resolved(self, field: str, target: Mapping[str, Any], scope: str) -> Self:
        """Record ``status.<field>`` (resolvedModel/resolvedTemplate) as an earlier reconcile wrote it."""
        meta = target["metadata"]
        ref = {"kind": target["kind"], "name": meta["name"], "scope": scope, "uid": meta["uid"]}
        if meta.get("namespace"):
            ref["namespace"] = meta["namespace"]
        self.setdefault("status", {})[field] = ref
        return self


def service(name: str, namespace: str = NS) -> ServiceBuilder:
    """An AIMService as a user writes it (no status)."""
    return ServiceBuilder("AIMService", name, namespace)


# ---------------------------------------------------------------- models


class ModelBuilder(Obj):
    def image(self, image: str) -> Self:
        self["spec"]["image"] = image
        return self


def model(name: str, image: str = IMAGE, namespace: str = NS) -> ModelBuilder:
    """A namespaced AIMModel (no status until ``.ready()``/``.status()``)."""
    return ModelBuilder("AIMModel", name, namespace).image(image)


def cluster_model(name: str, image: str = IMAGE) -> ModelBuilder:
    return ModelBuilder("AIMClusterModel", name, None).image(image)


# ---------------------------------------------------------------- templates


class TemplateBuilder(Obj):
    def model(self, name: str) -> Self:
        self["spec"]["modelName"] = name
        return self

    def profile(self, **metadata: Any) -> Self:
        self.setdefault("status", {}).setdefault("profile", {}).setdefault("metadata", {}).update(metadata)
        return self

    def optimized(self) -> Self:
        return self.profile(type="optimized")

    def unoptimized(self) -> Self:
        return self.profile(type="unoptimized")

    def gpu(self, model: str, count: int = 1, device_ids: Iterable[str] = MI300X_IDS) -> Self:
        """What discovery leaves for a GPU template: spec hardware, profile, resolved hardware and affinity."""
        hw = {"requests": count, "model": model, "resourceName": "amd.com/gpu"}
        self["spec"]["hardware"] = {"gpu": dict(hw)}
        self.profile(gpu=model, gpuCount=count, engine="vllm")
        status = self.setdefault("status", {})
        status["resolvedHardware"] = {"gpu": dict(hw)}
        status["hardwareSummary"] = f"{count} x {model}"
        status["resolvedNodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "amd.com/gpu.device-id", "operator": "In", "values": list(device_ids)}
                        ]
                    }
                ]
            }
        }
        return self

    def metric(self, value: str) -> Self:
        self["spec"]["metric"] = value
        return self.profile(metric=value)

    def precision(self, value: str) -> Self:
        self["spec"]["precision"] = value
        return self.profile(precision=value)

    def profile_id(self, value: str) -> Self:
        self["spec"]["profileId"] = value
        return self

    def sources(self, model_id: str, size: str = "33Gi") -> Self:
        self.setdefault("status", {})["modelSources"] = [
            {"modelId": model_id, "sourceUri": f"hf://{model_id}", "size": size}
        ]
        return self

    @property
    def scope(self) -> str:
        return "Cluster" if self["kind"] == "AIMClusterServiceTemplate" else "Namespace"


def template(name: str, model: str = "qwen3-32b", namespace: str = NS) -> TemplateBuilder:
    return TemplateBuilder("AIMServiceTemplate", name, namespace).model(model)


def cluster_template(name: str, model: str = "qwen3-32b") -> TemplateBuilder:
    return TemplateBuilder("AIMClusterServiceTemplate", name, None).model(model)


# ---------------------------------------------------------------- template caches


class CacheBuilder(Obj):
    def artifact(self, model_id: str, pvc: str | None = None, state: str = "Ready") -> Self:
        name = model_id.lower().replace("/", "-").replace(".", "-")
        entry = {
            "name": name,
            "uid": uid_of("AIMArtifact", self.meta.get("namespace"), name),
            "model": model_id,
            "status": state,
        }
        entry["persistentVolumeClaim"] = pvc or f"{name}-cache"
        self.setdefault("status", {}).setdefault("artifacts", {})[name] = entry
        return self

    def owned_by(self, svc: Mapping[str, Any]) -> Self:
        m = svc["metadata"]
        self.meta["ownerReferences"] = [
            {"apiVersion": API, "kind": "AIMService", "name": m["name"], "uid": m["uid"], "controller": True}
        ]
        return self


def cache(
    name: str, template_name: str, *, mode: str = "Shared", scope: str = "Cluster", namespace: str = NS
) -> CacheBuilder:
    c = CacheBuilder("AIMTemplateCache", name, namespace)
    c["spec"] = {"templateName": template_name, "templateScope": scope, "mode": mode}
    return c


def cache_for(svc: Mapping[str, Any], tpl: TemplateBuilder, mode: str = "Shared") -> CacheBuilder:
    """The cache ``svc`` would create for ``tpl`` in ``mode``, named as the service names it."""
    m = svc["metadata"]
    if mode == "Dedicated":
        name = dedicated_cache_name(tpl.name, m["name"], m["uid"])
        return cache(name, tpl.name, mode=mode, scope=tpl.scope, namespace=m["namespace"]).owned_by(svc)
    name = shared_cache_name(tpl.name, m["namespace"])
    return cache(name, tpl.name, mode=mode, scope=tpl.scope, namespace=m["namespace"]).label(
        "aim.eai.amd.com/service", m["name"]
    )


# ---------------------------------------------------------------- runtime configs


class ConfigBuilder(Obj):
    def routing(self, enabled: bool = True, *, gateway: Mapping[str, Any] | None = GATEWAY, **extra: Any) -> Self:
        routing: dict[str, Any] = {"enabled": enabled}
        if gateway is not None:
            routing["gatewayRef"] = dict(gateway)
        routing.update(extra)
        self["spec"]["routing"] = routing
        return self

    def env(self, name: str, value: str) -> Self:
        self["spec"].setdefault("env", []).append({"name": name, "value": value})
        return self

    def propagate(self, *patterns: str) -> Self:
        self["spec"]["labelPropagation"] = {"enabled": True, "match": list(patterns)}
        return self


def cluster_config(name: str = "default") -> ConfigBuilder:
    return ConfigBuilder("AIMClusterRuntimeConfig", name, None)


# ---------------------------------------------------------------- nodes and live children


def amd_node(name: str, gpus: int = 8, device_id: str = "74a1", vram: str = "192G") -> dict[str, Any]:
    """A Node as the AMD GPU operator's labeller and device plugin leave it (MI300X by default)."""
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "feature.node.kubernetes.io/amd-gpu": "true",
        "amd.com/gpu.device-id": device_id,
        "amd.com/gpu.family": "AI",
        "amd.com/gpu.vram": vram,
        "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM",
        f"beta.amd.com/gpu.device-id.{device_id}": str(gpus),
        "beta.amd.com/gpu.family.AI": str(gpus),
        f"beta.amd.com/gpu.vram.{vram}": str(gpus),
    }
    resources = {"amd.com/gpu": str(gpus), "cpu": "192", "memory": "2113291472Ki", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def cpu_node(name: str = "cpu-node-01") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/os": "linux"}},
        "status": {"capacity": {"cpu": "64"}, "allocatable": {"cpu": "64"}},
    }


MI300X_CLUSTER = (amd_node("gpu-node-01"), amd_node("gpu-node-02"), cpu_node())


def live(desired: Mapping[str, Any], *, ready: bool | None = None, uid: str | None = None) -> dict[str, Any]:
    """A live copy of a desired object, as the API server would return it after the apply."""
    obj = copy.deepcopy(dict(desired))
    meta = obj["metadata"]
    meta.setdefault("uid", uid or uid_of(obj["kind"], meta.get("namespace"), meta["name"]))
    meta.setdefault("resourceVersion", "1")
    if ready is not None:
        status = "True" if ready else "False"
        obj["status"] = {
            "conditions": [{"type": "Ready", "status": status, **({} if ready else {"reason": "PredictorNotReady"})}]
        }
    return obj


def pod(isvc_name: str, *, ready: bool = True, namespace: str = NS, index: int = 0) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ready else "False"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{isvc_name}-predictor-7c9d8f-{index}",
            "namespace": namespace,
            "labels": {"serving.kserve.io/inferenceservice": isvc_name},
        },
        "status": {
            "phase": "Running",
            "conditions": [condition],
            "containerStatuses": [{"name": "kserve-container", "ready": ready, "state": {"running": {}}}],
        },
    }


def hpa(
    isvc_name: str, *, minimum: int, maximum: int, current: int, desired: int, active: bool = True, namespace: str = NS
) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": f"keda-hpa-{isvc_name}-predictor", "namespace": namespace},
        "spec": {"minReplicas": minimum, "maxReplicas": maximum},
        "status": {
            "currentReplicas": current,
            "desiredReplicas": desired,
            "conditions": [
                {"type": "AbleToScale", "status": "True"},
                {"type": "ScalingActive", "status": "True" if active else "False"},
            ],
        },
    }


# ---------------------------------------------------------------- observed, plan, status


@functools.lru_cache(maxsize=1)
def plugin_manager() -> Any:
    return get_plugin_manager()


@functools.lru_cache(maxsize=1)
def providers() -> Providers:
    return Providers.from_plugins(plugin_manager())


def controller() -> ServiceController:
    return ServiceController(plugin_manager())


def observed(
    svc: Mapping[str, Any],
    *objects: Mapping[str, Any],
    nodes: Iterable[Mapping[str, Any]] = MI300X_CLUSTER,
    runtime: Mapping[str, Any] | None = None,
    route: Mapping[str, Any] | None = None,
    scaler: Mapping[str, Any] | None = None,
    pods: Iterable[Mapping[str, Any]] = (),
    events: Iterable[Mapping[str, Any]] = (),
    read_errors: Iterable[Any] = (),
    with_providers: Providers | None = None,
    owned: Mapping[Any, Iterable[Mapping[str, Any]]] | None = None,
    unserved: Iterable[Any] = (),
) -> Observed:
    """What the controller's observe step would hand the plan, given the objects in the store.

    ``objects`` may hold models, templates, caches and runtime configs of any
    scope; those of other namespaces are left out as the store's namespaced
    listing would. ``runtime``/``route``/``scaler`` are the live children; ``owned``, per kind,
    the objects of the builders' kinds the service controls.
    """
    ns = svc["metadata"].get("namespace")
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        obj_ns = obj["metadata"].get("namespace")
        if obj_ns is not None and obj_ns != ns:
            continue
        by_kind.setdefault(obj["kind"], []).append(obj)

    def named(kind: str) -> dict[str, dict[str, Any]]:
        return {o["metadata"]["name"]: o for o in by_kind.get(kind, [])}  # type: ignore[misc]

    name = config_name(svc.get("spec"))
    config = resolve(name, named("AIMRuntimeConfig").get(name), named("AIMClusterRuntimeConfig").get(name))
    chosen = with_providers or providers()
    return Observed(
        config=config,
        models={"namespaced": named("AIMModel"), "cluster": named("AIMClusterModel")},
        templates={"namespaced": named("AIMServiceTemplate"), "cluster": named("AIMClusterServiceTemplate")},
        caches=list(by_kind.get("AIMTemplateCache", [])),  # type: ignore[arg-type]
        inventory=GpuInventory.from_nodes(nodes, chosen.gpu_vendors),
        live={"runtime": runtime, "route": route, "scaler": scaler},  # type: ignore[dict-item]
        pods=list(pods),  # type: ignore[arg-type]
        events=list(events),  # type: ignore[arg-type]
        logs={},
        read_errors=list(read_errors),
        providers=chosen,
        artifacts=tuple(by_kind.get("AIMArtifact", [])),  # type: ignore[arg-type]
        owned={ref: tuple(objs) for ref, objs in (owned or {}).items()},  # type: ignore[misc]
        unserved=frozenset(unserved),
    )


def status_of(svc: Mapping[str, Any], plan: Plan) -> dict[str, Any]:
    """The status the engine would write for ``svc`` after ``plan`` (at the fixed time :data:`NOW`)."""
    status, _ = build_status(controller(), dict(svc), plan, list(plan.issues), now=NOW)
    return status


def run(svc: Mapping[str, Any], *objects: Mapping[str, Any], **observe: Any) -> tuple[Plan, dict[str, Any]]:
    """Plan ``svc`` over ``objects`` (see :func:`observed` for the keywords); the plan and the status."""
    plan = plan_service(dict(svc), observed(svc, *objects, **observe))
    return plan, status_of(svc, plan)


def condition(status: Mapping[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or () if c["type"] == type_), None)


def reason(status: Mapping[str, Any], type_: str) -> tuple[str, str]:
    """``(status, reason)`` of condition ``type_``, which must be there."""
    cond = condition(status, type_)
    assert cond is not None, f"no {type_} condition in {[c['type'] for c in status['conditions']]}"
    return cond["status"], cond["reason"]


def applied(plan: Plan, kind: str) -> list[dict[str, Any]]:
    return [d.obj for d in plan.apply if d.resource.kind == kind]


def one(plan: Plan, kind: str) -> dict[str, Any]:
    found = applied(plan, kind)
    assert len(found) == 1, f"expected one {kind} in the plan, got {[o['metadata']['name'] for o in found]}"
    return found[0]


def kinds(plan: Plan) -> list[str]:
    return sorted(d.resource.kind for d in plan.apply)


# ---------------------------------------------------------------- a realistic setup


QWEN = "qwen3-32b"
QWEN_TEMPLATE = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"
QWEN_SOURCE = "Qwen/Qwen3-32B-FP8"


def qwen_model() -> ModelBuilder:
    return cluster_model(QWEN).ready()


def qwen_template(name: str = QWEN_TEMPLATE, gpus: int = 1) -> TemplateBuilder:
    """A Ready, optimized cluster template: N x MI300X, latency, fp8, as discovery leaves it."""
    return (
        cluster_template(name, QWEN)
        .ready()
        .optimized()
        .gpu("MI300X", gpus)
        .metric("latency")
        .precision("fp8")
        .profile_id("vllm-mi300x-fp8-tp1-latency")
        .sources(QWEN_SOURCE)
    )


def ready_cache(svc: Mapping[str, Any], tpl: TemplateBuilder, mode: str = "Shared") -> CacheBuilder:
    """The service's cache for ``tpl``, Ready, with the downloaded weights on a volume claim."""
    return cache_for(svc, tpl, mode).ready().artifact(QWEN_SOURCE, pvc="qwen-qwen3-32b-fp8-cache-bcc76768")


def ready_world(svc: Mapping[str, Any], gpus: int = 1) -> tuple[Mapping[str, Any], ...]:
    """Model, template and cache all Ready: the InferenceService can be built."""
    tpl = qwen_template(gpus=gpus)
    return qwen_model(), tpl, ready_cache(svc, tpl)


def prepared(plan: Plan, svc: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The ``kind`` child as the engine would send it: labels and owner reference added."""
    from aim_core.runtime import applyset

    desired = [d for d in plan.apply if d.resource.kind == kind]
    assert len(desired) == 1, f"expected one {kind}, got {len(desired)}"
    return applyset.prepare(desired[0], svc, controller().name, plan.labels)


def drift(want: Any, have: Any, path: tuple[Any, ...] = ()) -> set[tuple[Any, ...]]:
    """Paths where ``have`` lacks what ``want`` asks for (what a server-side apply would change)."""
    from aim_core.runtime.applyset import is_subset

    if isinstance(want, Mapping):
        if not isinstance(have, Mapping):
            return {path}
        return {p for k, v in want.items() for p in drift(v, have.get(k), path + (k,))}
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return {path}
        return {p for i, (w, h) in enumerate(zip(want, have)) for p in drift(w, h, path + (i,))}
    return set() if is_subset(want, have) else {path}
