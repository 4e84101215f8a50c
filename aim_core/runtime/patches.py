"""The engine's small pure helpers: which errors are routine, the finalizer and change checks."""

from __future__ import annotations

import logging
from typing import Any

from aim_core.reconcile.errors import ApiError, NetworkError, classify
from aim_core.reconcile.plan import Issue

log = logging.getLogger("aim_engine.engine")


def routine(exc: BaseException) -> bool:
    """Whether an error is expected in operation: no answer, or a server that asks to retry (5xx, 429, 409)."""
    if isinstance(exc, NetworkError):
        return True
    return isinstance(exc, ApiError) and classify(exc)[0].is_transient


def finalizers_patch(meta: dict[str, Any], finalizers: list[str]) -> dict[str, Any]:
    """A merge patch setting the finalizer list, valid only against the version we read.

    A merge patch replaces the whole list, so the resourceVersion precondition
    keeps us from dropping a finalizer someone else added meanwhile (the
    server answers 409 and the reconcile is retried).
    """
    patch: dict[str, Any] = {"finalizers": finalizers}
    if meta.get("resourceVersion"):
        patch["resourceVersion"] = meta["resourceVersion"]
    return {"metadata": patch}


_BOOKKEEPING = ("resourceVersion", "managedFields", "generation")
_FINALIZER_BOOKKEEPING = (*_BOOKKEEPING, "finalizers")


def _core(obj: dict[str, Any], ignored: tuple[str, ...]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ignored}
    return {**{k: v for k, v in obj.items() if k not in ("status", "metadata")}, "metadata": meta}


def same_but_status(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two versions of an object differ only in status and server bookkeeping."""
    return _core(old, _BOOKKEEPING) == _core(new, _BOOKKEEPING)


def same_but_finalizers(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two versions differ only in finalizers, status and server bookkeeping (our finalizer patch)."""
    return _core(old, _FINALIZER_BOOKKEEPING) == _core(new, _FINALIZER_BOOKKEEPING)


def issue_from(exc: BaseException, doing: str) -> Issue:
    category, reason = classify(exc)
    return Issue(category, reason, f"{doing}: {exc}")


def log_failure(what: str, exc: BaseException, delay: float) -> None:
    """One WARNING line for routine trouble (API server or network); a bug gets its traceback."""
    if routine(exc):
        log.warning("reconcile of %s: %s; retrying in %.1fs", what, exc, delay)
        return
    category, reason = classify(exc)
    log.error(
        "reconcile of %s failed: %s (%s): %s; retrying in %.1fs",
        what,
        reason,
        category.value,
        exc,
        delay,
        exc_info=not isinstance(exc, ApiError),
    )
