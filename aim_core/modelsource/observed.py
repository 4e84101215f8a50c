"""Values a model-source sync produces and the plan reads (pure data)."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from aim_core.modelsource.selectors import Match, Selector

__all__ = ["Failure", "Observed", "SecretProblem", "SelectorResult", "Sync"]


@attrs.frozen
class Failure:
    """Something a registry or the spec kept from being listed.

    ``transient`` failures may pass by themselves (registry down, timeout,
    rate limit); the others need the user (credentials, missing repository,
    bad spec). ``message`` never contains credentials.
    """

    reason: str
    message: str
    transient: bool = False
    retry_after: float | None = None


@attrs.frozen
class SelectorResult:
    """What one selector found.

    ``listed`` is False when nothing could be listed at all; a wildcard whose
    repositories were found but some of whose tag lists failed is listed with
    ``failures`` (partly synced).
    """

    matches: tuple[Match, ...] = ()
    failures: tuple[Failure, ...] = ()
    listed: bool = True
    repositories: int = 0  #: repositories looked at (for messages)

    @property
    def ok(self) -> bool:
        return self.listed and not self.failures


@attrs.frozen
class Sync:
    """One completed sync of a source: a result per selector, aligned with the selectors."""

    generation: int | None
    results: tuple[SelectorResult, ...]
    finished_at: datetime.datetime
    attempt: int = 0  #: consecutive syncs with failures, this one included (0 when this one had none)
    last_success: datetime.datetime | None = None  #: this sync's end if it succeeded, else the previous success
    requests: int = 0  #: registry calls made (benchmark and logs)

    @property
    def succeeded(self) -> bool:
        """At least one selector listed something (or needed no listing)."""
        return any(r.listed for r in self.results)


@attrs.frozen
class SecretProblem:
    """A pull secret named by the source that cannot be used."""

    name: str
    reason: str  #: SecretNotFound, SecretAccessFailed, InvalidPullSecret
    message: str


@attrs.frozen
class Observed:
    """Everything the model-source plan needs."""

    now: datetime.datetime
    selectors: tuple[Selector, ...]
    sync: Sync | None  #: the latest completed sync of this generation; None before the first one ends
    syncing: bool  #: a sync is running in the background
    models: tuple[Mapping[str, Any], ...]  #: AIMClusterModels labelled as made by this source
    model_named: Callable[[str], Mapping[str, Any] | None] = lambda _name: None  #: any AIMClusterModel by name
    secret_problems: tuple[SecretProblem, ...] = ()
