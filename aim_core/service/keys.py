"""What the service controller indexes a service by: model and template names, serving name. Pure."""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.naming import inference_service_name
from aim_core.service.view import ServiceView


def namespace_of(obj: dict[str, Any]) -> str | None:
    return obj["metadata"].get("namespace")


def model_names(svc: dict[str, Any] | ServiceView) -> list[str]:
    view = ServiceView.of(svc)
    return [n for n in (view.model_name, view.resolved_model_name) if n]


def template_names(svc: dict[str, Any] | ServiceView) -> list[str]:
    view = ServiceView.of(svc)
    return [n for n in (view.template_name, view.resolved_template.get("name")) if n]


def serving_name_keys(svc: dict[str, Any] | ServiceView) -> list[str]:
    view = ServiceView.of(svc)
    try:
        return [inference_service_name(view.name, view.namespace)]
    except Exception:  # noqa: BLE001 - a name that cannot fit is reported by the plan
        return []
