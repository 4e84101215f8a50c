"""Service overrides and the templates derived for them (F56, F57, Q5). Pure.

``spec.overrides`` (metric, precision, hardware) does two things: it filters
auto-selection (:mod:`aim_core.service.selection`), and when the chosen
template does not already have what it asks for, the service runs a *derived*
AIMServiceTemplate in its namespace, owned by the service, named
``<base>-ovr-<gpu>-<N>gpu-<precision>-<metric>-<hash4>`` (parts only for the
fields set, spec 2.5) and labelled ``origin=derived``.

Decisions where upstream leaves room (spec section 5):

* **Explicit name with overrides (Q5).** Upstream looks up only the derived
  name and a cluster template, so a namespaced base never gets its copy
  (TemplateNotFound) and a cluster base silently ignores the overrides. Here
  the base is looked up in both scopes; once it is Ready the derived
  namespaced template is planned (for a cluster base too: the namespaced spec
  is the cluster one plus ``caching``) and used as soon as it exists. Until
  it is Ready the ``Template`` component is Progressing ``TemplateNotReady``
  (service Pending) naming the derived template, and
  ``status.resolvedTemplate`` stays unset. A NotAvailable base is derived
  from too when the overrides name a GPU model: the copy may run on GPUs the
  cluster has.
* **Auto-selection with overrides (Q5).** Upstream creates the copy as an
  unused side object. Here the selected base goes through the same step, so
  a copy is made only when it adds something, and is then the template used.
* **Overrides that change nothing** (every value already the base's) use the
  base; no copy is made.
* **Derived templates are the service's own.** They are never derived again
  and never auto-selected, so one service's copy cannot capture another
  service's selection.
* **A pinned profile does not survive a changed profile.** The copy drops
  ``spec.profileId`` when an override changes metric, precision, GPU model or
  GPU count, so discovery looks the new profile up.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.api.common import API_VERSION
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.labels import MANAGED_BY_ENGINE, MANAGED_BY_LABEL, ORIGIN_DERIVED, ORIGIN_LABEL
from aim_core.reconcile.naming import derived_template_name
from aim_core.reconcile.resources import TEMPLATES
from aim_core.service.caching import SHARED, caching_mode
from aim_core.service.resolution import TemplateResolution
from aim_core.service.templates import (
    Obj,
    ScopedTemplate,
    describe,
    is_derived,
    same_gpu,
    template_gpu_count,
    template_gpu_model,
    template_health,
    template_metric,
    template_precision,
    template_status,
)
from aim_core.service.view import ServiceView
from aim_core.template import Scope, TemplateView

DEFAULT_RUNTIME_CONFIG = "default"


def _spec_gpu(t: Obj) -> Obj:
    return TemplateView.of(t).hardware.get("gpu") or {}


@attrs.frozen
class Overrides:
    """``spec.overrides`` of a service, read once."""

    metric: str = ""
    precision: str = ""
    gpu_model: str = ""
    gpu_count: int = 0
    hardware: Mapping[str, Any] = attrs.field(factory=dict, repr=False, hash=False)

    @classmethod
    def read(cls, overrides: Obj | None) -> Overrides:
        o = overrides or {}
        hardware = o.get("hardware") or {}
        gpu = hardware.get("gpu") or {}
        return cls(
            o.get("metric") or "",
            o.get("precision") or "",
            (gpu.get("model") or "").strip(),
            int(gpu.get("requests") or 0),
            hardware,
        )

    def __bool__(self) -> bool:
        return bool(self.metric or self.precision or self.hardware)

    def describe(self) -> str:
        """``GPU MI300X, 4 GPUs, precision fp8, metric throughput`` (only the fields set)."""
        parts = [
            f"GPU {self.gpu_model}" if self.gpu_model else "",
            f"{self.gpu_count} GPUs" if self.gpu_count else "",
            f"precision {self.precision}" if self.precision else "",
            f"metric {self.metric}" if self.metric else "",
        ]
        return ", ".join(p for p in parts if p) or "hardware"

    def derived_name(self, base: str) -> str:
        return derived_template_name(base, self.gpu_model, self.gpu_count, self.precision, self.metric)

    def mismatches(self, t: Obj, inventory: GpuInventory | None = None) -> list[str]:
        """How ``t`` contradicts these overrides, one phrase per field (F44 step 3).

        Metric and precision compare case-insensitively (profile value first),
        an unknown value counting as different. GPU model and count differ
        only when both sides are known (count: both above 0).
        """
        found = []
        for field, want, have in (
            ("metric", self.metric, template_metric(t)),
            ("precision", self.precision, template_precision(t)),
        ):
            if want and have.lower() != want.lower():
                found.append(f"{field} {have or 'unset'} (overrides ask {want})")
        gpu = template_gpu_model(t)
        if self.gpu_model and gpu and not same_gpu(gpu, self.gpu_model, inventory):
            found.append(f"GPU {gpu} (overrides ask {self.gpu_model})")
        count = template_gpu_count(t)
        if self.gpu_count > 0 and count > 0 and count != self.gpu_count:
            found.append(f"{count} GPUs (overrides ask {self.gpu_count})")
        nodes = self.hardware.get("nodes")
        if isinstance(nodes, int) and TemplateView.of(t).nodes != nodes:
            found.append(f"{TemplateView.of(t).nodes} node(s) per replica (overrides ask {nodes})")
        return found

    def change(self, t: Obj, inventory: GpuInventory | None = None) -> bool:
        """Whether a copy of ``t`` with these overrides would differ from ``t``.

        True when a value differs or ``t`` does not know it, when the overrides
        ask for 0 GPUs of a template that requests some, or when they set
        other hardware fields (CPU, minimum VRAM, resource name) to new values.
        """
        if not self:
            return False
        unknown = (self.gpu_model and not template_gpu_model(t)) or (self.gpu_count and not template_gpu_count(t))
        gpu = self.hardware.get("gpu") or {}
        no_gpus = gpu.get("requests") == 0 and template_gpu_count(t) > 0
        gpu_other = any(_spec_gpu(t).get(k) != v for k, v in gpu.items() if k not in ("model", "requests"))
        spec_hardware = TemplateView.of(t).hardware
        other = any(spec_hardware.get(k) != v for k, v in self.hardware.items() if k not in ("gpu", "nodes"))
        return bool(unknown or no_gpus or gpu_other or other or self.mismatches(t, inventory))


def _merge_hardware(base: Obj | None, override: Obj) -> dict[str, Any]:
    """Override hardware over the base's; a GPU model and a minimum VRAM exclude each other."""
    merged = copy.deepcopy(dict(base or {}))
    for key, value in override.items():
        if key == "gpu" and isinstance(value, Mapping):
            gpu = dict(merged.get("gpu") or {})
            if value.get("model"):
                gpu.pop("minVram", None)
            if value.get("minVram") is not None:
                gpu.pop("model", None)
            gpu.update(copy.deepcopy(dict(value)))
            merged["gpu"] = gpu
        elif value is not None:
            merged[key] = copy.deepcopy(value)
    return merged


