"""What goes over the wire to the API server: JSON bodies, resource paths, request counts, network errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import attrs

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.errors import NetworkError

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the standard library is the fallback
    orjson = None


def dumps(body: Any) -> bytes:
    """A request body as JSON bytes."""
    if orjson is not None:
        return orjson.dumps(body)
    return json.dumps(body, separators=(",", ":")).encode()


def loads(data: bytes) -> Any:
    return orjson.loads(data) if orjson is not None else json.loads(data)


@attrs.define
class RequestCounter:
    """Counts requests by verb; the benchmark and tests read it."""

    reads: int = 0
    writes: int = 0
    by_verb: dict[str, int] = attrs.field(factory=dict)

    def count(self, verb: str) -> None:
        self.by_verb[verb] = self.by_verb.get(verb, 0) + 1
        if verb in ("get", "list", "watch"):
            self.reads += 1
        else:
            self.writes += 1


def resource_path(
    ref: ResourceRef, namespace: str | None = None, name: str | None = None, sub: str | None = None
) -> str:
    """The URL path of a collection, an object or an object's subresource."""
    base = f"/api/{ref.version}" if not ref.group else f"/apis/{ref.api_version}"
    if ref.namespaced and namespace:
        base += f"/namespaces/{namespace}"
    path = f"{base}/{ref.plural}"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path


def network_error(exc: BaseException, method: str, path: str) -> NetworkError:
    """The taxonomy's kind of a failed request (F10): dns, refused, timeout, reset or other."""
    if isinstance(exc, aiohttp.ClientConnectorDNSError):  # the name did not resolve
        return NetworkError("dns", f"{method} {path}: {exc}")
    if isinstance(exc, aiohttp.ClientConnectorError):  # refused, unreachable, TLS handshake/verification
        return NetworkError("refused", f"{method} {path}: {exc}")
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):  # connect, pool wait or read
        return NetworkError("timeout", f"{method} {path}: timed out")
    if isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError)):
        return NetworkError("reset", f"{method} {path}: {exc or type(exc).__name__}")
    return NetworkError("other", f"{method} {path}: {exc or type(exc).__name__}")
