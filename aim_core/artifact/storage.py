"""The PVC of an artifact in its plan: sized with headroom, within the storage quota, evicting idle artifacts first when it must. Pure."""

from __future__ import annotations

from aim_core.artifact import children
from aim_core.artifact.observed import Observed
from aim_core.artifact.quantities import GIB
from aim_core.artifact.quota import decide
from aim_core.artifact.view import ArtifactView
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.naming import (
    sanitize_label_value,
)
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.quantities import canonical
from aim_core.reconcile.resources import ARTIFACTS, PVCS, TEMPLATE_CACHES

EVICTION_REQUEUE = 5.0
QUOTA_REQUEUE = 60.0


def artifact_label(name: str) -> str:
    """The ``cache.name`` label value of an artifact (names over 63 characters are cut)."""
    return sanitize_label_value(name) or "artifact"


def plan_pvc(
    plan: Plan, art: ArtifactView, ob: Observed, pvc_name: str, size: int, gib: int, headroom: int, done_before: bool
) -> bool:
    """Plan the PVC if the quota allows (evicting idle artifacts first when needed); whether it was planned."""
    name, ns = art.name, art.namespace
    if ob.quota.problems:
        plan.component(
            "CachePvc", Health.error(Category.INVALID_SPEC, "InvalidStorageQuota", "; ".join(ob.quota.problems))
        )
        return False
    decision = decide(gib * GIB, ns, ob.quota, ob.usage)
    if decision.victims or decision.fits:
        plan.storage = gib * GIB  # held for this artifact until its status says so (issue 18)
    if decision.victims:
        for victim in decision.victims:
            plan.delete.append(Deletion(ARTIFACTS, victim.namespace, victim.name))
            plan.delete.extend(Deletion(TEMPLATE_CACHES, victim.namespace, c) for c in victim.caches)
        plan.component("CachePvc", Health(State.PENDING, "EvictingArtifacts", decision.message))
        plan.requeue(EVICTION_REQUEUE)
        return False
    if not decision.fits:
        plan.component(
            "CachePvc",
            Health.error(
                Category.RESOURCE_EXHAUSTION,
                "StorageQuotaExceeded",
                f"no PVC of {gib}Gi for this artifact: {decision.message}",
                state=State.PENDING,
            ),
        )
        plan.requeue(QUOTA_REQUEUE)
        return False
    storage_class = art.storage_class or ob.config.view.default_storage_class
    plan.want(
        PVCS,
        children.pvc(
            name=pvc_name,
            artifact=artifact_label(name),
            namespace=ns,
            source_uri=art.source_uri,
            gib=gib,
            storage_class=storage_class,
            template_created=art.template_created,
        ),
    )
    why = "the volume was deleted; creating it again" if done_before else f"creating PVC {pvc_name}"
    plan.component("CachePvc", Health.progressing("ResourceNotReady", why))
    plan.status.update(
        {"persistentVolumeClaim": pvc_name, "allocatedSize": canonical(f"{gib}Gi"), "headroomPercent": headroom}
    )
    return True
