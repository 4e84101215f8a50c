"""Status conditions as values, and how a new set is merged into the old one (F9).

A reconcile computes the conditions it wants (:class:`Condition` values without
times); :func:`merge_conditions` folds them into what the object already has:

* ``lastTransitionTime`` moves only when the status **or** the reason changes;
  a message-only change keeps the old time.
* The three framework conditions ``DependenciesReachable``, ``AuthValid`` and
  ``ConfigValid`` are *lazy*: they appear only after their first failure, and
  once present they never disappear; when the failure is gone they flip back
  to True (``Reachable`` / ``AuthenticationValid`` / ``ConfigurationValid``).
* Every other condition type that is not in the new set is dropped: the new
  set is authoritative (a component that is no longer looked at, such as a
  finished discovery job, loses its condition).
* Messages are capped at :data:`MAX_MESSAGE` characters (what the CRDs allow): a
  longer one would make the API server refuse the whole status write, for ever.
* Order is stable: ``Ready`` first, then the rest sorted by type. Sorting keeps
  status patches minimal and diffs readable; ``Ready`` first puts the summary
  where ``kubectl describe`` readers look.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from aim_core.reconcile.health import Health, State

__all__ = [
    "MAX_MESSAGE",
    "cap_message",
    "dependency_health",
    "ready_message",
    "AUTH_VALID",
    "CONFIG_VALID",
    "Condition",
    "ConditionLike",
    "DEPENDENCIES_REACHABLE",
    "FRAMEWORK_TYPES",
    "READY",
    "RECOVERED",
    "find",
    "format_time",
    "merge_conditions",
    "parse_time",
    "to_k8s",
]

READY = "Ready"
DEPENDENCIES_REACHABLE = "DependenciesReachable"
AUTH_VALID = "AuthValid"
CONFIG_VALID = "ConfigValid"

FRAMEWORK_TYPES = (DEPENDENCIES_REACHABLE, AUTH_VALID, CONFIG_VALID)

#: Reason and message a lazy framework condition takes when its failure clears.
RECOVERED: dict[str, tuple[str, str]] = {
    DEPENDENCIES_REACHABLE: ("Reachable", "All dependencies are reachable"),
    AUTH_VALID: ("AuthenticationValid", "Authentication is valid"),
    CONFIG_VALID: ("ConfigurationValid", "Configuration is valid"),
}

_STATUSES = ("True", "False", "Unknown")

#: The longest condition message the CRDs allow (``maxLength`` of ``conditions[].message``).
MAX_MESSAGE = 32768


def cap_message(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` when it fits in ``limit`` characters, else its start and a note that it was cut."""
    if len(text) <= limit:
        return text
    note = f" ... (cut: {len(text)} characters in all)"
    return text[: limit - len(note)] + note if limit > 2 * len(note) else text[:limit]


@attrs.frozen
class Condition:
    """One entry of ``status.conditions``; times are strings as Kubernetes writes them."""

    type: str
    status: str = attrs.field(validator=attrs.validators.in_(_STATUSES))
    reason: str
    message: str = ""
    last_transition_time: str = ""
    observed_generation: int | None = None

    @classmethod
    def true(cls, type: str, reason: str, message: str = "") -> Condition:
        return cls(type, "True", reason, message)

    @classmethod
    def false(cls, type: str, reason: str, message: str = "") -> Condition:
        return cls(type, "False", reason, message)

    @property
    def is_true(self) -> bool:
        return self.status == "True"

    @classmethod
    def from_k8s(cls, raw: Mapping[str, Any]) -> Condition:
        return cls(
            type=str(raw.get("type", "")),
            status=str(raw.get("status", "Unknown")),
            reason=str(raw.get("reason", "") or ""),
            message=str(raw.get("message", "") or ""),
            last_transition_time=str(raw.get("lastTransitionTime", "") or ""),
            observed_generation=raw.get("observedGeneration"),
        )

    def to_k8s(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": self.last_transition_time,
        }
        if self.observed_generation is not None:
            out["observedGeneration"] = self.observed_generation
        return out


ConditionLike = Condition | Mapping[str, Any]


def _coerce(c: ConditionLike) -> Condition:
    return c if isinstance(c, Condition) else Condition.from_k8s(c)


