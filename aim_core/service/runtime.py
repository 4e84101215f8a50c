"""What an AIMService asks of its runtime builder (F47-F52, spec 2.6 and 2.7).

Pure functions over wire-format dicts. :func:`runtime_request` resolves the
AIM semantics of one service into a :class:`~aim_core.plugin.providers.RuntimeRequest`:
name, labels, image, layered environment, resources, cache volumes, node
affinity, pod settings and replicas. The runtime builder (a plugin) only
places those values in its own object; nothing here knows its field names.

Decisions, where upstream leaves a choice:

* **Problems are values.** A namespace too long for an InferenceService name
  (``NamespaceTooLong``) and a malformed ``AIM_ENGINE_ARGS``
  (``InvalidEngineArgs``) come back as an :class:`~aim_core.reconcile.plan.Issue`
  of category InvalidSpec instead of a request, so the plan never raises and
  the engine blocks the apply until the user fixes the spec.
* **The GPU resource name** is never spelled here: template status
  ``resolvedHardware.gpu.resourceName``, else template spec
  ``hardware.gpu.resourceName``, else ``default_gpu_resource``, which the
  controller takes from the detected GPU vendor.
* **GPU requests and limits move together.** When a template or service
  override sets the GPU resource in only one of ``requests``/``limits``, the
  other follows: Kubernetes rejects pods whose extended-resource request and
  limit differ or whose limit is missing, and upstream would leave
  ``requests: N`` next to a new limit.
* **Cache volumes** are built from whatever ``cache`` is passed; the builder
  keeps volumes of the live object that the request lacks (Q16). The service
  plan passes ``cache=None`` once the object exists, as upstream: cache
  volumes are resolved only on creation, so a changed cache never swaps a
  running deployment's mounts (which would roll its pods).
* **Runtime status without a scaler** (Q14): an autoscaled service reports
  its configured bounds (min, max), not ``min = max = minReplicas``; current and
  desired are the minimum, as upstream.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aim_core.model import ModelView
from aim_core.plugin.builders import plain_copy
from aim_core.plugin.providers import ReplicaStatus, RuntimeRequest, ScalingRequest
from aim_core.reconcile import labels as keys
from aim_core.reconcile import naming
from aim_core.reconcile.errors import ReconcileError
from aim_core.reconcile.plan import Issue
from aim_core.reconcile.quantities import canonical
from aim_core.service.adapters import VOLUME_PREFIX as ADAPTER_VOLUME_PREFIX
from aim_core.service.placement import Placement
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView
from aim_core.templatecache import CacheView

if TYPE_CHECKING:
    from aim_core.service.adapters import AdapterServing
from aim_core.service.environment import (
    CACHE_PATH,
    EnvLayer,
    container_env,
    engine_args_issue,
    env_layers,
)

CPU_PER_GPU = 4
MEMORY_REQUEST_GI_PER_GPU = 32
MEMORY_LIMIT_GI_PER_GPU = 48


# ---------------------------------------------------------------- resources


def gpu_resource_name(template: Mapping[str, Any] | TemplateView, default_gpu_resource: str) -> str:
    """Resolved hardware's resource name, else the template spec's, else ``default_gpu_resource``."""
    view = TemplateView.of(template)
    resolved = view.resolved_hardware.get("gpu") or {}
    declared = view.hardware.get("gpu") or {}
    return resolved.get("resourceName") or declared.get("resourceName") or default_gpu_resource


def gpu_count(template: Mapping[str, Any] | TemplateView) -> int:
    """GPUs per replica from the template's ``status.resolvedHardware.gpu.requests`` (0 when absent)."""
    resolved = TemplateView.of(template).resolved_hardware.get("gpu") or {}
    return int(resolved.get("requests") or 0)


def _overlay(result: dict[str, dict[str, Any]], layer: Mapping[str, Any] | None, gpu: str) -> None:
    if not layer:
        return
    for section, other in (("requests", "limits"), ("limits", "requests")):
        for name, given in (layer.get(section) or {}).items():
            quantity = canonical(given)  # as Kubernetes prints it (issue 18)
            result.setdefault(section, {})[name] = quantity
            if name == gpu and name not in (layer.get(other) or {}):
                result.setdefault(other, {})[name] = quantity  # extended resources need request == limit
    if layer.get("claims"):
        result["claims"] = plain_copy(layer["claims"])


