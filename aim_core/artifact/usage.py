"""What an artifact's quota decision reads from the store: which artifacts are in use, their
retention priority, and the storage every other artifact holds (F76)."""

from __future__ import annotations

from aim_core.artifact.keys import (
    CACHE_BY_ARTIFACT,
    POD_BY_CLAIM,
    SVC_BY_ADAPTER,
    SVC_BY_CACHE,
    allocated_of,
    is_deleting,
    is_running,
)
from aim_core.artifact.observed import Candidate, Usage
from aim_core.artifact.view import ArtifactView
from aim_core.reconcile.obj import Obj, meta_of, spec_of
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
    art = ArtifactView.of(artifact)
    ns, name, claim = art.namespace, art.name, art.persistent_volume_claim
    used = bool(claim) and any(is_running(p) for p in store.by_index(PODS, POD_BY_CLAIM, (ns, claim)))
    used = used or any(not is_deleting(s) for s in store.by_index(SERVICES, SVC_BY_ADAPTER, (ns, name)))
    idle: list[str] = []
    for cache in store.by_index(TEMPLATE_CACHES, CACHE_BY_ARTIFACT, (ns, name)):
        if is_deleting(cache):
            continue
        owners = meta_of(cache).get("ownerReferences") or ()
        users = [
            s
            for key in ((ns, cache["metadata"]["name"]), (ns, spec_of(cache).get("templateName") or ""))
            for s in store.by_index(SERVICES, SVC_BY_CACHE, key)
            if not is_deleting(s)
        ]
        if users or any(o.get("kind") in _TEMPLATE_KINDS for o in owners):
            used = True
        else:
            idle.append(cache["metadata"]["name"])
    return used, tuple(sorted(idle))


def retention(store: Store, artifact: Obj) -> int | None:
    art = ArtifactView.of(artifact)
    if art.retention_priority is not None:
        return art.retention_priority
    name = config_name(art.spec)
    config = resolve(
        name, store.get(RUNTIME_CONFIGS, art.namespace, name), store.get(CLUSTER_RUNTIME_CONFIGS, None, name)
    )
    return config.view.default_retention_priority


def usage(store: Store, artifact: Obj) -> Usage:
    art = ArtifactView.of(artifact)
    ns, me = art.namespace, art.uid or art.name
    cluster = namespace = 0
    candidates = []
    for other in store.list(ARTIFACTS):
        view = ArtifactView.of(other)
        if (view.uid or view.name) == me or view.deleting:
            continue
        allocated = allocated_of(other)
        if not allocated:
            continue
        cluster += allocated
        if view.namespace == ns:
            namespace += allocated
        used, idle = in_use(store, other)
        candidates.append(
            Candidate(
                namespace=view.namespace,
                name=view.name,
                allocated_bytes=allocated,
                ready=view.state == "Ready",
                in_use=used,
                retention_priority=retention(store, other),
                last_used=view.last_used or view.creation_timestamp,
                caches=idle,
            )
        )
    return Usage(cluster, namespace, tuple(candidates))