def ready_message(obj: Mapping[str, Any] | None) -> str:
    """The message of an object's ``Ready`` condition, empty when it has none."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == READY:
            return cond.get("message") or ""
    return ""


def dependency_health(
    obj: Mapping[str, Any],
    what: str,
    *,
    ready_reason: str,
    not_ready_reason: str,
    waiting: State = State.PENDING,
    unknown: str = "not reconciled yet",
) -> Health:
    """A dependency's health from its ``status.status``, as the object that uses it reports it.

    Ready → ``ready_reason``; Failed/Degraded → Failed; NotAvailable →
    NotAvailable; anything else → ``waiting``. Not-ready messages carry the
    dependency's own ``Ready`` message. Always an upstream component.
    """
    state = ((obj.get("status") or {}).get("status")) or ""
    if state == State.READY.value:
        return Health.ok(ready_reason, f"{what} is Ready", upstream=True)
    detail = ready_message(obj)
    message = f"{what} is {state or unknown}" + (f": {detail}" if detail else "")
    if state in (State.FAILED.value, State.DEGRADED.value):
        return Health(State.FAILED, not_ready_reason, message, upstream=True)
    if state == State.NOT_AVAILABLE.value:
        return Health(State.NOT_AVAILABLE, not_ready_reason, message, upstream=True)
    return Health(waiting, not_ready_reason, message, upstream=True)


def find(conditions: Iterable[ConditionLike], type: str) -> Condition | None:
    """The condition of ``type`` in ``conditions``, or None."""
    for c in conditions:
        if isinstance(c, Condition):
            if c.type == type:
                return c
        elif str(c.get("type", "")) == type:  # only the one asked for is built
            return Condition.from_k8s(c)
    return None


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC with second precision, as ``metav1.Time`` serialises."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: str) -> datetime | None:
    """Inverse of :func:`format_time`; also accepts fractional seconds and offsets. Bad input → None."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _sort_key(c: Condition) -> tuple[int, str]:
    return (0 if c.type == READY else 1, c.type)


def _settle(new: Condition, old: Condition | None, now: str, generation: int | None = None) -> Condition:
    unchanged = old is not None and old.status == new.status and old.reason == new.reason
    when = old.last_transition_time if unchanged and old.last_transition_time else now
    if new.observed_generation is not None:
        generation = new.observed_generation
    elif generation is None and old is not None:
        generation = old.observed_generation
    return attrs.evolve(new, last_transition_time=when, observed_generation=generation)


def merge_conditions(
    old: Iterable[ConditionLike], new: Iterable[ConditionLike], now: str, *, observed_generation: int | None = None
) -> list[dict[str, Any]]:
    """Fold the desired ``new`` conditions into the ``old`` ones; return Kubernetes dicts.

    :param old: the object's current ``status.conditions`` (dicts or :class:`Condition`).
    :param new: the conditions this reconcile computed; their times are ignored.
    :param now: the time stamp for conditions that transition (see :func:`format_time`).
    :param observed_generation: stamped on every condition this reconcile set (one
        that carries its own keeps it); otherwise a condition keeps its old value.
    """
    previous = {c.type: c for c in map(_coerce, old)}
    merged: dict[str, Condition] = {}
    for cond in map(_coerce, new):
        if len(cond.message) > MAX_MESSAGE:
            cond = attrs.evolve(cond, message=cap_message(cond.message))
        before = previous.get(cond.type)
        if cond.type in FRAMEWORK_TYPES and cond.is_true and before is None:
            continue  # lazy: a framework condition is born False
        merged[cond.type] = _settle(cond, before, now, observed_generation)
    for type_ in FRAMEWORK_TYPES:
        before = previous.get(type_)
        if before is None or type_ in merged:
            continue
        if before.is_true:
            merged[type_] = before
        else:
            reason, message = RECOVERED[type_]
            merged[type_] = _settle(Condition.true(type_, reason, message), before, now, observed_generation)
    return to_k8s(sorted(merged.values(), key=_sort_key))


def to_k8s(conditions: Iterable[ConditionLike]) -> list[dict[str, Any]]:
    """Kubernetes (camelCase) dicts for ``conditions``, order kept."""
    return [_coerce(c).to_k8s() for c in conditions]
