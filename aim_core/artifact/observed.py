"""What one artifact reconcile reads (gathered by the controller's observe step)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from aim_core.reconcile.errors import ErrorInfo
from aim_core.reconcile.obj import Obj
from aim_core.runtimeconfig import Resolution


@attrs.frozen
class Candidate:
    """Another artifact that holds storage, as the quota and eviction rules see it."""

    namespace: str
    name: str
    allocated_bytes: int
    ready: bool
    in_use: bool
    retention_priority: int | None  # effective: spec, else its runtime config's default; None = never evicted
    last_used: str  # RFC 3339; creation time when never used
    caches: tuple[str, ...] = ()  # unused template caches listing it, deleted with it on eviction


@attrs.frozen
class Quota:
    """``artifactStorageQuota`` in bytes (None: no limit), and where each came from."""

    cluster_limit: int | None = None
    namespace_limit: int | None = None
    source: str = ""
    problems: tuple[str, ...] = ()  # unparsable limits, reported on the artifact


@attrs.frozen
class Usage:
    """Storage held by other artifacts, and the idle ones that may be evicted."""

    cluster_bytes: int = 0
    namespace_bytes: int = 0
    candidates: tuple[Candidate, ...] = ()


@attrs.frozen
class Observed:
    config: Resolution
    default_image: str
    now: str  # RFC 3339, for status.lastUsed
    check_size_job: Obj | None = None
    download_job: Obj | None = None
    pvc: Obj | None = None
    role_binding: Obj | None = None
    pods: tuple[Obj, ...] = ()  # pods of the artifact's Jobs
    events: tuple[Obj, ...] = ()
    logs: Mapping[str, str] = attrs.field(factory=dict)  # pod name -> log tail
    read_errors: tuple[ErrorInfo, ...] = ()
    in_use: bool = False  # a live service uses a template cache listing this artifact
    quota: Quota = attrs.field(factory=Quota)
    usage: Usage = attrs.field(factory=Usage)
