"""How the service controller reads its serving pods: which are ready, which failed and how (log tails are cached per termination). Pure."""

from __future__ import annotations

from typing import Any

LOG_CACHE_SIZE = 256  # log tails of failed pods kept, each valid until its containers end again


def _terminations(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What changes when a container of ``pod`` ends again: restart counts and the terminated states."""
    out = []
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        ended = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated") or {}
        out.append((cs.get("name"), cs.get("restartCount"), ended.get("exitCode"), ended.get("finishedAt"),
                    ended.get("containerID")))
    return tuple(out)


def _pod_ready(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _ready(obj: dict[str, Any]) -> bool:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False
