"""AIMService as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, cached_view, meta_of, pull_secret_names, spec_of, status_of
from aim_core.runtimeconfig import config_name


def _map(value: Any) -> Obj:
    """``value`` when it is a map, else an empty one (a spec the schema would refuse reads as unset)."""
    return value if isinstance(value, Mapping) else {}


def _name(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


@attrs.frozen
class ServiceView:
    """The fields of an AIMService the service code reads.

    :ivar model_name: ``spec.model.name``, stripped; "" when the service names an image instead.
    :ivar model_image: ``spec.model.image``, stripped.
    :ivar template_name: ``spec.template.name``, stripped; "" when the template is chosen automatically.
    :ivar routing: ``spec.routing`` as written; ``None`` when unset.
    :ivar caching: ``spec.caching`` as written.
    :ivar autoscaled: any of ``autoScaling``, ``minReplicas``, ``maxReplicas`` set (F52).
    :ivar spec: ``spec`` as written, for the checks that say what is wrong in it and the helpers
        that build the serving objects from it.
    :ivar resolved_model_name: ``status.resolvedModel.name``.
    :ivar resolved_template: ``status.resolvedTemplate`` as last written.
    :ivar cache_status: ``status.cache`` as last written.
    :ivar resources: ``spec.resources`` as written; ``None`` when unset.
    :ivar pull_secret_names: names in ``spec.imagePullSecrets``: stripped, blanks dropped, order kept, no repeats.
    :ivar service_account_name: ``spec.serviceAccountName``, stripped.
    :ivar priority_class_name: ``spec.priorityClassName`` as written.
    :ivar replicas: ``spec.replicas``; ``None`` when unset.
    :ivar min_replicas: ``spec.minReplicas``; ``None`` when unset.
    :ivar max_replicas: ``spec.maxReplicas``; ``None`` when unset.
    :ivar auto_scaling: ``spec.autoScaling``, an empty map when unset.
    :ivar runtime_config_name: ``spec.runtimeConfigName`` as written.
    :ivar config_name: the runtime config the service asks for (``default`` when unset or blank).
    :ivar adapter_limits: ``spec.adapterLimits``, an empty map when unset.
    :ivar env: ``spec.env`` as written.
    :ivar image_pull_secrets: ``spec.imagePullSecrets`` as written (copied into a derived template).
    :ivar prefer_measured: ``spec.template.preferMeasured`` as written.
    :ivar adapters: the entries of ``spec.adapters`` that are maps.
    :ivar adapter_status: ``status.adapters`` as last written.
    :ivar storage: ``spec.storage``, an empty map when unset.
    :ivar model: ``spec.model`` as written (name, image or custom), an empty map when unset.
    :ivar resolved_model: ``status.resolvedModel`` as last written.
    :ivar overrides: ``spec.overrides`` as written (read by :class:`aim_core.service.overrides.Overrides`).
    :ivar allow_unoptimized: ``spec.template.allowUnoptimized``.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    model_name: str = ""
    model_image: str = ""
    template_name: str = ""
    routing: Obj | None = None
    caching: Obj = attrs.field(factory=dict)
    autoscaled: bool = False
    spec: Obj = attrs.field(factory=dict)
    resolved_model_name: str = ""
    resolved_template: Obj = attrs.field(factory=dict)
    cache_status: Obj = attrs.field(factory=dict)
    resources: Any = None
    pull_secret_names: tuple[str, ...] = ()
    service_account_name: str = ""
    priority_class_name: Any = None
    replicas: Any = None
    min_replicas: Any = None
    max_replicas: Any = None
    auto_scaling: Obj = attrs.field(factory=dict)
    runtime_config_name: Any = None
    config_name: str = "default"
    adapter_limits: Obj = attrs.field(factory=dict)
    env: tuple[Obj, ...] = ()
    image_pull_secrets: Any = None
    overrides: Any = None
    prefer_measured: Any = None
    adapters: tuple[Obj, ...] = ()
    adapter_status: tuple[Any, ...] = ()
    storage: Obj = attrs.field(factory=dict)
    model: Obj = attrs.field(factory=dict)
    resolved_model: Obj = attrs.field(factory=dict)
    allow_unoptimized: bool = False

    @classmethod
    @cached_view
    def of(cls, service: Obj | ServiceView) -> ServiceView:
        """The view of ``service`` (a view is returned as it is)."""
        if isinstance(service, ServiceView):
            return service
        meta, spec, status = meta_of(service), spec_of(service), status_of(service)
        model, template = _map(spec.get("model")), _map(spec.get("template"))
        routing = spec.get("routing")
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            model_name=_name(model.get("name")),
            model_image=_name(model.get("image")),
            template_name=_name(template.get("name")),
            routing=routing if isinstance(routing, Mapping) else None,
            caching=_map(spec.get("caching")),
            autoscaled=any(spec.get(k) is not None for k in ("autoScaling", "minReplicas", "maxReplicas")),
            spec=spec,
            resolved_model_name=str(_map(status.get("resolvedModel")).get("name") or ""),
            resolved_template=_map(status.get("resolvedTemplate")),
            cache_status=_map(status.get("cache")),
            resources=spec.get("resources"),
            pull_secret_names=pull_secret_names(spec.get("imagePullSecrets")),
            service_account_name=str(spec.get("serviceAccountName") or "").strip(),
            priority_class_name=spec.get("priorityClassName"),
            replicas=spec.get("replicas"),
            min_replicas=spec.get("minReplicas"),
            max_replicas=spec.get("maxReplicas"),
            auto_scaling=spec.get("autoScaling") or {},
            runtime_config_name=spec.get("runtimeConfigName"),
            config_name=config_name(spec),
            adapter_limits=spec.get("adapterLimits") or {},
            env=tuple(spec.get("env") or ()),
            image_pull_secrets=spec.get("imagePullSecrets"),
            overrides=spec.get("overrides"),
            prefer_measured=template.get("preferMeasured"),
            adapters=tuple(a for a in spec.get("adapters") or () if isinstance(a, Mapping)),
            adapter_status=tuple(status.get("adapters") or ()),
            storage=_map(spec.get("storage")),
            model=model,
            resolved_model=_map(status.get("resolvedModel")),
            allow_unoptimized=bool(template.get("allowUnoptimized")),
        )


__all__ = ["ServiceView"]
