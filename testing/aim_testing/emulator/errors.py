"""Kubernetes ``Status`` error bodies with the real reasons.

NotFound, AlreadyExists, Conflict, Invalid, BadRequest, UnsupportedMediaType:
raised as :class:`kmock.KubernetesError`, which the emulator renders as the response body
(without ``details`` when there are none, as the API server leaves them out).
"""

from __future__ import annotations

from typing import Any

import kmock


def api_error(code: int, reason: str, message: str, **details: Any) -> kmock.KubernetesError:
    """A Kubernetes ``Status`` failure; kmock renders it as the response body."""
    return kmock.KubernetesError(status=code, reason=reason, message=message, details=details or None)


def not_found(res: kmock.resource, name: str | None = None) -> kmock.KubernetesError:
    """404 NotFound for an object of ``res`` by name, or for the resource itself without one."""
    what = f"{res.plural}.{res.group}".rstrip(".")
    if name is None:
        return api_error(404, "NotFound", "the server could not find the requested resource")
    group = {"group": res.group} if res.group else {}  # the core group is left out, as the real server does
    return api_error(404, "NotFound", f'{what} "{name}" not found', name=name, **group, kind=res.plural)
