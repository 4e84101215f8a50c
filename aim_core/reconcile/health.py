"""Component health: the value every observer, plugin and planner speaks.

A reconcile looks at several *components* (dependencies such as a model or a
template, children such as an InferenceService). Each yields a :class:`Health`
and becomes a ``<Component>Ready`` condition. Errors carry a
:class:`Category`, which decides retry and whether children are applied
(F10).
"""

from __future__ import annotations

import enum

import attrs


class State(str, enum.Enum):
    """Component and root states, ordered worst first (F11)."""

    FAILED = "Failed"
    NOT_AVAILABLE = "NotAvailable"
    DEGRADED = "Degraded"
    PENDING = "Pending"
    STARTING = "Starting"
    PROGRESSING = "Progressing"
    READY = "Ready"
    RUNNING = "Running"

    @property
    def priority(self) -> int:
        return _PRIORITY[self]


_PRIORITY = {s: i for i, s in enumerate(State)}


class Category(str, enum.Enum):
    """Error taxonomy (F10). The category decides retry and apply gating."""

    INFRASTRUCTURE = "Infrastructure"
    AUTH = "Auth"
    MISSING_DOWNSTREAM = "MissingDownstream"
    MISSING_UPSTREAM = "MissingUpstream"
    INVALID_SPEC = "InvalidSpec"
    RESOURCE_EXHAUSTION = "ResourceExhaustion"
    UNKNOWN = "Unknown"

    @property
    def blocks_apply(self) -> bool:
        """Auth, invalid spec and missing references stop all writes of children."""
        return self in (Category.AUTH, Category.INVALID_SPEC, Category.MISSING_UPSTREAM)

    @property
    def is_transient(self) -> bool:
        """Infrastructure and unknown errors are retried with backoff."""
        return self in (Category.INFRASTRUCTURE, Category.UNKNOWN)


@attrs.frozen
class Health:
    """The observed health of one component.

    ``category`` is set when the health stems from an error; ``upstream`` tells
    whether the component is a dependency (a not-ready dependency makes the
    owner Pending) rather than a child (a not-ready child makes it Progressing).
    """

    state: State
    reason: str = ""
    message: str = ""
    category: Category | None = None
    upstream: bool = False

    @property
    def ready(self) -> bool:
        return self.state in (State.READY, State.RUNNING)

    @classmethod
    def ok(cls, reason: str = "Ready", message: str = "", *, upstream: bool = False) -> Health:
        return cls(State.READY, reason, message, upstream=upstream)

    @classmethod
    def progressing(cls, reason: str, message: str = "", *, upstream: bool = False) -> Health:
        return cls(State.PROGRESSING, reason, message, upstream=upstream)

    @classmethod
    def error(
        cls, category: Category, reason: str, message: str, *, state: State | None = None, upstream: bool = False
    ) -> Health:
        """An error's health; the state defaults to what the category implies (:func:`state_for`)."""
        return cls(state or state_for(category), reason, message, category=category, upstream=upstream)


_STATE_FOR: dict[Category, State] = {
    Category.AUTH: State.FAILED,
    Category.INVALID_SPEC: State.FAILED,
    Category.RESOURCE_EXHAUSTION: State.FAILED,
    Category.MISSING_UPSTREAM: State.FAILED,
    Category.INFRASTRUCTURE: State.DEGRADED,
    Category.UNKNOWN: State.DEGRADED,
    Category.MISSING_DOWNSTREAM: State.PROGRESSING,
}


def state_for(category: Category) -> State:
    """The component state an error of ``category`` implies.

    User-fixable errors (auth, invalid spec, missing reference, exhaustion) are
    ``Failed``; infrastructure and unknown are ``Degraded`` (they may recover and
    are retried); a missing child is ``Progressing`` (the controller is about to
    create it). Upstream docs list MissingUpstream as Degraded, but its code
    forces root ``Failed`` for it anyway (F10), so the component says the same.
    """
    return _STATE_FOR[category]
