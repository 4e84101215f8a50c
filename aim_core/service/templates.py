"""The template an AIMService runs: facts, health and references (F43, F45, F54). Pure.

A service's template is chosen in three steps;
:func:`aim_core.service.selection.choose_template` runs them in order, and the
pieces are public for the controller and ``render --explain``:

1. **Sticky (F45).** A template recorded in ``status.resolvedTemplate`` is
   kept while it exists (same UID) and is Ready (:func:`sticky`).
2. **Explicit or automatic.** ``spec.template.name`` is looked up in the
   service namespace, then cluster-wide
   (:func:`~aim_core.service.selection.resolve_explicit`); otherwise the best
   Ready template for the model is picked
   (:func:`~aim_core.service.selection.select_template`).
3. **Overrides (F56).** When ``spec.overrides`` asks for something the chosen
   template does not already have, the service uses a derived
   AIMServiceTemplate in its namespace (:mod:`aim_core.service.overrides`).

This module holds what every step needs: the facts of a template as selection
reads them (profile value first, spec as fallback, or the other way round for
the GPU model, as upstream), the ``Template`` component's health, the
``status.resolvedTemplate`` reference and the resolution value.

* **NotAvailable template (Q3).** The component stays NotAvailable
  ``TemplateNotReady`` so the ``Ready`` condition names it; the service's
  status map shows it as Pending, never the enum-invalid ``NotAvailable``.
* **References** carry ``kind`` as well, like ``status.resolvedModel``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.conditions import dependency_health
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.labels import ORIGIN_DERIVED, ORIGIN_LABEL
from aim_core.reconcile.obj import Obj
from aim_core.template import Scope, TemplateView

COMPONENT = "Template"


# ---------------------------------------------------------------- facts


def _profile(t: Obj) -> Obj:
    return (TemplateView.of(t).profile or {}).get("metadata") or {}


def _spec_gpu(t: Obj) -> Obj:
    return TemplateView.of(t).hardware.get("gpu") or {}


def template_status(t: Obj) -> str:
    """``status.status``; ``Pending`` before the template controller has written one."""
    return TemplateView.of(t).state or State.PENDING.value


def profile_type(t: Obj) -> str:
    """The discovered profile type; a template without one counts as ``unoptimized`` (F44)."""
    return _profile(t).get("type") or "unoptimized"


def template_metric(t: Obj) -> str:
    """Metric of the discovered profile, else of the spec; empty when neither says."""
    return _profile(t).get("metric") or TemplateView.of(t).metric


def template_precision(t: Obj) -> str:
    """Precision of the discovered profile, else of the spec; empty when neither says."""
    return _profile(t).get("precision") or TemplateView.of(t).precision


def template_gpu_model(t: Obj) -> str:
    """GPU model of the spec, else of the discovered profile; empty for templates that name none."""
    return _spec_gpu(t).get("model") or _profile(t).get("gpu") or ""


def template_gpu_count(t: Obj) -> int:
    """GPUs per replica from the spec, else the discovered profile; 0 when unknown."""
    return int(_spec_gpu(t).get("requests") or _profile(t).get("gpuCount") or 0)


def is_derived(t: Obj) -> bool:
    """Whether a service derived this template from another one (label ``origin=derived``)."""
    return TemplateView.of(t).labels.get(ORIGIN_LABEL) == ORIGIN_DERIVED


def describe(t: Obj, scope: Scope) -> str:
    """``AIMServiceTemplate ns/name`` or ``AIMClusterServiceTemplate name``, for messages."""
    view = TemplateView.of(t)
    where = f"{view.namespace}/" if scope is Scope.NAMESPACE else ""
    return f"{scope.kind} {where}{view.name}"


def same_gpu(a: str, b: str, inventory: GpuInventory | None = None) -> bool:
    """Whether two written GPU models mean the same GPU (``mi300x`` = ``AMD Instinct MI300X``).

    Each name stands for itself (upper-cased) and for what any installed vendor
    normalises it to; the names match when those sets overlap.
    """

    def names(model: str) -> set[str]:
        found = {model.strip().upper()}
        for vendor in inventory.vendors if inventory is not None else ():
            canonical = vendor.normalize_model(model)
            if canonical:
                found.add(canonical.upper())
        return found - {""}

    return bool(names(a) & names(b))


# ---------------------------------------------------------------- health and references


def template_health(t: Obj, scope: Scope | None = None) -> Health:
    """The ``Template`` component for an existing template (F43; Q3 in the module docstring).

    Ready → True ``Resolved``; NotAvailable → NotAvailable; Failed or Degraded
    → Failed; anything else → Progressing (the service waits as Pending). All
    not-ready cases use ``TemplateNotReady``; the health is always upstream.
    """
    what = describe(t, scope or (Scope.NAMESPACE if TemplateView.of(t).namespace else Scope.CLUSTER))
    return dependency_health(
        t,
        what,
        ready_reason="Resolved",
        not_ready_reason="TemplateNotReady",
        waiting=State.PROGRESSING,
        unknown=State.PENDING.value,
    )


def resolved_reference(t: Obj, scope: Scope) -> dict[str, Any]:
    """``status.resolvedTemplate``: kind, name, namespace (namespaced only), scope and uid (when known)."""
    view = TemplateView.of(t)
    ref: dict[str, Any] = {"kind": scope.kind, "name": view.name}
    if scope is Scope.NAMESPACE:
        ref["namespace"] = view.namespace
    ref["scope"] = scope.value
    if view.uid:
        ref["uid"] = view.uid
    return ref


@attrs.frozen
class ScopedTemplate:
    """A template together with where it was found."""

    template: Obj = attrs.field(repr=False, hash=False)
    scope: Scope

    @property
    def name(self) -> str:
        return TemplateView.of(self.template).name

    @property
    def ready(self) -> bool:
        return template_status(self.template) == State.READY.value

    def health(self) -> Health:
        return template_health(self.template, self.scope)

    def reference(self) -> dict[str, Any]:
        return resolved_reference(self.template, self.scope)

    def describe(self) -> str:
        return describe(self.template, self.scope)


def sticky(
    recorded: Obj | None, namespaced_by_name: Mapping[str, Obj], cluster_by_name: Mapping[str, Obj]
) -> ScopedTemplate | None:
    """The template recorded in ``status.resolvedTemplate`` if it still exists and is Ready (F45).

    A recorded scope decides where to look (no scope: namespace, then
    cluster). A template recreated under the same name (another UID) is not
    the recorded one, so resolution runs again.
    """
    name = (recorded or {}).get("name")
    if not name:
        return None
    scope = (recorded or {}).get("scope")
    places = [(Scope.NAMESPACE, namespaced_by_name), (Scope.CLUSTER, cluster_by_name)]
    for where, by_name in places:
        if scope and scope != where.value:
            continue
        found = by_name.get(name)
        if found is None:
            continue
        uid, recorded_uid = TemplateView.of(found).uid, (recorded or {}).get("uid")
        if uid and recorded_uid and uid != recorded_uid:
            return None
        picked = ScopedTemplate(found, where)
        return picked if picked.ready else None
    return None
