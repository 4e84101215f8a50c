"""AIMModel and AIMClusterModel as their code reads them: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, cached_view, meta_of, spec_of, status_of


def _switch(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _pull_secret_names(refs: Any) -> tuple[str, ...]:
    names: list[str] = []
    for ref in refs or ():
        name = ((ref or {}).get("name") or "").strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)


@attrs.frozen
class ModelView:
    """The fields of an AIMModel or AIMClusterModel the model code reads.

    :ivar namespace: "" for an AIMClusterModel.
    :ivar image: ``spec.image``, stripped.
    :ivar model_sources: ``spec.modelSources``: set for a custom model.
    :ivar custom: ``spec.custom`` (base hardware and type of custom templates).
    :ivar extract_metadata: ``spec.discovery.extractMetadata``; ``None`` when unset.
    :ivar create_templates: ``spec.discovery.createServiceTemplates``; ``None`` when unset.
    :ivar image_metadata: ``spec.imageMetadata``; ``None`` when unset.
    :ivar pull_secret_names: names in ``spec.imagePullSecrets``: blanks dropped, order kept, no repeats.
    :ivar spec: ``spec`` as written, for the checks of :mod:`aim_core.model.validation` and the fields
        a template copies.
    :ivar status_image_metadata: ``status.imageMetadata`` as last written.
    :ivar resolved_image: ``status.resolvedImage`` as last written.
    :ivar resources: ``spec.resources`` as written; ``None`` when unset.
    :ivar service_account_name: ``spec.serviceAccountName``, stripped.
    :ivar state: ``status.status``, "" before the first reconcile.
    :ivar default_template: ``spec.defaultServiceTemplate``, stripped.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    image: str = ""
    model_sources: tuple[Any, ...] = ()
    custom: Obj = attrs.field(factory=dict)
    env: tuple[Obj, ...] = ()
    custom_templates: tuple[Any, ...] = ()
    extract_metadata: bool | None = None
    create_templates: bool | None = None
    image_metadata: Any = None
    pull_secret_names: tuple[str, ...] = ()
    spec: Obj = attrs.field(factory=dict)
    status_image_metadata: Any = None
    resolved_image: Obj | None = None
    resources: Any = None
    service_account_name: str = ""
    state: str = ""
    default_template: str = ""

    @classmethod
    @cached_view
    def of(cls, model: Obj | ModelView) -> ModelView:
        """The view of ``model`` (a view is returned as it is)."""
        if isinstance(model, ModelView):
            return model
        meta, spec, status = meta_of(model), spec_of(model), status_of(model)
        discovery = spec.get("discovery") or {}
        resolved = status.get("resolvedImage")
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            image=str(spec.get("image") or "").strip(),
            model_sources=tuple(spec.get("modelSources") or ()),
            custom=spec.get("custom") or {},
            env=tuple(spec.get("env") or ()),
            custom_templates=tuple(spec.get("customTemplates") or ()),
            extract_metadata=_switch(discovery.get("extractMetadata")),
            create_templates=_switch(discovery.get("createServiceTemplates")),
            image_metadata=spec.get("imageMetadata"),
            pull_secret_names=_pull_secret_names(spec.get("imagePullSecrets")),
            spec=spec,
            status_image_metadata=status.get("imageMetadata"),
            resolved_image=resolved if isinstance(resolved, Mapping) else None,
            resources=spec.get("resources"),
            service_account_name=str(spec.get("serviceAccountName") or "").strip(),
            state=str(status.get("status") or ""),
            default_template=str(spec.get("defaultServiceTemplate") or "").strip(),
        )


__all__ = ["ModelView"]
