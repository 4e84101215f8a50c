"""The value a planner returns: what to apply, delete and report.

Planners are pure functions ``plan(obj, observed) -> Plan``. The engine
(:mod:`aim_core.runtime.engine`) carries a plan out: server-side apply of
``apply`` in a fixed order with owner references and identity labels set in
one place, deletions, then the status derived from ``components`` and
``issues``.
"""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.reconcile.conditions import ConditionLike
from aim_core.reconcile.health import Category, Health
from aim_core.reconcile.resources import ResourceRef


@attrs.frozen
class Desired:
    """An object the plan wants on the server.

    ``owned`` objects get a controller owner reference to the reconciled
    object (garbage-collected with it); unowned ones outlive it.
    ``anticipated``: the plan already reports this object as the next
    reconcile will read it back once created (no status yet), so storing the
    server's answer need not reconcile the object that applied it again.
    ``create_only``: the object is created (a POST) and never written again; an
    object that exists under that name, seen or not yet seen, is someone else's
    and is left as it is, never taken over by a forced apply.
    """

    resource: ResourceRef
    obj: dict[str, Any]
    owned: bool = True
    anticipated: bool = False
    create_only: bool = False

    @property
    def sort_key(self) -> tuple[str, str, str, str]:
        meta = self.obj["metadata"]
        return (self.resource.api_version, self.resource.kind, meta.get("namespace") or "", meta["name"])


@attrs.frozen
class Deletion:
    """An object the plan wants gone."""

    resource: ResourceRef
    namespace: str | None
    name: str


@attrs.frozen
class Issue:
    """A reconcile-level error: invalid spec, missing reference, auth or infrastructure trouble."""

    category: Category
    reason: str
    message: str

    @classmethod
    def blocking(cls, health: Health) -> Issue | None:
        """The issue a component's health raises when its category stops all writes (F10), else ``None``."""
        if health.category is not None and health.category.blocks_apply:
            return cls(health.category, health.reason, health.message)
        return None


@attrs.frozen
class LabelPolicy:
    """Which parent labels propagate to children (F81)."""

    enabled: bool = False
    patterns: tuple[str, ...] = ()


@attrs.define
class Plan:
    """Everything one reconcile decided."""

    components: dict[str, Health] = attrs.field(factory=dict)
    issues: list[Issue] = attrs.field(factory=list)
    apply: list[Desired] = attrs.field(factory=list)
    delete: list[Deletion] = attrs.field(factory=list)
    status: dict[str, Any] = attrs.field(factory=dict)  # kind-specific status fields, wire names
    conditions: list[ConditionLike] = attrs.field(factory=list)  # extra non-component conditions
    labels: LabelPolicy = attrs.field(factory=LabelPolicy)
    requeue_after: float | None = None
    finalizer: bool = False  # this plan creates something the finalizer must clean up (see has_cleanup_duties)
    storage: int = 0  # bytes of quota-limited storage this plan counts on: a PVC it creates or makes room for
    notes: list[str] = attrs.field(factory=list)  # why things were decided; shown by `aim-engine render --explain`

    def component(self, name: str, health: Health, *, blocking: bool = False) -> None:
        """Report component ``name``; with ``blocking``, an error health that stops writes is also an issue."""
        self.components[name] = health
        issue = Issue.blocking(health) if blocking else None
        if issue is not None:
            self.issues.append(issue)

    def issue(self, category: Category, reason: str, message: str) -> None:
        self.issues.append(Issue(category, reason, message))

    def want(
        self,
        resource: ResourceRef,
        obj: dict[str, Any],
        *,
        owned: bool = True,
        anticipated: bool = False,
        create_only: bool = False,
    ) -> None:
        self.apply.append(Desired(resource, obj, owned, anticipated, create_only))

    def requeue(self, seconds: float) -> None:
        self.requeue_after = seconds if self.requeue_after is None else min(self.requeue_after, seconds)
