"""The operator never adopts, and never deletes, an object it does not control.

Children are applied by derived names with server-side apply, which would take over an object of
that name that someone else made (a user's, another owner's, the child of a deleted and re-created
parent not yet collected) and make it ours, to be re-templated and later deleted. Before each
owned apply the engine looks at what holds the name: only nothing, or an object whose controller
owner reference is the reconciled object, may be applied over; anything else is a ``NameConflict``
reported on the owner. A deletion a plan asks for is skipped when another object controls it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aim_core.reconcile.health import Category
from aim_core.reconcile.obj import controller_uid, meta_of
from aim_core.reconcile.plan import Deletion, Desired, Issue
from aim_core.reconcile.resources import NAMESPACES
from aim_core.runtime.controller import namespace_going
from aim_core.runtime.patches import issue_from

log = logging.getLogger("aim_engine.engine")

NAME_CONFLICT = "NameConflict"
CONFLICT_RECHECK = 30.0  # seconds between looks at a name another object holds


async def look(
    kube: Any, desired: Desired, parent: Mapping[str, Any], live: dict[str, Any] | None, selective: bool
) -> tuple[dict[str, Any] | None, Issue | None]:
    """The live object of ``desired`` and, when it must not be applied over, the issue that says why.

    ``selective``: the store holds only the objects of this resource that carry our labels, so an
    object someone else made under that name is not there; the server is asked (once, before the
    first apply of that child) instead.
    """
    if desired.owned and live is None and selective and meta_of(parent).get("uid"):
        meta = desired.obj.get("metadata") or {}
        try:
            live = await kube.get(desired.resource, meta.get("namespace"), meta["name"])
        except Exception as exc:  # noqa: BLE001 - reported as a condition
            return None, issue_from(exc, f"reading {desired.resource.kind} {meta['name']}")
    why = conflict(desired, parent, live)
    return live, None if why is None else Issue(Category.INVALID_SPEC, NAME_CONFLICT, why)


def conflict(desired: Desired, parent: Mapping[str, Any], live: Mapping[str, Any] | None) -> str | None:
    """Why ``desired`` must not be applied over ``live``, or ``None``: the operator never adopts an object.

    An owned child goes only where nothing is, or where ``parent`` already controls the object of
    that name. Anything else (a user's object, another owner's, a deleted and re-created parent's
    old child not yet collected) is a name conflict reported on ``parent``; server-side apply
    would otherwise take it over (and a later plan could delete it).
    """
    uid = (parent.get("metadata") or {}).get("uid")
    if not desired.owned or live is None or not uid:
        return None
    holder = controller_uid(live)
    if holder == uid:
        return None
    meta = desired.obj.get("metadata") or {}
    where = f"{meta.get('namespace')}/{meta['name']}" if meta.get("namespace") else meta["name"]
    parent_kind = parent.get("kind") or "object"
    if holder is None:
        who = "was not created by the operator for this " + parent_kind
    else:
        owner = next(
            (r for r in (live.get("metadata") or {}).get("ownerReferences") or () if r.get("uid") == holder), {}
        )
        same = owner.get("kind") == parent_kind and owner.get("name") == (parent.get("metadata") or {}).get("name")
        who = (
            f"still belongs to an earlier {parent_kind} of this name (uid {holder}) and goes when that one is "
            "garbage-collected"
            if same
            else f"is controlled by {owner.get('kind', 'another object')} {owner.get('name', holder)}"
        )
    return (
        f"{desired.resource.kind} {where} already exists and {who}; the operator does not take it over. "
        f"Rename or delete that {desired.resource.kind}, or rename this {parent_kind}"
    )


def may_delete(live: Mapping[str, Any], parent: Mapping[str, Any], deletion: Deletion | None = None) -> bool:
    """Whether a plan of ``parent`` may delete ``live``: never an object another object controls."""
    holder = controller_uid(live)
    uid = meta_of(parent).get("uid")
    if holder is None or not uid or holder == uid:
        return True
    if deletion is not None:
        log.info(
            "%s %s: not deleting %s %s, which another object controls",
            parent.get("kind"),
            meta_of(parent).get("name"),
            deletion.resource.kind,
            deletion.name,
        )
    return False


def requeue(requeue_after: float | None, issues: list[Issue]) -> float | None:
    """When to reconcile again: soon after a name conflict, whose blocker's deletion triggers nothing
    (it carries none of our labels)."""
    if any(i.reason == NAME_CONFLICT for i in issues):
        return min(requeue_after or CONFLICT_RECHECK, CONFLICT_RECHECK)
    return requeue_after


async def gone(kube: Any, meta: Mapping[str, Any], refused: dict[str, str | None]) -> bool:
    """Whether the namespace of a child we applied before and that has since vanished is being deleted.

    Watch streams of different kinds arrive in no common order: the deletion of a namespace's content
    can reach the store before the namespace's own Terminating, and re-creating what vanished would
    be a create the server refuses. Asked of the server once per such re-create (rare: a child
    someone deleted); a namespace going is remembered in ``refused`` as a refused create would be.
    """
    namespace = meta.get("namespace")
    if not namespace:
        return False
    try:
        ns = await kube.get(NAMESPACES, None, namespace)
    except Exception:  # noqa: BLE001 - unknown: the apply goes ahead and its own answer decides
        return False
    if ns is not None and not namespace_going(ns):
        return False
    refused[namespace] = meta_of(ns).get("uid") if ns is not None else None
    log.info("namespace %s is being deleted; nothing more is created there", namespace)
    return True
