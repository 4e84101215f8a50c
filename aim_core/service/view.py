"""AIMService as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of


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

    @classmethod
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
        )


__all__ = ["ServiceView"]
