"""What a service's LoRA adapters read from the service, its model and template: specs, sources, artifacts, base model names, the user's engine args. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aim_core.model import ModelView
from aim_core.reconcile.envvars import ENGINE_ARGS, merge_env
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView


def ready_condition(obj: Obj) -> Obj:
    return next((c for c in status_of(obj).get("conditions") or () if c.get("type") == "Ready"), {})


# ---------------------------------------------------------------- inputs


def adapter_specs(svc: Obj) -> list[Obj]:
    return list(ServiceView.of(svc).adapters)


def adapter_sources(svc: Obj) -> list[str]:
    """The ``sourceUri`` of every adapter (for the controller's index)."""
    return [str(a.get("sourceUri") or "") for a in adapter_specs(svc) if a.get("sourceUri")]


def artifact_view(artifact: Obj | None) -> tuple[Any, ...]:
    """What the adapter plan reads of an artifact; a service is re-planned only when this changes."""
    if artifact is None:
        return ()
    meta, status = meta_of(artifact), status_of(artifact)
    return (
        meta.get("name"),
        bool(meta.get("deletionTimestamp")),
        bool(meta.get("ownerReferences")),
        spec_of(artifact).get("sourceUri"),
        status.get("status"),
        status.get("persistentVolumeClaim"),
        json.dumps(status.get("adapter"), sort_keys=True),
        json.dumps(ready_condition(artifact), sort_keys=True),
    )


def adapter_artifacts(svc: Obj) -> list[str]:
    """Artifacts the service refers to through ``status.adapters`` (for the artifact controller)."""
    return [
        str(a["artifact"]) for a in ServiceView.of(svc).adapter_status if isinstance(a, Mapping) and a.get("artifact")
    ]


def base_names(svc: Obj, model: Obj | None, template: Obj | None) -> set[str]:
    """Names the base model answers to: the model object's, its canonical name and model ids."""
    names = {ServiceView.of(svc).model_name}
    names |= base_ids(model, template)
    if model is not None:
        names.add(ModelView.of(model).name)
    if template is not None:
        names.add(TemplateView.of(template).model_name)
    return {str(n).strip() for n in names if n and str(n).strip()}


def base_ids(model: Obj | None, template: Obj | None) -> set[str]:
    """Model ids (``org/name``) of the base model: image metadata and model sources."""
    ids: set[Any] = set()
    if model is not None:
        mview = ModelView.of(model)
        ids.add(((mview.status_image_metadata or {}).get("model") or {}).get("canonicalName"))
        for source in mview.model_sources:
            ids.add((source or {}).get("modelId"))
    if template is not None:
        tview = TemplateView.of(template)
        for source in (*tview.model_sources, *tview.discovered_sources):
            ids.add((source or {}).get("modelId"))
    return {str(i).strip() for i in ids if i and str(i).strip()}


def user_engine_args(envs: Iterable[Sequence[Obj]]) -> dict[str, Any]:
    """The user layers' ``AIM_ENGINE_ARGS`` merged as the container will see them (non-objects ignored)."""
    merged: list[dict[str, Any]] = []
    for env in envs:
        merged = merge_env(merged, [e for e in env if e.get("name") == ENGINE_ARGS])
    for entry in merged:
        try:
            value = json.loads(entry.get("value") or "")
        except (TypeError, ValueError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}
