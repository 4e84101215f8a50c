"""AIMServiceTemplate and AIMClusterServiceTemplate as their code reads them: a typed, read-only view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, cached_view, meta_of, pull_secret_names, spec_of, status_of


@attrs.frozen
class TemplateView:
    """The fields of a service template the template code reads, with their defaults.

    :ivar namespace: "" for an AIMClusterServiceTemplate.
    :ivar model_name: ``spec.modelName``.
    :ivar model_sources: ``spec.modelSources``: given in line, discovery does not run.
    :ivar caching_enabled: ``spec.caching.enabled``.
    :ivar caching_env: ``spec.caching.env``, passed to the template cache it makes.
    :ivar spec: ``spec`` as written, for the checks and the GPU rules of :mod:`aim_core.template.hardware`.
    :ivar profile: ``status.profile`` as discovery (or the spec) last wrote it.
    :ivar discovered_sources: ``status.modelSources`` as last written.
    :ivar discovery: ``status.discovery`` (the discovery breaker) as last written.
    :ivar state: ``status.status``.
    :ivar hardware: ``spec.hardware``, an empty map when unset.
    :ivar env: ``spec.env`` as written.
    :ivar labels: ``metadata.labels``, an empty map when unset.
    :ivar benchmarks: ``status.benchmarks`` (measurements) as last written.
    :ivar profile_id: ``spec.profileId``, "" when unset.
    :ivar metric: ``spec.metric``, "" when unset.
    :ivar precision: ``spec.precision``, "" when unset.
    :ivar resources: ``spec.resources`` as written; ``None`` when unset.
    :ivar pull_secret_names: names in ``spec.imagePullSecrets``: stripped, blanks dropped, order kept, no repeats.
    :ivar service_account_name: ``spec.serviceAccountName``, stripped.
    :ivar resolved_hardware: ``status.resolvedHardware``, an empty map when unset.
    :ivar resolved_node_affinity: ``status.resolvedNodeAffinity`` as last written.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    model_name: str = ""
    model_sources: tuple[Any, ...] = ()
    runtime_config_name: Any = None
    caching_enabled: bool = False
    caching_env: Any = None
    spec: Obj = attrs.field(factory=dict)
    profile: Obj | None = None
    discovered_sources: tuple[Any, ...] = ()
    discovery: Obj = attrs.field(factory=dict)
    state: str = ""
    conditions: tuple[Obj, ...] = ()
    hardware: Obj = attrs.field(factory=dict)
    env: tuple[Obj, ...] = ()
    labels: Obj = attrs.field(factory=dict)
    benchmarks: tuple[Any, ...] = ()
    profile_id: str = ""
    metric: str = ""
    precision: str = ""
    resources: Any = None
    pull_secret_names: tuple[str, ...] = ()
    service_account_name: str = ""
    resolved_hardware: Obj = attrs.field(factory=dict)
    resolved_node_affinity: Any = None

    @classmethod
    @cached_view
    def of(cls, template: Obj | TemplateView) -> TemplateView:
        """The view of ``template`` (a view is returned as it is)."""
        if isinstance(template, TemplateView):
            return template
        meta, spec, status = meta_of(template), spec_of(template), status_of(template)
        caching = spec.get("caching") or {}
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            model_name=str(spec.get("modelName") or ""),
            model_sources=tuple(spec.get("modelSources") or ()),
            runtime_config_name=spec.get("runtimeConfigName"),
            caching_enabled=bool(caching.get("enabled")),
            caching_env=caching.get("env"),
            spec=spec,
            profile=status.get("profile"),
            discovered_sources=tuple(status.get("modelSources") or ()),
            discovery=status.get("discovery") or {},
            state=str(status.get("status") or ""),
            conditions=tuple(c for c in status.get("conditions") or () if isinstance(c, Mapping)),
            hardware=spec.get("hardware") or {},
            env=tuple(spec.get("env") or ()),
            labels=meta.get("labels") or {},
            benchmarks=tuple(status.get("benchmarks") or ()),
            profile_id=str(spec.get("profileId") or ""),
            metric=str(spec.get("metric") or ""),
            precision=str(spec.get("precision") or ""),
            resources=spec.get("resources"),
            pull_secret_names=pull_secret_names(spec.get("imagePullSecrets")),
            service_account_name=str(spec.get("serviceAccountName") or "").strip(),
            resolved_hardware=status.get("resolvedHardware") or {},
            resolved_node_affinity=status.get("resolvedNodeAffinity"),
        )

    @property
    def nodes(self) -> int:
        """Nodes one replica spans: ``status.resolvedHardware.nodes``, else ``spec.hardware.nodes``, else 1."""
        for hardware in (self.resolved_hardware, self.hardware):
            value = hardware.get("nodes")
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
        return 1


__all__ = ["TemplateView"]
