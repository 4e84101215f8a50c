"""What a reconcile writes, built purely: the status, its merge patch, and Event bodies.

The engine (:mod:`aim_core.runtime.engine`) decides *whether* to write and sends the
requests; this module says *what* it sends, from values it is given (the
object, the plan, the issues met, the time), so the shapes can be tested
without a server:

* :func:`build_status` is the status a reconcile writes: the plan's fields,
  conditions merged with the old ones, the root ``status.status``.
* :func:`status_patch` is the merge patch that turns the stored status into it,
  removing what the engine owns and the plan no longer sets.
* :func:`event_body` is the ``v1`` Event posted for a condition change (F14).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from typing import Any, Protocol

from aim_core.reconcile import status as statusing
from aim_core.reconcile.conditions import merge_conditions
from aim_core.reconcile.events import EventSpec
from aim_core.reconcile.health import State
from aim_core.reconcile.plan import Issue, Plan


class StatusRules(Protocol):
    """What :func:`build_status` needs of a kind's controller (:class:`aim_core.runtime.controller.Controller`)."""

    @property
    def status_map(self) -> Mapping[State, State]:
        """The kind's names for root states, where they differ."""

    @property
    def root_status(self) -> bool:
        """Whether the kind has a ``status.status`` field."""


__all__ = ["OWNED_STATUS_KEYS", "StatusRules", "build_status", "event_body", "rfc3339", "status_patch"]


@functools.lru_cache(maxsize=16)  # reconciles in the same second share their timestamp
def rfc3339(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def build_status(
    controller: StatusRules,
    obj: dict[str, Any],
    plan: Plan,
    issues: list[Issue],
    *,
    now: datetime.datetime,
    infra_since: datetime.datetime | None = None,
) -> tuple[dict[str, Any], Any]:
    """The status a reconcile writes: plan fields, merged conditions, root state (pure)."""
    meta = obj["metadata"]
    old_conditions = list((obj.get("status") or {}).get("conditions") or [])
    derived = statusing.derive(
        plan.components,
        [(i.category, i.reason, i.message) for i in issues],
        old_conditions,
        infra_since=infra_since,
        now=now,
        status_map=controller.status_map or None,
    )
    conditions = merge_conditions(
        old_conditions,
        [*derived.conditions, *plan.conditions],
        rfc3339(now),
        observed_generation=meta.get("generation"),
    )
    new_status = {**plan.status, "conditions": conditions}
    if controller.root_status:
        new_status["status"] = derived.status.value
    if meta.get("generation") is not None:
        new_status["observedGeneration"] = meta["generation"]
    return new_status, derived


# Status keys the engine owns and may remove; others (e.g. progress written by a
# download pod) are left alone.
OWNED_STATUS_KEYS = frozenset(
    {
        "resolvedModel",
        "resolvedTemplate",
        "resolvedRuntimeConfig",
        "routing",
        "runtime",
        "cache",
        "effectiveSpec",
        "resolvedHardware",
        "benchmarks",
        "benchmarksNote",
        "resolvedNodeAffinity",
        "adapters",
        "adapterSummary",
    }
)


def status_patch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A merge patch turning ``old`` status into ``new``.

    Top-level keys the engine owns are removed (``None``) when the plan no
    longer sets them; keys written by others are left alone. Nested objects
    are diffed recursively so removed sub-keys are removed too.
    """
    patch = _merge_diff(old, new)
    for k in old:
        if k not in new and k in OWNED_STATUS_KEYS:
            patch[k] = None
    return patch


def _merge_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for k, v in new.items():
        before = old.get(k)
        if before == v:
            continue
        if isinstance(v, dict) and isinstance(before, dict) and v:
            sub = _merge_diff(before, v)
            for gone in before:
                if gone not in v:
                    sub[gone] = None
            patch[k] = sub
        else:
            patch[k] = v
    return patch


def event_body(obj: dict[str, Any], spec: EventSpec, component: str, now: datetime.datetime) -> dict[str, Any]:
    """The ``v1`` Event recording ``spec`` on ``obj``, reported by ``component`` (the controller's field manager)."""
    meta = obj["metadata"]
    ts = rfc3339(now)
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta.get("namespace") or "default"},
        "involvedObject": {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": meta["name"],
            "namespace": meta.get("namespace"),
            "uid": meta.get("uid"),
        },
        "type": spec.type,
        "reason": spec.reason,
        "message": spec.message[:1024],
        "source": {"component": component},
        "reportingComponent": component,
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
    }
