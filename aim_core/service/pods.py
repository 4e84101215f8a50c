"""How the service controller reads its serving pods: which are ready, which failed and how (log tails are cached per termination). Pure."""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.obj import status_of

LOG_CACHE_SIZE = 256  # log tails of failed pods kept, each valid until its containers end again


def terminations(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What changes when a container of ``pod`` ends again: restart counts and the terminated states."""
    out = []
    for cs in status_of(pod).get("containerStatuses") or []:
        ended = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
        out.append(
            (
                cs.get("name"),
                cs.get("restartCount"),
                ended.get("exitCode"),
                ended.get("finishedAt"),
                ended.get("containerID"),
            )
        )
    return tuple(out)


def pod_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status_of(pod).get("conditions") or [])


def is_ready(obj: dict[str, Any]) -> bool:
    """``Ready`` True (an InferenceService); for an object without one, ``Available`` True (a LeaderWorkerSet)."""
    conditions = {cond.get("type"): cond for cond in status_of(obj).get("conditions") or []}
    found = conditions.get("Ready") or conditions.get("Available")
    return found is not None and found.get("status") == "True"
