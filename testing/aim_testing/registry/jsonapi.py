"""A tiny JSON HTTP server on loopback for faking a registry vendor's REST API in tests.

``JsonApi(route).start()`` serves every request by calling
``route(request) -> (status, headers, body)`` on a thread; ``body`` is
JSON-encoded unless it is ``bytes``. Requests are logged in ``.requests``, and
``.fail(path_regex, status, times=1, headers=...)`` answers the next matching
requests with an error first (429 with ``Retry-After``, 5xx).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs

from aim_testing.registry.loopback import Answer, Fault, Faults, LoopbackServer

__all__ = ["ApiRequest", "JsonApi"]


@attrs.frozen
class ApiRequest:
    method: str
    path: str  #: without the query
    query: Mapping[str, str]  #: first value of each parameter
    headers: Mapping[str, str]  #: lower-case names
    body: Any  #: decoded JSON, or ``None``
    answered: int = 0

    @property
    def authorization(self) -> str:
        return self.headers.get("authorization", "")


Route = Callable[[ApiRequest], tuple[int, Mapping[str, str], Any]]


class JsonApi(LoopbackServer):
    def __init__(self, route: Route) -> None:
        super().__init__()
        self.route = route
        self.requests: list[ApiRequest] = []
        self.faults = Faults()

    def fail(self, path: str, status: int, *, times: int = 1, headers: Mapping[str, str] | None = None) -> None:
        self.faults.add(Fault(re.compile(path), status, times, dict(headers or {})))

    def start(self, port: int = 0) -> JsonApi:
        return super().start(port)

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        split = urlsplit(path)
        request = ApiRequest(
            method,
            split.path,
            {k: v[0] for k, v in parse_qs(split.query).items()},
            {k.lower(): v for k, v in headers.items()},
            json.loads(body) if body else None,
        )
        fault = self.faults.take(path)
        if fault is not None:
            status, extra, payload = fault.status, fault.headers, {"message": f"injected {fault.status}"}
        else:
            status, extra, payload = self.route(request)
        self.requests.append(attrs.evolve(request, answered=status))
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return status, [("Content-Type", "application/json"), *extra.items()], data
