"""The templates a model creates (F23, F27, F28).

Three sources, all owned by the model (garbage-collected with it) and
labelled ``aim.eai.amd.com/model=<model>`` and ``origin=auto-generated``:

* **Recommended deployments** of an image-based model's metadata: one template
  each, named ``<image>-<count>x-<gpu>-<metric>-<precision>-<hash4>`` (2.5).
  ``metric``, ``precision`` and ``profileId`` are copied when present; the GPU
  block only when both the model and a positive count are known.
* **customTemplates** (any model): hardware is the model's ``custom.hardware``
  overlaid with the entry's (set GPU fields win; CPU field by field), type
  is the entry's, else ``custom.type``, else ``unoptimized`` (Q12, below), env is
  the model env overlaid with the entry's, ``modelSources`` come from the model.
  A named entry gets ``aim.eai.amd.com/template.alias=<name>``.
* **One template for a custom model without customTemplates**: named
  ``<model>-custom-<hash>``, hardware and type from ``custom``.

Every template copies the model's ``imagePullSecrets``, ``serviceAccountName``
and ``runtimeConfigName``; CPU requests/limits are also written to
``spec.resources``.

Decisions (spec section 5):

* **Q12.** Our CRD gives ``customTemplates[].type`` no default, so a model's
  ``custom.type`` reaches its listed templates when they set no type of their
  own (upstream's CRD default ``unoptimized`` made ``custom.type`` dead for them).
* **Q13.** Cluster-scoped custom templates get the merged env too (upstream gives
  them none). The env is the model author's and describes how the weights run;
  ``valueFrom`` references in it resolve in the namespace of the service that
  uses the template, as for any cluster template.

Pure; wire-format dicts in and out.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aim_core.api.common import DEFAULT_GPU_RESOURCE
from aim_core.model.view import ModelView
from aim_core.reconcile import naming
from aim_core.reconcile.envvars import merge_env
from aim_core.reconcile.labels import (
    GENERATED_SPEC_ANNOTATION,
    MODEL_LABEL,
    ORIGIN_AUTO_GENERATED,
    ORIGIN_LABEL,
    TEMPLATE_ALIAS_LABEL,
)
from aim_core.reconcile.obj import Obj, meta_of, spec_of
from aim_core.reconcile.quantities import canonical_hardware, canonical_sources

DEFAULT_TYPE = "unoptimized"


def _copied_from_model(spec: Obj) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.get("imagePullSecrets"):
        out["imagePullSecrets"] = copy.deepcopy(list(spec["imagePullSecrets"]))
    if (spec.get("serviceAccountName") or "").strip():
        out["serviceAccountName"] = spec["serviceAccountName"].strip()
    if (spec.get("runtimeConfigName") or "").strip():
        out["runtimeConfigName"] = spec["runtimeConfigName"].strip()
    return out


def _labels(model_name: str, alias: str | None = None) -> dict[str, str]:
    labels = {MODEL_LABEL: naming.hashed_label_value(model_name), ORIGIN_LABEL: ORIGIN_AUTO_GENERATED}
    if alias:
        value = naming.hashed_label_value(alias)
        if value:
            labels[TEMPLATE_ALIAS_LABEL] = value
    return labels


GENERATED_FIELDS = ("modelName", "metric", "precision", "hardware")  # immutable once created (F25)


def normalized_hardware(hardware: Any) -> Any:
    """``hardware`` without what the CRD defaults (``resourceName: amd.com/gpu``), quantities canonical."""
    if not isinstance(hardware, Mapping):
        return hardware
    out = canonical_hardware(copy.deepcopy(dict(hardware)))
    gpu = out.get("gpu")
    if isinstance(gpu, dict) and gpu.get("resourceName") in (None, DEFAULT_GPU_RESOURCE):
        gpu.pop("resourceName", None)
    return out


def generated_digest(spec: Mapping[str, Any]) -> str:
    """The digest of what a model chose for a template (:data:`GENERATED_FIELDS`), as its annotation holds it."""
    chosen = {
        key: (normalized_hardware(spec.get(key)) if key == "hardware" else spec.get(key))
        for key in GENERATED_FIELDS
        if spec.get(key) not in (None, "", {})
    }
    return hashlib.sha256(json.dumps(chosen, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def is_as_generated(template: Mapping[str, Any]) -> bool:
    """Whether ``template`` still holds what its model generated (its annotation matches its spec)."""
    annotations = meta_of(template).get("annotations") or {}
    recorded = annotations.get(GENERATED_SPEC_ANNOTATION)
    return bool(recorded) and recorded == generated_digest(spec_of(template))


def _template(name: str, namespace: str | None, labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": labels,
        "annotations": {GENERATED_SPEC_ANNOTATION: generated_digest(spec)},
    }
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "spec": spec}


# ---------------------------------------------------------------- recommended deployments


def recommended_templates(model: Obj | ModelView, deployments: Iterable[Obj]) -> list[dict[str, Any]]:
    """One template per recommended deployment of an image-based model (F23)."""
    view = ModelView.of(model)
    model_name = view.name
    image = view.image
    out = []
    for deployment in deployments:
        gpu_model = deployment.get("gpuModel") or ""
        gpu_count = int(deployment.get("gpuCount") or 0)
        metric = deployment.get("metric") or ""
        precision = deployment.get("precision") or ""
        name = naming.recommended_template_name(model_name, image, gpu_model, gpu_count, metric, precision)
        tspec: dict[str, Any] = {"modelName": model_name}
        if metric:
            tspec["metric"] = metric
        if precision:
            tspec["precision"] = precision
        if deployment.get("profileId"):
            tspec["profileId"] = deployment["profileId"]
        if gpu_model and gpu_count > 0:
            tspec["hardware"] = {"gpu": {"requests": gpu_count, "model": gpu_model}}
        tspec.update(_copied_from_model(view.spec))
        out.append(_template(name, view.namespace, _labels(model_name), tspec))
    return out


# ---------------------------------------------------------------- custom templates


def _set(value: Any) -> bool:
    return value not in (None, "", 0, [], {})


def merge_hardware(base: Obj | None, own: Obj | None) -> dict[str, Any] | None:
    """The model's ``custom.hardware`` overlaid with a template's (F28).

    Set GPU fields of the template win; naming a GPU model drops an inherited
    ``minVram`` and vice versa (the two are exclusive in the API). CPU merges
    field by field. ``nodes``: the template's, else the model's.
    """
    if not base:
        return copy.deepcopy(dict(own)) if own else None
    if not own:
        return copy.deepcopy(dict(base))
    merged: dict[str, Any] = {}
    base_gpu, own_gpu = dict(base.get("gpu") or {}), dict(own.get("gpu") or {})
    if base_gpu or own_gpu:
        gpu = dict(base_gpu)
        if _set(own_gpu.get("model")):
            gpu.pop("minVram", None)
        if _set(own_gpu.get("minVram")):
            gpu.pop("model", None)
        gpu.update({k: v for k, v in own_gpu.items() if _set(v)})
        merged["gpu"] = gpu
    base_cpu, own_cpu = dict(base.get("cpu") or {}), dict(own.get("cpu") or {})
    if base_cpu or own_cpu:
        merged["cpu"] = {**base_cpu, **{k: v for k, v in own_cpu.items() if _set(v)}}
    nodes = own.get("nodes") if _set(own.get("nodes")) else base.get("nodes")
    if nodes is not None:
        merged["nodes"] = nodes
    return copy.deepcopy(merged)


def _cpu_resources(hardware: Obj | None) -> dict[str, Any] | None:
    cpu = (hardware or {}).get("cpu") or {}
    resources: dict[str, Any] = {}
    if _set(cpu.get("requests")):
        resources["requests"] = {"cpu": cpu["requests"]}
    if _set(cpu.get("limits")):
        resources["limits"] = {"cpu": cpu["limits"]}
    return resources or None


def _custom_spec(model: ModelView, hardware: Obj | None, type_: str, env: Sequence[Obj]) -> dict[str, Any]:
    tspec: dict[str, Any] = {"modelName": model.name, "type": type_}
    if hardware:
        hardware = canonical_hardware(hardware)  # as upstream's resource.Quantity writes them (issue 18)
        tspec["hardware"] = hardware
        resources = _cpu_resources(hardware)
        if resources:
            tspec["resources"] = resources
    if model.model_sources:
        tspec["modelSources"] = canonical_sources(copy.deepcopy(list(model.model_sources)))
    if env:
        tspec["env"] = list(env)
    tspec.update(_copied_from_model(model.spec))
    return tspec


def custom_templates(model: Obj | ModelView) -> list[dict[str, Any]]:
    """The templates of ``spec.customTemplates``, or the single one of a custom model without any (F27, F28)."""
    view = ModelView.of(model)
    model_name = view.name
    custom = view.custom
    base_hw = custom.get("hardware")
    model_env = list(view.env)
    entries = list(view.custom_templates)
    out = []
    if not entries:
        if not view.model_sources:
            return []
        tspec = _custom_spec(
            view,
            copy.deepcopy(base_hw) if base_hw else None,
            custom.get("type") or DEFAULT_TYPE,
            merge_env([], model_env),
        )
        return [_template(naming.auto_custom_template_name(model_name), view.namespace, _labels(model_name), tspec)]
    for index, entry in enumerate(entries):
        hardware = merge_hardware(base_hw, entry.get("hardware"))
        profile = entry.get("profile") or {}
        alias = (entry.get("name") or "").strip()
        gpu = (hardware or {}).get("gpu")
        name = naming.custom_template_name(
            model_name,
            index,
            alias,
            profile=(profile.get("precision") or "", profile.get("metric") or "")
            if entry.get("profile") is not None
            else None,
            gpu=(int(gpu.get("requests") or 0), gpu.get("model") or "") if gpu else None,
        )
        tspec = _custom_spec(
            view,
            hardware,
            entry.get("type") or custom.get("type") or DEFAULT_TYPE,
            merge_env(model_env, entry.get("env") or []),
        )
        if profile.get("metric"):
            tspec["metric"] = profile["metric"]
        if profile.get("precision"):
            tspec["precision"] = profile["precision"]
        for key in ("aimId", "modelId", "customProfile"):
            if entry.get(key):
                tspec[key] = copy.deepcopy(entry[key])
        out.append(_template(name, view.namespace, _labels(model_name, alias), tspec))
    return out
