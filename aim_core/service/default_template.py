"""A model's default template (issue 20): ``AIMModel.spec.defaultServiceTemplate``. Pure.

A service that names no template (``spec.template.name`` unset) and serves a
model with ``spec.defaultServiceTemplate`` uses that template instead of
auto-selection, resolved as if the service had named it (namespaced first,
then cluster; overrides derive from it). The ``Template`` condition says so.
A default that is missing or not Ready is reported as such
(``TemplateNotFound``, or the template's own state), never replaced by an
automatic choice: the model's owner asked for that template.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from aim_core.model import ModelView
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.obj import Obj
from aim_core.service.resolution import TemplateResolution
from aim_core.service.selection import resolve_explicit
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView


def default_template_name(service: Obj, model: Obj | None) -> str | None:
    """The model's default template when it applies to ``service`` (no template named), else ``None``."""
    if model is None:
        return None
    if ServiceView.of(service).template_name:
        return None
    return ModelView.of(model).default_template or None


def resolve_default(
    service: Obj,
    model: Obj | None,
    namespaced: Sequence[Obj],
    cluster: Sequence[Obj],
    inventory: GpuInventory,
) -> TemplateResolution | None:
    """The resolution of the model's default template, ``None`` when the model names none or the service names one."""
    name = default_template_name(service, model)
    if name is None:
        return None
    assert model is not None
    ns_by_name = {TemplateView.of(t).name: t for t in namespaced}
    cl_by_name = {TemplateView.of(t).name: t for t in cluster}
    result = resolve_explicit(name, dict(service), ns_by_name, cl_by_name, inventory)
    view = ModelView.of(model)
    kind = model.get("kind") or "AIMModel"
    where = f"{kind} {view.namespace}/{view.name}" if view.namespace else f"{kind} {view.name}"
    prefix = f"default template {name!r} of {where} (spec.defaultServiceTemplate)"
    return attrs.evolve(result, health=attrs.evolve(result.health, message=f"{prefix}: {result.health.message}"))
