"""What the service controller indexes a service by: model and template names, serving name. Pure."""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.naming import inference_service_name
from aim_core.reconcile.obj import spec_of, status_of


def namespace_of(obj: dict[str, Any]) -> str | None:
    return obj["metadata"].get("namespace")


def model_names(svc: dict[str, Any]) -> list[str]:
    names = []
    model = spec_of(svc).get("model") or {}
    if (model.get("name") or "").strip():
        names.append(model["name"].strip())
    resolved = (status_of(svc).get("resolvedModel") or {}).get("name")
    if resolved:
        names.append(resolved)
    return names


def template_names(svc: dict[str, Any]) -> list[str]:
    names = []
    explicit = ((spec_of(svc).get("template") or {}).get("name") or "").strip()
    if explicit:
        names.append(explicit)
    resolved = (status_of(svc).get("resolvedTemplate") or {}).get("name")
    if resolved:
        names.append(resolved)
    return names


def serving_name_keys(svc: dict[str, Any]) -> list[str]:
    try:
        return [inference_service_name(svc["metadata"]["name"], namespace_of(svc) or "")]
    except Exception:  # noqa: BLE001 - a name that cannot fit is reported by the plan
        return []
