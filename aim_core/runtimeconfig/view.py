"""Runtime configs as their code reads them: typed, read-only views with the defaults applied.

:class:`RuntimeConfigView` is one AIMRuntimeConfig or AIMClusterRuntimeConfig object;
:class:`ConfigView` is the effective config a kind resolved (:attr:`Resolution.view
<aim_core.runtimeconfig.Resolution.view>`: the cluster config and the namespace's merged and
normalised), with the settings other kinds read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, meta_of, spec_of
from aim_core.reconcile.plan import LabelPolicy


@attrs.frozen
class RuntimeConfigView:
    """The fields of an AIMRuntimeConfig or AIMClusterRuntimeConfig the runtime-config code reads.

    :ivar spec: ``spec`` as written (merged field by field by ``resolution.merge_specs``).
    :ivar env: ``spec.env``.
    :ivar label_match: ``spec.labelPropagation.match``, the label globs to check.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    spec: Obj = attrs.field(factory=dict)
    env: tuple[Any, ...] = ()
    label_match: tuple[Any, ...] = ()

    @classmethod
    def of(cls, config: Obj) -> RuntimeConfigView:
        meta, spec = meta_of(config), spec_of(config)
        propagation = spec.get("labelPropagation") or {}
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            spec=spec,
            env=tuple(spec.get("env") or ()),
            label_match=tuple(propagation.get("match") or ()) if isinstance(propagation, Mapping) else (),
        )


@attrs.frozen
class ConfigView:
    """The effective runtime config as the kinds read it; every field has its default when the config is empty.

    :ivar env: ``env``, the variables every workload of the config gets.
    :ivar labels: ``labelPropagation``: off, no patterns when unset.
    :ivar default_storage_class: ``storage.defaultStorageClassName``, "" when unset.
    :ivar download_filter: ``storage.downloadFilter`` as written (checked by the artifact code).
    :ivar default_retention_priority: ``artifact.defaultRetentionPriority``; ``None`` when unset or not an integer.
    :ivar unused_adapter_retention: ``artifact.unusedAdapterRetention`` as written; ``None`` when unset.
    """

    env: tuple[Obj, ...] = ()
    labels: LabelPolicy = LabelPolicy()
    default_storage_class: str = ""
    download_filter: Any = None
    default_retention_priority: int | None = None
    unused_adapter_retention: Any = None

    @classmethod
    def of(cls, spec: Obj) -> ConfigView:
        artifact = spec.get("artifact") or {}
        retention = artifact.get("defaultRetentionPriority")
        propagation = spec.get("labelPropagation") or {}
        storage = spec.get("storage") or {}
        return cls(
            env=tuple(spec.get("env") or ()),
            labels=LabelPolicy(bool(propagation.get("enabled")), tuple(propagation.get("match") or ())),
            default_storage_class=str(storage.get("defaultStorageClassName") or ""),
            download_filter=storage.get("downloadFilter"),
            default_retention_priority=retention
            if isinstance(retention, int) and not isinstance(retention, bool)
            else None,
            unused_adapter_retention=artifact.get("unusedAdapterRetention"),
        )


__all__ = ["ConfigView", "RuntimeConfigView"]
