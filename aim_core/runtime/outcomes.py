"""The operator's INFO lines about what it did: one per write and per change of an object's state.

A steady-state reconcile writes nothing and so says nothing; requests are
never logged one by one (docs/metrics.md, "Logs"). Failures are logged where
they are handled, in :mod:`aim_core.runtime.engine`.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("aim_engine.engine")


def _who(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
    return f"{obj.get('kind')} {name}"


def wrote(obj: dict[str, Any], verb: str, kind: str, name: str, *, created: bool | None = None) -> None:
    """``obj``'s reconcile wrote a child: ``verb`` is "applied" (``created`` says whether it was new) or "deleted"."""
    if verb == "applied":
        verb = "created" if created else "updated"
    log.info("%s: %s %s %s", _who(obj), verb, kind, name)


def status_written(obj: dict[str, Any], old: dict[str, Any], new: dict[str, Any]) -> None:
    """A status write: INFO when the root state changed (with the Ready condition's reason), else DEBUG."""
    before, after = old.get("status"), new.get("status")
    if before == after:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s: status updated (%s)", _who(obj), after or "conditions")
        return
    ready = next((c for c in new.get("conditions") or () if c.get("type") == "Ready"), None) or {}
    why = f": {ready['reason']}" if ready.get("reason") and ready.get("reason") != after else ""
    log.info("%s is %s%s%s", _who(obj), after, f" (was {before})" if before else "", why)
