"""The HTTP plumbing every test server here shares: 127.0.0.1, a thread of its own, faults on demand.

A :class:`LoopbackServer` subclass implements :meth:`~LoopbackServer.answer`
(method, path with query, headers, body -> status, headers, body); the base class
listens on a free loopback port, reads each request, writes the answer with its
``Content-Length`` (no body for ``HEAD``), keeps connections alive and logs nothing.
:class:`Faults` holds injected failures: the next ``times`` requests whose path
matches a regex get ``status`` (or are held for ``delay`` seconds first).
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

__all__ = ["Answer", "Fault", "Faults", "LoopbackServer", "free_port"]

#: status, headers (name, value) in order, body
Answer = tuple[int, Iterable[tuple[str, str]], bytes]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@attrs.define
class Fault:
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    delay: float = 0.0  #: seconds to hold the request; with ``status=0`` it is then answered as usual


class Faults:
    """Injected failures, matched by path in the order they were added; safe across server threads."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, path: str) -> Fault | None:
        """The first fault with uses left whose pattern matches ``path``, using it up once."""
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.pattern.search(path):
                    fault.times -= 1
                    return fault
        return None


class LoopbackServer:
    """An HTTP/1.1 server on ``127.0.0.1`` answering every request through :meth:`answer`."""

    def __init__(self) -> None:
        self.port = 0
        self._server: ThreadingHTTPServer | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        raise NotImplementedError

    def start(self, port: int = 0) -> Any:
        """Listen on ``port`` (a free one when 0) and serve in a daemon thread; returns ``self``."""
        self.port = port or free_port()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True
            wbufsize = -1

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                status, headers, payload = owner.answer(self.command, self.path, dict(self.headers.items()), body)
                self.send_response(status)
                for key, value in headers:
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)
                self.wfile.flush()

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
