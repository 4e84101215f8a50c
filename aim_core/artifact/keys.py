"""Index keys and small readings of the objects the artifact controller watches, and the quota it enforces. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aim_core.artifact.observed import Quota
from aim_core.artifact.quantities import QuantityError, parse_bytes
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of

_WAITING_REASONS = ("StorageQuotaExceeded", "EvictingArtifacts")

CACHE_BY_ARTIFACT = "artifact:cache-by-artifact"  # template caches by (namespace, artifact in status.artifacts)
SVC_BY_CACHE = "artifact:svc-by-cache"  # services by (namespace, cache or template name they use)
POD_BY_CLAIM = "artifact:pod-by-claim"  # pods (not our own) by (namespace, claim they mount)
SVC_BY_ADAPTER = "artifact:svc-by-adapter"  # services by (namespace, artifact in status.adapters)


def namespace_of(obj: Obj) -> str:
    return meta_of(obj).get("namespace") or ""


def cache_label_keys(obj: Obj) -> list[tuple[str, str]]:
    value = (meta_of(obj).get("labels") or {}).get(lbl.CACHE_NAME_LABEL)
    return [(namespace_of(obj), value)] if value else []


def waiting_for_storage(artifact: Obj) -> bool:
    return any(
        c.get("type") == "CachePvcReady" and c.get("reason") in _WAITING_REASONS
        for c in status_of(artifact).get("conditions") or ()
    )


def is_deleting(obj: Obj) -> bool:
    return bool(meta_of(obj).get("deletionTimestamp"))


def service_uses(svc: Obj) -> list[tuple[str, str]]:
    """``(namespace, name)`` of the caches (by name) and templates (by name) a service uses."""
    ns, spec, status = namespace_of(svc), spec_of(svc), status_of(svc)
    names = {
        ((status.get("cache") or {}).get("templateCacheRef") or {}).get("name"),
        (spec.get("template") or {}).get("name"),
        (status.get("resolvedTemplate") or {}).get("name"),
    }
    return [(ns, n) for n in names if n]


def pvc_claims(pod: Obj) -> list[tuple[str, str]]:
    """``(namespace, claim)`` for each PVC a pod mounts; none for our own Job pods."""
    labels = meta_of(pod).get("labels") or {}
    if lbl.CACHE_NAME_LABEL in labels:
        return []
    volumes = spec_of(pod).get("volumes") or ()
    return [
        (namespace_of(pod), v["persistentVolumeClaim"]["claimName"])
        for v in volumes
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    ]


def is_running(pod: Obj) -> bool:
    return not is_deleting(pod) and status_of(pod).get("phase") not in ("Succeeded", "Failed")


def download_finished(artifact: Obj) -> bool:
    return ((status_of(artifact).get("progress") or {}).get("percentage")) == 100


def storage_fields(artifact: Obj) -> tuple[Any, ...]:
    status = status_of(artifact)
    return (is_deleting(artifact), status.get("allocatedSize"), status.get("status"))


def parse_quota(configs: Iterable[Obj]) -> Quota:
    """The strictest ``artifactStorageQuota`` over every AIMClusterRuntimeConfig that sets one."""
    cluster: tuple[int, str] | None = None
    namespace: tuple[int, str] | None = None
    problems = []
    for config in sorted(configs, key=lambda c: c["metadata"]["name"]):
        quota = spec_of(config).get("artifactStorageQuota") or {}
        where = f"AIMClusterRuntimeConfig {config['metadata']['name']}"
        for key in ("clusterLimit", "defaultNamespaceLimit"):
            if quota.get(key) in (None, ""):
                continue
            try:
                limit = parse_bytes(quota[key])
            except QuantityError as exc:
                problems.append(f"{where} artifactStorageQuota.{key}: {exc}")
                continue
            if key == "clusterLimit" and (cluster is None or limit < cluster[0]):
                cluster = (limit, where)
            if key == "defaultNamespaceLimit" and (namespace is None or limit < namespace[0]):
                namespace = (limit, where)
    sources = sorted({s for s in (cluster and cluster[1], namespace and namespace[1]) if s})
    return Quota(cluster and cluster[0], namespace and namespace[0], ", ".join(sources), tuple(problems))


def allocated_of(artifact: Obj) -> int:
    value = status_of(artifact).get("allocatedSize")
    if value in (None, ""):
        return 0
    try:
        return parse_bytes(value)
    except QuantityError:
        return 0
