"""Derive conditions and ``status.status`` from component health and errors (F10, F11).

Pure: the caller passes the components it observed (in a meaningful order: the
first failing one explains ``Ready``), the errors it met, the previous
conditions and the current time. The result is a :class:`Derived` value whose
conditions go through :func:`aim_core.reconcile.conditions.merge_conditions`.

Rules, in the order they are applied:

1. Every component ``X`` yields ``XReady``: True only when its health is ready;
   reason = health reason or ``Ready``.
2. A not-ready component keeps its state if it is Failed, Degraded,
   NotAvailable or Pending; otherwise it counts as Pending when it is an upstream
   dependency and Progressing when it is a child.
3. Errors (explicit ones plus every component health carrying a category) feed
   the framework conditions: Infrastructure/Unknown → ``DependenciesReachable``
   False ``InfrastructureError``; Auth → ``AuthValid`` False ``AuthError``;
   InvalidSpec → ``ConfigValid`` False ``InvalidSpec`` (wins over)
   MissingUpstream → ``ReferenceNotFound``. Once present they flip back to True.
4. Grace (Q26): while ``DependenciesReachable`` has been False for less than
   ``grace``, a component whose own health failed for a transient reason keeps
   its previous condition, and the root is not forced to Degraded.
5. Root = worst component state. Auth/InvalidSpec/MissingUpstream errors force
   Failed. Transient errors after the grace make a not-ready root at least
   Degraded (an already worse Failed/NotAvailable stays).
6. ``status_map`` renames the root state; :data:`SERVICE_STATUS_MAP` is the one
   AIMService uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import attrs

from aim_core.reconcile.conditions import (
    AUTH_VALID,
    CONFIG_VALID,
    DEPENDENCIES_REACHABLE,
    READY,
    RECOVERED,
    Condition,
    ConditionLike,
    find,
    parse_time,
)
from aim_core.reconcile.errors import ErrorInfo, state_for
from aim_core.reconcile.health import Category, Health, State

__all__ = ["GRACE", "SERVICE_STATUS_MAP", "Derived", "derive", "requeue_after", "should_apply"]

GRACE = timedelta(seconds=10)

#: AIMService's ``status.status`` enum has Starting/Running instead of
#: Progressing/Ready and no NotAvailable (quirk Q3: upstream writes NotAvailable
#: and the status update is rejected). We map NotAvailable to Pending: a
#: template that is NotAvailable lacks GPUs that may yet appear, so the service
#: waits rather than fails; the ``Ready`` condition still names the
#: NotAvailable component and its reason, so the user sees why.
SERVICE_STATUS_MAP: Mapping[State, State] = {
    State.PROGRESSING: State.STARTING,
    State.READY: State.RUNNING,
    State.NOT_AVAILABLE: State.PENDING,
}

_KEPT_WHEN_FALSE = (State.FAILED, State.DEGRADED, State.NOT_AVAILABLE, State.PENDING)
_ERROR_STATES = (State.FAILED, State.DEGRADED, State.NOT_AVAILABLE)
# Ready reason override, in precedence order.
_BLOCKING = (
    (Category.AUTH, "AuthError"),
    (Category.INVALID_SPEC, "InvalidSpec"),
    (Category.MISSING_UPSTREAM, "ReferenceNotFound"),
)
# Blocking reasons that ``Ready`` names themselves rather than by category: what stands in the way is
# not the spec but another object (the operator never takes over an object it does not control).
_OWN_REASONS = frozenset({"NameConflict"})

ErrorTuple = tuple[Category, str, str]  # or any object with .category, .reason, .message


def _info(error: Any) -> ErrorInfo:
    if hasattr(error, "category"):
        return ErrorInfo(Category(error.category), error.reason, error.message)
    return ErrorInfo(Category(error[0]), error[1], error[2])


@attrs.frozen
class Derived:
    """What a reconcile should write to status, and what it implies."""

    state: State  #: root state before ``status_map``
    status: State  #: root state after ``status_map``: ``status.value`` goes to ``status.status``
    conditions: tuple[Condition, ...]  #: component, framework and Ready conditions (no times)
    component_states: Mapping[str, State]  #: effective state per component (for events)
    errors: tuple[ErrorInfo, ...]  #: explicit errors plus those carried by component health
    should_apply: bool
    grace_remaining: float | None  #: seconds left in the infrastructure grace, if inside it

    @property
    def ready(self) -> bool:
        return self.state is State.READY


def should_apply(errors: Iterable[ErrorTuple]) -> bool:
    """False when any error is Auth, InvalidSpec or MissingUpstream (the user must act first)."""
    return not any(_info(e).category.blocks_apply for e in errors)


def requeue_after(
    errors: Iterable[ErrorTuple],
    *,
    retry: int = 0,
    grace_remaining: float | None = None,
    base: float = 5.0,
    cap: float = 300.0,
) -> float | None:
    """Seconds until the next reconcile, or None when no error asks for one.

    Transient errors (Infrastructure, Unknown) back off exponentially,
    ``base * 2**retry`` capped at ``cap``; inside the grace period the answer is
    never later than the grace's end, so the Degraded verdict is not late.
    """
    if not any(_info(e).category.is_transient for e in errors):
        return None
    delay = min(cap, base * (2 ** max(retry, 0)))
    if grace_remaining is not None and grace_remaining > 0:
        delay = min(delay, grace_remaining)
    return delay


def _effective(health: Health) -> State:
    if health.ready:
        return State.READY
    if health.state in _KEPT_WHEN_FALSE:
        return health.state
    return State.PENDING if health.upstream else State.PROGRESSING


def _component_condition(name: str, health: Health) -> Condition:
    status = "True" if health.ready else "False"
    return Condition(f"{name}Ready", status, health.reason or "Ready", health.message)


def _infra_started(previous: Sequence[ConditionLike], infra_since: datetime | None, now: datetime) -> datetime:
    if infra_since is not None:
        return infra_since
    before = find(previous, DEPENDENCIES_REACHABLE)
    if before is not None and not before.is_true:
        return parse_time(before.last_transition_time) or now
    return now


def _joined(errors: Iterable[ErrorInfo]) -> str:
    return "; ".join(dict.fromkeys(e.message for e in errors if e.message))


def _framework(
    type_: str, failing: Sequence[ErrorInfo], reason: str, previous: Sequence[ConditionLike]
) -> Condition | None:
    if failing:
        return Condition.false(type_, reason, _joined(failing))
    if find(previous, type_) is not None:
        return Condition.true(type_, *RECOVERED[type_])
    return None


def derive(
    components: Mapping[str, Health],
    errors: Iterable[ErrorTuple] = (),
    previous_conditions: Sequence[ConditionLike] = (),
    infra_since: datetime | None = None,
    *,
    now: datetime,
    grace: timedelta = GRACE,
    status_map: Mapping[State, State] | None = None,
) -> Derived:
    """Compute conditions and root status; see the module docstring for the rules.

    :param components: component name (``Model`` → ``ModelReady``) to health, in display order.
    :param errors: errors met outside component health (e.g. apply failures).
    :param previous_conditions: the object's current conditions (for lazy framework
        conditions and the grace period).
    :param infra_since: when infrastructure errors started; by default read from the
        previous ``DependenciesReachable`` condition (or ``now`` when it was not False).
    :param now: the current time (timezone-aware).
    """
    explicit = [_info(e) for e in errors]
    found = explicit + [ErrorInfo(h.category, h.reason, h.message) for h in components.values() if h.category]
    by_cat: dict[Category, list[ErrorInfo]] = {}
    for e in found:
        by_cat.setdefault(e.category, []).append(e)
    transient = by_cat.get(Category.INFRASTRUCTURE, []) + by_cat.get(Category.UNKNOWN, [])

    grace_remaining = None
    if transient:
        left = (grace - (now - _infra_started(previous_conditions, infra_since, now))).total_seconds()
        grace_remaining = left if left > 0 else None
    in_grace = grace_remaining is not None

    conditions: list[Condition] = []
    states: dict[str, State] = {}
    for name, health in components.items():
        cond, state = _component_condition(name, health), _effective(health)
        transient_health = health.category is not None and health.category.is_transient
        kept = find(previous_conditions, cond.type) if in_grace and transient_health else None
        if kept is not None:
            cond = Condition(kept.type, kept.status, kept.reason, kept.message)
            state = State.READY if kept.is_true else (State.PENDING if health.upstream else State.PROGRESSING)
        conditions.append(cond)
        states[name] = state

    invalid = by_cat.get(Category.INVALID_SPEC, [])
    config_failing = invalid + by_cat.get(Category.MISSING_UPSTREAM, [])
    config_reason = "InvalidSpec" if invalid else "ReferenceNotFound"  # InvalidSpec wins
    for cond in (
        _framework(DEPENDENCIES_REACHABLE, transient, "InfrastructureError", previous_conditions),
        _framework(AUTH_VALID, by_cat.get(Category.AUTH, []), "AuthError", previous_conditions),
        _framework(CONFIG_VALID, config_failing, config_reason, previous_conditions),
    ):
        if cond is not None:
            conditions.append(cond)

    root = min(states.values(), key=lambda s: s.priority, default=State.READY)
    for e in explicit:  # errors not tied to a component still weigh on the root
        if e.category in (Category.RESOURCE_EXHAUSTION, Category.MISSING_DOWNSTREAM):
            root = min(root, state_for(e.category), key=lambda s: s.priority)
    blocking = next(((reason, by_cat[cat]) for cat, reason in _BLOCKING if by_cat.get(cat)), None)
    if blocking:
        root = State.FAILED
    elif transient and not in_grace and root is not State.READY:
        root = min(root, State.DEGRADED, key=lambda s: s.priority)

    conditions.append(_ready_condition(root, blocking, components, states, transient, found))
    status = (status_map or {}).get(root, root)
    return Derived(
        state=root,
        status=status,
        conditions=tuple(conditions),
        component_states=states,
        errors=tuple(found),
        should_apply=should_apply(found),
        grace_remaining=grace_remaining,
    )


def _not_ready(name: str, detail: str) -> str:
    return f"Component {name} is not ready: {detail}"


def _ready_condition(
    root: State,
    blocking: tuple[str, list[ErrorInfo]] | None,
    components: Mapping[str, Health],
    states: Mapping[str, State],
    transient: list[ErrorInfo],
    found: list[ErrorInfo],
) -> Condition:
    if root is State.READY:
        return Condition.true(READY, "AllComponentsReady", "All components are ready")
    if blocking:
        reasons = {e.reason for e in blocking[1]}
        reason = next(iter(reasons)) if len(reasons) == 1 and reasons <= _OWN_REASONS else blocking[0]
        return Condition.false(READY, reason, _joined(blocking[1]))
    for name, state in states.items():
        if state in _ERROR_STATES:
            health = components[name]
            detail = health.message or health.reason
            return Condition.false(READY, health.reason or state.value, _not_ready(name, detail))
    exhausted = [e for e in found if e.category is Category.RESOURCE_EXHAUSTION]
    if exhausted:
        return Condition.false(READY, exhausted[0].reason, exhausted[0].message)
    if transient:
        return Condition.false(READY, "InfrastructureError", _joined(transient))
    waiting = next((n for n, s in states.items() if s is not State.READY), None)
    if waiting is not None:
        health = components[waiting]
        return Condition.false(READY, "Progressing", _not_ready(waiting, health.message or health.reason or "waiting"))
    return Condition.false(READY, "Progressing", _joined(found) or "Reconciling")
