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
        cls, category: Category, reason: str, message: str, *, state: State = State.FAILED, upstream: bool = False
    ) -> Health:
        return cls(state, reason, message, category=category, upstream=upstream)
