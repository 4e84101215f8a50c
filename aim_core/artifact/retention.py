"""Unused LoRA adapter artifacts go after a while (pure).

A service downloads each adapter's weights through an AIMArtifact; when it finds none for the
adapter's source it creates one (labelled ``aim.eai.amd.com/adapter``, no owner, so a second
service can share it and a re-created service finds it). Without a bound those artifacts and their
volumes would stay for ever once the services are gone, unless a storage quota with a retention
priority evicts them. So an artifact the operator created for an adapter is deleted (its volume
with it) once no service has used it for the runtime config's ``artifact.unusedAdapterRetention``
(default 168h, a week; ``Never`` keeps it). Never deleted this way: an artifact in use (a service
lists it in ``status.adapters``, a running pod mounts its volume), one a user created (the label is
not enough: the service controller's own apply must have made it), one with an owner.
"""

from __future__ import annotations

import datetime

from aim_core.artifact.observed import Observed
from aim_core.artifact.view import ArtifactView
from aim_core.reconcile.health import Health
from aim_core.reconcile.obj import Obj, meta_of
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.resources import ARTIFACTS
from aim_core.runtimeconfig import unused_adapter_retention
from aim_core.service import ADAPTER_LABEL, FIELD_MANAGER

RETENTION = "Retention"


def parse_time(value: str | None) -> datetime.datetime | None:
    """A timestamp as the API server writes it (``2025-01-31T12:00:00Z``); None if unset or not in that form."""
    if not value:
        return None
    try:
        return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return None


def created_for_adapters(artifact: Obj) -> bool:
    """Whether the operator created ``artifact`` for a service's adapter (and nobody owns it)."""
    meta = meta_of(artifact)
    if (meta.get("labels") or {}).get(ADAPTER_LABEL) != "true" or meta.get("ownerReferences"):
        return False
    return any(
        entry.get("manager") == FIELD_MANAGER and entry.get("operation") == "Apply"
        for entry in meta.get("managedFields") or ()
    )


def plan_retention(plan: Plan, artifact: Obj, ob: Observed) -> bool:
    """Delete an unused adapter artifact whose retention ran out; whether it goes.

    While it waits, the plan looks at it again when the retention ends.
    """
    if ob.in_use or not created_for_adapters(artifact):
        return False
    art = ArtifactView.of(artifact)
    if art.deleting:
        return False
    try:
        keep = unused_adapter_retention(ob.config.view.unused_adapter_retention)
    except ValueError:
        return False  # reported on the runtime config and on this artifact (its RuntimeConfig component)
    if keep is None:
        return False
    since, now = parse_time(art.last_used) or parse_time(art.creation_timestamp), parse_time(ob.now)
    if since is None or now is None:
        return False
    idle = (now - since).total_seconds()
    if idle < keep:
        plan.requeue(max(keep - idle, 1.0))
        return False
    why = (
        f"no service has used this adapter artifact since {since:%Y-%m-%dT%H:%M:%SZ}, longer than the runtime "
        f"config's artifact.unusedAdapterRetention ({keep:g} s): deleted with its volume"
    )
    plan.delete.append(Deletion(ARTIFACTS, art.namespace, art.name))
    plan.component(RETENTION, Health.progressing("RetentionExpired", why))
    plan.notes.append(why)
    return True