def derived_template(
    base: Obj, base_scope: Scope, service: Obj, overrides: Obj | None, caching_shared: bool
) -> dict[str, Any]:
    """The AIMServiceTemplate a service derives from ``base`` for its overrides (F56, F57).

    The spec copies the base's (a cluster base loses nothing: its spec is the
    namespaced one without ``caching``) with the override values, the
    service's runtime config (else the base's, else ``default``), the
    service's pull secrets and resources when set, and ``caching.enabled``
    when the service caches in Shared mode. The engine adds the owner reference.

    :raises ValueError: ``base`` is itself derived (derived templates are never derived again).
    """
    if is_derived(base):
        raise ValueError(f"{describe(base, base_scope)} is a derived template and is not derived again")
    o = Overrides.read(overrides)
    view, base_view = ServiceView.of(service), TemplateView.of(base)
    spec = copy.deepcopy(dict(base_view.spec))
    if base_scope is Scope.CLUSTER:
        spec.pop("caching", None)
    if o.metric:
        spec["metric"] = o.metric
    if o.precision:
        spec["precision"] = o.precision
    if o.hardware:
        spec["hardware"] = _merge_hardware(spec.get("hardware"), o.hardware)
    if o.mismatches(base):
        spec.pop("profileId", None)
    spec["runtimeConfigName"] = view.runtime_config_name or spec.get("runtimeConfigName") or DEFAULT_RUNTIME_CONFIG
    for key, value in (("imagePullSecrets", view.image_pull_secrets), ("resources", view.resources)):
        if value:
            spec[key] = copy.deepcopy(value)
    if caching_shared:
        spec["caching"] = {**(spec.get("caching") or {}), "enabled": True}
    return {
        "apiVersion": API_VERSION,
        "kind": TEMPLATES.kind,
        "metadata": {
            "name": o.derived_name(base_view.name),
            "namespace": view.namespace,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY_ENGINE, ORIGIN_LABEL: ORIGIN_DERIVED},
        },
        "spec": spec,
    }


def with_overrides(
    base: ScopedTemplate,
    service: Obj,
    namespaced_by_name: Mapping[str, Obj],
    inventory: GpuInventory | None = None,
) -> TemplateResolution:
    """Step 3: use ``base``, or the derived template the service's overrides call for (module docstring)."""
    overrides = ServiceView.of(service).overrides
    o = Overrides.read(overrides)
    if is_derived(base.template) or not o.change(base.template, inventory):
        return TemplateResolution(base.health(), base)
    derivable = base.ready or (template_status(base.template) == State.NOT_AVAILABLE.value and bool(o.gpu_model))
    want = (
        derived_template(base.template, base.scope, service, overrides, caching_mode(service) == SHARED)
        if derivable
        else None
    )
    name = o.derived_name(base.name)
    existing = namespaced_by_name.get(name)
    if existing is not None:
        return TemplateResolution(
            template_health(existing, Scope.NAMESPACE), ScopedTemplate(existing, Scope.NAMESPACE), want
        )
    if want is None:
        h = base.health()
        return TemplateResolution(attrs.evolve(h, message=f"base of spec.overrides ({o.describe()}): {h.message}"))
    message = (
        f"creating AIMServiceTemplate {want['metadata']['namespace']}/{name} from {base.describe()} "
        f"with overrides ({o.describe()})"
    )
    return TemplateResolution(Health.progressing("TemplateNotReady", message, upstream=True), derived=want)