def template_cpu(template: Mapping[str, Any] | TemplateView) -> dict[str, Any] | None:
    """``hardware.cpu`` of the template as resources: resolved hardware's, else the spec's (``None`` when unset)."""
    view = TemplateView.of(template)
    cpu = view.resolved_hardware.get("cpu") or view.hardware.get("cpu") or {}
    out: dict[str, Any] = {}
    for section in ("requests", "limits"):
        if cpu.get(section) not in (None, ""):
            out[section] = {"cpu": cpu[section]}
    return out or None


def container_resources(
    service: Mapping[str, Any] | ServiceView,
    template: Mapping[str, Any] | TemplateView,
    default_gpu_resource: str,
    model: Mapping[str, Any] | ModelView | None = None,
) -> dict[str, Any]:
    """Resources of F50 and issue 20, key by key, later layers winning: per-GPU defaults, model
    ``spec.resources``, the template's ``hardware.cpu``, template ``spec.resources``, service ``spec.resources``.

    With N GPUs: requests cpu 4N, memory 32N Gi, GPU N; limits memory 48N Gi,
    GPU N; no CPU limit. With none (a CPU-only template): nothing until a layer
    sets something, and no GPU. Overrides apply per resource name,
    ``requests`` and ``limits`` separately. A service's ``overrides.hardware.cpu``
    reaches here through its derived template's ``hardware.cpu``.
    """
    tview = TemplateView.of(template)
    gpu = gpu_resource_name(tview, default_gpu_resource)
    count = gpu_count(tview)
    result: dict[str, dict[str, Any]] = {}
    if count > 0:
        result["requests"] = {
            "cpu": canonical(CPU_PER_GPU * count),
            "memory": canonical(f"{MEMORY_REQUEST_GI_PER_GPU * count}Gi"),
            gpu: str(count),
        }
        result["limits"] = {"memory": canonical(f"{MEMORY_LIMIT_GI_PER_GPU * count}Gi"), gpu: str(count)}
    _overlay(result, None if model is None else ModelView.of(model).resources, gpu)
    _overlay(result, template_cpu(tview), gpu)
    _overlay(result, tview.resources, gpu)
    _overlay(result, ServiceView.of(service).resources, gpu)
    return {k: v for k, v in result.items() if v}


# ---------------------------------------------------------------- cache volumes


def _mount_path(artifact: Mapping[str, Any], volume_name: str) -> str:
    if artifact.get("mountPoint"):
        return str(artifact["mountPoint"])
    model_id = str(artifact.get("model") or "").replace("..", "").strip("/")
    return posixpath.normpath(posixpath.join(CACHE_PATH, model_id or volume_name))


