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
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs

from aim_core.testing.registry.server import free_port

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


class JsonApi:
    def __init__(self, route: Route) -> None:
        self.route = route
        self.requests: list[ApiRequest] = []
        self._faults: list[list[Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(self, path: str, status: int, *, times: int = 1, headers: Mapping[str, str] | None = None) -> None:
        with self._lock:
            self._faults.append([re.compile(path), status, times, dict(headers or {})])

    def _fault(self, path: str) -> tuple[int, dict[str, str]] | None:
        with self._lock:
            for fault in self._faults:
                if fault[2] > 0 and fault[0].search(path):
                    fault[2] -= 1
                    return fault[1], fault[3]
        return None

    def start(self) -> JsonApi:
        self.port = free_port()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                request = ApiRequest(
                    self.command, split.path, {k: v[0] for k, v in parse_qs(split.query).items()},
                    {k.lower(): v for k, v in self.headers.items()}, json.loads(raw) if raw else None,
                )
                fault = owner._fault(self.path)
                if fault is not None:
                    status, headers, body = fault[0], fault[1], {"message": f"injected {fault[0]}"}
                else:
                    status, headers, body = owner.route(request)
                owner.requests.append(attrs.evolve(request, answered=status))
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
