"""The objects of the builders' kinds that a service controls: indexed, watched, handed to the plan.

Builders may return objects of several kinds (see :class:`~aim_core.plugin.providers.RuntimeBuilder`).
The service finds its own by the identity label every child carries, and keeps only those whose
controller owner reference is the service itself: an object of the same label that another object
controls (a long name's label shared with another service, a deleted service's leftover) is never
pruned or read as the service's.
"""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.naming import sanitize_label_value
from aim_core.reconcile.obj import controller_uid
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import Store
from aim_core.service.keys import namespace_of
from aim_core.service.observed import Providers

SERVICE_NAME_LABEL = "aim.eai.amd.com/service.name"
CHILD_BY_SERVICE = "svc:child-by-service-label"  # builders' objects by (namespace, identity label value)


def _identity_key(child: dict[str, Any]) -> list[tuple[str | None, str]]:
    label = (child["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL)
    return [(namespace_of(child), label)] if label else []


def index_children(store: Store, providers: Providers) -> None:
    for ref in providers.owned_kinds():
        if not store.has_index(ref, CHILD_BY_SERVICE):
            store.add_index(ref, CHILD_BY_SERVICE, _identity_key)


def child_selections(providers: Providers) -> dict[Any, list[Selection]]:
    """Of the kinds builders add beside their main object (Deployments, Services, ConfigMaps, RBAC),
    only what a service made is watched: every ConfigMap of a cluster is not worth a watch."""
    mains = providers.main_kinds()
    return {ref: [Selection(label_selector=SERVICE_NAME_LABEL)] for ref in providers.owned_kinds() if ref not in mains}


def owned_children(store: Store, providers: Providers, obj: dict[str, Any]) -> dict[Any, tuple[dict[str, Any], ...]]:
    """Per kind a builder declares, the objects service ``obj`` controls."""
    meta = obj["metadata"]
    uid, label = meta.get("uid"), sanitize_label_value(meta["name"])
    if not uid or not label:
        return {}
    found: dict[Any, tuple[dict[str, Any], ...]] = {}
    for ref in providers.owned_kinds():
        mine = tuple(
            child
            for child in store.by_index(ref, CHILD_BY_SERVICE, (meta.get("namespace"), label))
            if controller_uid(child) == uid
        )
        if mine:
            found[ref] = mine
    return found
