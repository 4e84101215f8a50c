"""AIMTemplateCache as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, cached_view, meta_of, spec_of, status_of
from aim_core.templatecache.sources import STORAGE_KEYS

SHARED, DEDICATED = "Shared", "Dedicated"


@attrs.frozen
class CacheView:
    """The fields of an AIMTemplateCache the template-cache code reads.

    :ivar template_scope: ``spec.templateScope``: ``Namespace``, ``Cluster`` or "" (namespace, then cluster).
    :ivar mode: ``spec.mode``, ``Shared`` when unset.
    :ivar artifacts: ``status.artifacts`` as last written, by artifact name.
    :ivar state: ``status.status``, "" before the first reconcile.
    :ivar owner_uids: the uids of ``metadata.ownerReferences`` (a Dedicated cache's service).
    """

    name: str
    namespace: str | None = None
    uid: str = ""
    template_name: str = ""
    template_scope: str = ""
    mode: str = SHARED
    storage_class: str = ""
    env: tuple[Obj, ...] = ()
    runtime_config_name: str | None = None
    download_image: str | None = None
    image_pull_secrets: Any = None
    artifacts: Obj | None = None
    storage: Obj = attrs.field(factory=dict)  #: the storage settings an artifact must share (STORAGE_KEYS)
    labels: Obj = attrs.field(factory=dict)
    created: str = ""  #: ``metadata.creationTimestamp``
    deleting: bool = False
    owner_uids: tuple[str, ...] = ()
    state: str = ""
    conditions: tuple[Obj, ...] = ()

    @property
    def dedicated(self) -> bool:
        return self.mode == DEDICATED

    @classmethod
    @cached_view
    def of(cls, cache: Obj) -> CacheView:
        meta, spec, status = meta_of(cache), spec_of(cache), status_of(cache)
        return cls(
            name=str(meta.get("name") or ""),
            namespace=meta.get("namespace"),
            uid=str(meta.get("uid") or ""),
            template_name=str(spec.get("templateName") or ""),
            template_scope=str(spec.get("templateScope") or ""),
            mode=str(spec.get("mode") or SHARED),
            storage_class=str(spec.get("storageClassName") or ""),
            env=tuple(spec.get("env") or ()),
            runtime_config_name=spec.get("runtimeConfigName"),
            download_image=spec.get("downloadImage"),
            image_pull_secrets=spec.get("imagePullSecrets"),
            artifacts=status.get("artifacts"),
            storage={k: spec[k] for k in STORAGE_KEYS if spec.get(k) is not None},
            labels=meta.get("labels") or {},
            created=str(meta.get("creationTimestamp") or ""),
            deleting=bool(meta.get("deletionTimestamp")),
            owner_uids=tuple(str(r.get("uid")) for r in meta.get("ownerReferences") or () if r.get("uid")),
            state=str(status.get("status") or ""),
            conditions=tuple(status.get("conditions") or ()),
        )


__all__ = ["DEDICATED", "SHARED", "CacheView"]