def cache_volumes(cache: Mapping[str, Any] | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Volumes and mounts for the Ready artifacts of a template cache that have a PVC (F51).

    Volume name: the artifact name made an RFC 1123 label; claim: the
    artifact's PVC; mount: the artifact's ``mountPoint``, else
    ``/workspace/cache/<modelId>`` with ``..`` removed, else (no ``model``)
    ``/workspace/cache/<volume name>``, as upstream. Artifacts are taken in
    name order; one whose volume name or mount path is already used is skipped.
    """
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    artifacts = (None if cache is None else CacheView.of(cache).artifacts) or {}
    for key in sorted(artifacts):
        artifact = artifacts[key] or {}
        claim = artifact.get("persistentVolumeClaim")
        if artifact.get("status") != "Ready" or not claim:
            continue
        name = naming.cache_volume_name(artifact.get("name") or key)
        path = _mount_path(artifact, name)
        if not name or any(v["name"] == name for v in volumes) or any(m["mountPath"] == path for m in mounts):
            continue
        volumes.append({"name": name, "persistentVolumeClaim": {"claimName": claim}})
        mounts.append({"name": name, "mountPath": path})
    return volumes, mounts


# ---------------------------------------------------------------- pull secrets and service account


def pull_secrets(*owners: ServiceView | TemplateView | ModelView) -> list[dict[str, Any]]:
    """``imagePullSecrets`` of the given owners (service, template, model) in that order, deduplicated by name."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for owner in owners:
        for name in owner.pull_secret_names:
            if name not in seen:
                seen.add(name)
                out.append({"name": name})
    return out


def service_account(*owners: ServiceView | TemplateView | ModelView) -> str | None:
    """The first ``serviceAccountName`` of the given owners (service, template, model), ``None`` when none names one."""
    return next((owner.service_account_name for owner in owners if owner.service_account_name), None)


def identity_sources(
    service: Mapping[str, Any] | ServiceView,
    template: Mapping[str, Any] | TemplateView,
    model: Mapping[str, Any] | ModelView,
) -> list[str]:
    """``render --explain`` lines: where the pull secrets and the service account come from."""
    lines = []
    owners: tuple[tuple[str, ServiceView | TemplateView | ModelView], ...] = (
        ("AIMService", ServiceView.of(service)),
        ("template", TemplateView.of(template)),
        ("model", ModelView.of(model)),
    )
    for what, owner in owners:
        if owner.pull_secret_names:
            lines.append(f"pull secrets: {', '.join(owner.pull_secret_names)} from {what} {owner.name}")
    for what, owner in owners:
        if owner.service_account_name:
            lines.append(f"service account: {owner.service_account_name} from {what} {owner.name}")
            break
    return lines


# ---------------------------------------------------------------- labels and replicas


def serving_labels(
    service: Mapping[str, Any] | ServiceView, template: Mapping[str, Any] | TemplateView
) -> dict[str, str]:
    """F48 labels: template, service, model (template ``spec.modelName``), metric and precision
    (template status profile); every value label-sanitised, empty ones left out."""
    tview = TemplateView.of(template)
    profile = ((tview.profile or {}).get("metadata")) or {}
    wanted = {
        keys.TEMPLATE_LABEL: tview.name,
        keys.SERVICE_LABEL: ServiceView.of(service).name,
        keys.MODEL_LABEL: tview.model_name,
        keys.METRIC_LABEL: profile.get("metric"),
        keys.PRECISION_LABEL: profile.get("precision"),
    }
    result = {}
    for key, value in wanted.items():
        clean = naming.sanitize_label_value(str(value)) if value else None
        if clean:
            result[key] = clean
    return result


def autoscaling(service: Mapping[str, Any] | ServiceView) -> bool:
    """Autoscaling mode: any of ``autoScaling``, ``minReplicas``, ``maxReplicas`` set (F52)."""
    return ServiceView.of(service).autoscaled


def scaling_request(service: Mapping[str, Any] | ServiceView) -> ScalingRequest | None:
    """The autoscaling request, ``None`` for fixed replicas.

    min = ``minReplicas`` or 1; max = ``maxReplicas``, else ``minReplicas``,
    else 1; metrics = ``autoScaling.metrics`` in AIM's wire form. A max below
    min never gets here as a request: the plan refuses it first
    (:mod:`aim_core.service.validation`); it is clamped only for safety.
    """
    view = ServiceView.of(service)
    if not view.autoscaled:
        return None
    minimum = view.min_replicas or 1
    maximum = view.max_replicas or view.min_replicas or 1
    metrics = tuple(plain_copy(m) for m in (view.auto_scaling.get("metrics") or ()))
    return ScalingRequest(min_replicas=int(minimum), max_replicas=max(int(maximum), int(minimum)), metrics=metrics)


def fixed_replicas(service: Mapping[str, Any] | ServiceView) -> int:
    replicas = ServiceView.of(service).replicas
    return 1 if replicas is None else int(replicas)


# ---------------------------------------------------------------- the request


def runtime_request(
    service: Mapping[str, Any],
    model: Mapping[str, Any],
    template: Mapping[str, Any],
    template_scope: str,
    config: Mapping[str, Any],
    cache: Mapping[str, Any] | None = None,
    live: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    *,
    default_gpu_resource: str,
    placement: Placement | None = None,
    adapters: AdapterServing | None = None,
) -> RuntimeRequest | Issue:
    """The runtime request for ``service``, or the InvalidSpec issue that prevents one.

    :param model: the resolved AIMModel or AIMClusterModel (its ``spec.image`` is served).
    :param template: the resolved template, with its status.
    :param template_scope: ``Namespace`` or ``Cluster``; names the template in messages.
    :param config: the merged runtime config spec (:func:`aim_core.runtimeconfig.resolve`).
    :param cache: the service's template cache, for cache volumes; ``None`` adds none.
    :param live: the serving object on the server, so the builder can carry its storage over.
    :param labels: extra labels for the serving object; the F48 labels win on conflict.
    :param default_gpu_resource: GPU resource name when the template names none.
    :param placement: node selector, tolerations and affinity
        (:func:`aim_core.service.placement.service_placement`); without it, the
        template's GPU node affinity only.
    :param adapters: the served LoRA adapters (:mod:`aim_core.service.adapters`): their engine
        arguments go in as a layer just above the defaults (every user layer wins), their
        read-only volumes before the cache volumes.
    :returns: ``NamespaceTooLong`` or ``InvalidEngineArgs`` issue, else the request.
    """
    view, tview, mview = ServiceView.of(service), TemplateView.of(template), ModelView.of(model)
    namespace = view.namespace
    try:
        name = naming.inference_service_name(view.name, namespace)
    except ReconcileError as exc:
        return Issue(exc.category, exc.reason, exc.message)
    layers = env_layers(service, template, template_scope, config)
    problem = engine_args_issue(layers)
    if problem is not None:
        return problem
    if adapters is not None:
        layers.insert(1, EnvLayer("spec.adapters", adapters.env(), user=False))

    volumes, mounts = cache_volumes(cache)
    if adapters is not None:
        # Before the cache volumes: those are carried over from the live object (appended by the
        # builder) once it exists, so this keeps one order on creation and on every re-apply.
        volumes = [*(dict(v) for v in adapters.volumes), *volumes]
        mounts = [*(dict(m) for m in adapters.mounts), *mounts]
    scaling = scaling_request(view)
    if placement is None:
        placement = Placement(
            affinity={"nodeAffinity": gpu} if (gpu := plain_copy(tview.resolved_node_affinity)) else None
        )
    return RuntimeRequest(
        service=service,
        name=name,
        namespace=namespace,
        image=mview.image,
        labels={**(labels or {}), **serving_labels(view, tview)},
        env=container_env(layers),
        resources=container_resources(view, tview, default_gpu_resource, mview),
        volumes=volumes,
        volume_mounts=mounts,
        node_affinity=placement.node_affinity,
        affinity=placement.affinity,
        node_selector=placement.node_selector,
        tolerations=placement.tolerations,
        image_pull_secrets=tuple(pull_secrets(view, tview, mview)),
        service_account_name=service_account(view, tview, mview),
        priority_class_name=view.priority_class_name or None,
        replicas=None if scaling else fixed_replicas(view),
        min_replicas=scaling.min_replicas if scaling else None,
        max_replicas=scaling.max_replicas if scaling else None,
        live=live,
        owned_volume_prefixes=(ADAPTER_VOLUME_PREFIX,),
    )


# ---------------------------------------------------------------- status


def replicas_text(current: int, desired: int, minimum: int, maximum: int) -> str:
    """``status.runtime.replicas``: ``"<current>"`` when min == max, else ``"<current>/<desired> (<min>-<max>)"``."""
    if minimum == maximum:
        return str(current)
    return f"{current}/{desired} ({minimum}-{maximum})"


def runtime_status(service: Mapping[str, Any] | ServiceView, replica_status: ReplicaStatus | None) -> dict[str, Any]:
    """``status.runtime`` (F52) from the scaler's counts, or from the spec when there are none.

    Without counts: fixed replicas report ``replicas`` for all four; an
    autoscaled service reports its bounds as min and max and its minimum as
    current and desired (Q14; upstream reports min = max = ``minReplicas``).
    """
    if replica_status is not None:
        minimum, maximum = replica_status.min_replicas, replica_status.max_replicas
        current, desired = replica_status.current_replicas, replica_status.desired_replicas
    else:
        scaling = scaling_request(service)
        if scaling is None:
            minimum = maximum = current = desired = fixed_replicas(service)
        else:
            minimum, maximum = scaling.min_replicas, scaling.max_replicas
            current = desired = minimum
    return {
        "currentReplicas": current,
        "desiredReplicas": desired,
        "minReplicas": minimum,
        "maxReplicas": maximum,
        "replicas": replicas_text(current, desired, minimum, maximum),
    }
