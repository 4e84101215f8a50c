"""AIMArtifact as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.reconcile import labels as lbl
from aim_core.reconcile.obj import Obj, cached_view, meta_of, spec_of, status_of


@attrs.frozen
class ArtifactView:
    """The fields of an AIMArtifact the artifact code reads.

    :ivar dedicated: the artifact has an owner (a Dedicated template cache's), so ``status.mode`` is Dedicated.
    :ivar template_created: labelled ``template-created=true`` (a template cache made it).
    :ivar pvc_headroom_percent: ``spec.pvcHeadroomPercent``; ``None`` takes the runtime config's.
    :ivar retention_priority: ``spec.retentionPriority`` when it is an integer, else ``None``.
    :ivar spec: ``spec`` as written, for the checks of :mod:`aim_core.artifact.validation`.
    :ivar status: ``status`` as last written, for the download progress of :mod:`aim_core.artifact.progress`.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    creation_timestamp: str = ""
    deleting: bool = False
    dedicated: bool = False
    template_created: bool = False
    runtime_config_name: Any = None
    source_uri: str = ""
    env: tuple[Obj, ...] = ()
    image_pull_secrets: Any = None
    storage_class: str = ""
    pvc_headroom_percent: Any = None
    retention_priority: int | None = None
    spec: Obj = attrs.field(factory=dict)
    status: Obj = attrs.field(factory=dict)
    state: str = ""  #: ``status.status``
    last_used: str = ""
    allocated_size: Any = None
    headroom_percent: Any = None  #: ``status.headroomPercent``: the headroom the volume was made with
    persistent_volume_claim: str = ""
    conditions: tuple[Obj, ...] = ()

    def condition(self, type_: str) -> Obj | None:
        """The status condition of that type, if any."""
        return next((c for c in self.conditions if c.get("type") == type_), None)

    @classmethod
    @cached_view
    def of(cls, artifact: Obj) -> ArtifactView:
        meta, spec, status = meta_of(artifact), spec_of(artifact), status_of(artifact)
        retention = spec.get("retentionPriority")
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            creation_timestamp=str(meta.get("creationTimestamp") or ""),
            deleting=bool(meta.get("deletionTimestamp")),
            dedicated=bool(meta.get("ownerReferences")),
            template_created=(meta.get("labels") or {}).get(lbl.TEMPLATE_CREATED_LABEL) == "true",
            runtime_config_name=spec.get("runtimeConfigName"),
            source_uri=str(spec.get("sourceUri") or ""),
            env=tuple(spec.get("env") or ()),
            image_pull_secrets=spec.get("imagePullSecrets"),
            storage_class=str(spec.get("storageClassName") or ""),
            pvc_headroom_percent=spec.get("pvcHeadroomPercent"),
            retention_priority=retention if isinstance(retention, int) and not isinstance(retention, bool) else None,
            spec=spec,
            status=status,
            state=str(status.get("status") or ""),
            last_used=str(status.get("lastUsed") or ""),
            allocated_size=status.get("allocatedSize"),
            headroom_percent=status.get("headroomPercent"),
            persistent_volume_claim=str(status.get("persistentVolumeClaim") or ""),
            conditions=tuple(status.get("conditions") or ()),
        )


__all__ = ["ArtifactView"]
