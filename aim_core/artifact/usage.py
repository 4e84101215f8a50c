"""What an artifact's quota decision reads from the store: which artifacts are in use, their
retention priority, and the storage every other artifact holds (F76)."""

from __future__ import annotations

from aim_core.artifact.keys import (
    CACHE_BY_ARTIFACT,
    POD_BY_CLAIM,
    SVC_BY_ADAPTER,
    SVC_BY_CACHE,
    _allocated,
    _deleting,
    _ns,
    _running,
)
from aim_core.artifact.observed import Candidate, Usage
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_RUNTIME_CONFIGS,
    PODS,
    RUNTIME_CONFIGS,
    SERVICES,
    TEMPLATE_CACHES,
)
from aim_core.runtime.store import Store
from aim_core.runtimeconfig import config_name, resolve

_TEMPLATE_KINDS = ("AIMServiceTemplate", "AIMClusterServiceTemplate")


def in_use(store: Store, artifact: Obj) -> tuple[bool, tuple[str, ...]]:
    """Whether ``artifact`` is in use, and the idle template caches listing it.

    In use: a running pod other than its own Jobs' mounts its PVC (an
    inference pod keeps its volumes even after its cache went, Q16), or a
    live service (or a template) uses a template cache that lists it, or a
    live service lists it in ``status.adapters`` (a LoRA adapter's weights).
    """
    ns, name = _ns(artifact), artifact["metadata"]["name"]
    claim = status_of(artifact).get("persistentVolumeClaim")
    used = bool(claim) and any(_running(p) for p in store.by_index(PODS, POD_BY_CLAIM, (ns, claim)))
    used = used or any(not _deleting(s) for s in store.by_index(SERVICES, SVC_BY_ADAPTER, (ns, name)))
    idle: list[str] = []
    for cache in store.by_index(TEMPLATE_CACHES, CACHE_BY_ARTIFACT, (ns, name)):
        if _deleting(cache):
            continue
        owners = meta_of(cache).get("ownerReferences") or ()
        users = [
            s
            for key in ((ns, cache["metadata"]["name"]), (ns, spec_of(cache).get("templateName") or ""))
            for s in store.by_index(SERVICES, SVC_BY_CACHE, key)
            if not _deleting(s)
        ]
        if users or any(o.get("kind") in _TEMPLATE_KINDS for o in owners):
            used = True
        else:
            idle.append(cache["metadata"]["name"])
    return used, tuple(sorted(idle))


def retention(store: Store, artifact: Obj) -> int | None:
    own = spec_of(artifact).get("retentionPriority")
    if isinstance(own, int) and not isinstance(own, bool):
        return own
    name = config_name(artifact.get("spec"))
    config = resolve(
        name, store.get(RUNTIME_CONFIGS, _ns(artifact), name), store.get(CLUSTER_RUNTIME_CONFIGS, None, name)
    )
    return config.view.default_retention_priority


def usage(store: Store, artifact: Obj) -> Usage:
    ns, me = _ns(artifact), artifact["metadata"].get("uid") or artifact["metadata"]["name"]
    cluster = namespace = 0
    candidates = []
    for other in store.list(ARTIFACTS):
        meta = other["metadata"]
        if (meta.get("uid") or meta["name"]) == me or _deleting(other):
            continue
        allocated = _allocated(other)
        if not allocated:
            continue
        cluster += allocated
        if _ns(other) == ns:
            namespace += allocated
        status = status_of(other)
        used, idle = in_use(store, other)
        candidates.append(
            Candidate(
                namespace=_ns(other),
                name=meta["name"],
                allocated_bytes=allocated,
                ready=status.get("status") == "Ready",
                in_use=used,
                retention_priority=retention(store, other),
                last_used=status.get("lastUsed") or meta.get("creationTimestamp") or "",
                caches=idle,
            )
        )
    return Usage(cluster, namespace, tuple(candidates))
