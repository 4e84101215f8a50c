"""Which Kubernetes Events a reconcile should emit, from its condition changes (F14).

* A condition that appears or changes status or reason yields a ``Normal`` event.
* "Error-level" conditions yield a ``Warning`` on *every* reconcile, changed or
  not, so a stuck object keeps saying why: component conditions whose component
  is Failed, Degraded or NotAvailable, and the framework conditions
  (``DependenciesReachable``, ``AuthValid``, ``ConfigValid``) while False.
* ``warn_on_transition`` names condition types whose False transitions are a
  one-off ``Warning`` instead of ``Normal`` (the artifact's ``DownloadComplete``).

Event reason = condition reason; message = condition message, or
``"<Component> is ready: <reason>"`` / ``"<Component> is not ready: <reason>"``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Literal

import attrs

from aim_core.reconcile.conditions import FRAMEWORK_TYPES, READY, Condition, ConditionLike, find
from aim_core.reconcile.health import Health, State

__all__ = ["EventSpec", "plan_events"]

_ERROR_STATES = (State.FAILED, State.DEGRADED, State.NOT_AVAILABLE)


@attrs.frozen
class EventSpec:
    """An event to record on the reconciled object."""

    type: Literal["Normal", "Warning"]
    reason: str
    message: str
    condition: str = ""  #: the condition type that caused it (for logs)
    recurring: bool = False  #: emitted on every reconcile while the condition stays bad (rate-limit these)


def _subject(type_: str) -> str:
    if type_ == READY:
        return "Resource"
    return type_[: -len("Ready")] if type_.endswith("Ready") else type_


def _message(cond: Condition) -> str:
    if cond.message:
        return cond.message
    verdict = "is ready" if cond.is_true else "is not ready"
    return f"{_subject(cond.type)} {verdict}: {cond.reason}"


def _state(value: State | Health) -> State:
    return value.state if isinstance(value, Health) else value


def plan_events(
    old_conditions: Iterable[ConditionLike],
    new_conditions: Iterable[ConditionLike],
    component_states: Mapping[str, State | Health] | None = None,
    *,
    warn_on_transition: Collection[str] = (),
) -> list[EventSpec]:
    """Return the events for going from ``old_conditions`` to ``new_conditions``.

    :param component_states: component name (``Model`` for ``ModelReady``) to its
        state, e.g. :attr:`aim_core.reconcile.status.Derived.component_states`.
    :param warn_on_transition: condition types whose False transitions warn once.
    """
    old = list(old_conditions)
    errors = {f"{name}Ready" for name, value in (component_states or {}).items() if _state(value) in _ERROR_STATES}
    events = []
    for raw in new_conditions:
        cond = raw if isinstance(raw, Condition) else Condition.from_k8s(raw)
        before = find(old, cond.type)
        changed = before is None or before.status != cond.status or before.reason != cond.reason
        recurring = cond.type in errors or (cond.type in FRAMEWORK_TYPES and not cond.is_true)
        if recurring:
            kind = "Warning"
        elif changed:
            kind = "Warning" if cond.type in warn_on_transition and not cond.is_true else "Normal"
        else:
            continue
        events.append(EventSpec(kind, cond.reason, _message(cond), cond.type, recurring))
    return events


def summarize_first_appearance(old_conditions: Iterable[ConditionLike], events: list[EventSpec]) -> list[EventSpec]:
    """Fold the Normal events of conditions that appear for the first time into one event.

    An object's first reconcile makes every condition appear at once; one
    event per condition (7 for a new AIMService) says little that one
    summary does not, and costs a request each. The summary's reason is the
    ``Ready`` condition's; its message lists every new condition with its
    status and reason. Transitions of existing conditions and Warnings are
    kept as they are.
    """
    seen = {(raw.type if isinstance(raw, Condition) else Condition.from_k8s(raw).type) for raw in old_conditions}
    first = [e for e in events if e.type == "Normal" and e.condition not in seen]
    if len(first) < 2:
        return events
    ready = next((e for e in first if e.condition == READY), first[0])
    listing = ", ".join(f"{e.condition} {e.reason}" for e in first if e.condition != READY)
    summary = EventSpec("Normal", ready.reason, f"{ready.message} ({listing})", ready.condition, False)
    rest = [e for e in events if e not in first]
    return [summary, *rest]


def summarize_state_change(events: list[EventSpec]) -> list[EventSpec]:
    """Fold the Normal transitions that come with a change of the ``Ready`` condition into its event.

    A service going Running sees its runtime, its pods and ``Ready`` turn True in one
    reconcile: one event for the change of state (its reason is ``Ready``'s), whose message
    lists the component transitions that made it. Warnings, and component transitions
    without a change of ``Ready``, are kept as they are.
    """
    normal = [e for e in events if e.type == "Normal" and not e.recurring]
    ready = next((e for e in normal if e.condition == READY), None)
    if ready is None or len(normal) < 2:
        return events
    listing = ", ".join(f"{e.condition} {e.reason}" for e in normal if e is not ready)
    summary = EventSpec("Normal", ready.reason, f"{ready.message} ({listing})", ready.condition, False)
    return [summary, *(e for e in events if e not in normal)]


def summarize(
    old_conditions: Iterable[ConditionLike], events: list[EventSpec], *, fold_state_change: bool = False
) -> list[EventSpec]:
    """The events a reconcile posts: :func:`summarize_first_appearance`, then (``fold_state_change``, for kinds
    whose components are their children's states, e.g. a service) :func:`summarize_state_change`."""
    events = summarize_first_appearance(old_conditions, events)
    return summarize_state_change(events) if fold_state_change else events
