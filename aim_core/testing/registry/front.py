"""A programmable HTTP front for a test registry: paging, faults, delays, and a request log.

:class:`RegistryFront` listens on its own loopback port and passes every request
to the upstream registry, except that:

- ``GET /v2/<name>/tags/list`` is paged the way the OCI spec and GHCR page it
  (Distribution 2.8 does not): sorted, ``n`` (default ``page_size``) and
  ``last`` honoured, ``Link: </v2/<name>/tags/list?n=..&last=..>; rel="next"``
  while more remain;
- :meth:`fail` answers the next matching requests with a status of your choice
  (``429`` with ``Retry-After``, ``500``, ``503``...) instead of passing them on;
- :meth:`stall` holds matching requests for some seconds before answering
  (a client with a shorter timeout sees a timeout);
- every request is logged in :attr:`log` (method, path with query, the
  ``Authorization`` scheme it carried), so tests can count registry round trips.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import attrs
import httpx

from aim_core.testing.registry.server import free_port

__all__ = ["Fault", "LoggedRequest", "RegistryFront"]

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "te", "trailer", "upgrade"}
_TAGS = re.compile(r"^/v2/(?P<name>.+)/tags/list$")


@attrs.frozen
class LoggedRequest:
    method: str
    path: str  #: path and query as received
    authorization: str  #: scheme of the ``Authorization`` header (``basic``, ``bearer``), ``""`` when none
    answered: int  #: status sent back
    at: float = 0.0  #: ``time.monotonic()`` when the request arrived


@attrs.define
class Fault:
    pattern: re.Pattern[str]
    status: int
    times: int
    headers: Mapping[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    delay: float = 0.0  #: seconds to hold the request; with ``status=0`` it is then passed on


class RegistryFront:
    """A paging, fault-injecting proxy in front of ``upstream`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, upstream: str, *, page_size: int = 100) -> None:
        self.upstream = upstream.rstrip("/")
        self.page_size = page_size
        self.log: list[LoggedRequest] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._http = httpx.Client(trust_env=False, timeout=60, follow_redirects=False)
        self.port = 0

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    # ------------------------------------------------------------ programming

    def fail(
        self, path: str, status: int, *, times: int = 1, retry_after: str | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        """Answer the next ``times`` requests whose path matches the regex ``path`` with ``status``."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        payload = json.dumps(body if body is not None else {"errors": [{"code": "TOOMANYREQUESTS" if status == 429 else "UNAVAILABLE", "message": f"injected {status}"}]}).encode()
        with self._lock:
            self._faults.append(Fault(re.compile(path), status, times, headers, payload))

    def stall(self, path: str, seconds: float, *, times: int = 1) -> None:
        """Hold the next ``times`` matching requests for ``seconds``, then pass them on."""
        with self._lock:
            self._faults.append(Fault(re.compile(path), 0, times, delay=seconds))

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self.log.clear()

    def requests(self, path: str = "", method: str | None = None) -> list[LoggedRequest]:
        """Logged requests whose path matches the regex ``path`` (and ``method``)."""
        return [r for r in self.log if re.search(path, r.path) and (method is None or r.method == method)]

    # ------------------------------------------------------------ serving

    def start(self) -> RegistryFront:
        self.port = free_port()
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
                status, headers, payload = owner._answer(self.command, self.path, dict(self.headers.items()), body)
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
        self._http.close()

    def _take_fault(self, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.times > 0 and fault.pattern.search(path):
                    fault.times -= 1
                    return fault
        return None

    def _answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        arrived = time.monotonic()
        authorization = next((v.split(" ", 1)[0].lower() for k, v in headers.items() if k.lower() == "authorization"), "")
        fault = self._take_fault(path)
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.status:
            out = [("Content-Type", "application/json"), *fault.headers.items()]
            self.log.append(LoggedRequest(method, path, authorization, fault.status, arrived))
            return fault.status, out, fault.body
        split = urlsplit(path)
        tags = _TAGS.match(split.path)
        if method == "GET" and tags is not None:
            status, out, payload = self._tags_page(tags.group("name"), split.query, headers)
        else:
            status, out, payload = self._forward(method, path, headers, body)
        self.log.append(LoggedRequest(method, path, authorization, status, arrived))
        return status, out, payload

    def _forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        send = {k: v for k, v in headers.items() if k.lower() not in _HOP_BY_HOP and k.lower() != "host"}
        response = self._http.request(method, self.upstream + path, headers=send, content=body or None)
        out = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_BY_HOP]
        out = [(k, v.replace(self.upstream, self.url)) if k.lower() == "location" else (k, v) for k, v in out]
        return response.status_code, out, response.content

    def _tags_page(self, name: str, query: str, headers: dict[str, str]) -> tuple[int, list[tuple[str, str]], bytes]:
        status, out, payload = self._forward("GET", f"/v2/{name}/tags/list", headers, b"")
        if status != 200:
            return status, out, payload
        params = parse_qs(query)
        try:
            n = int(params["n"][0]) if "n" in params else self.page_size
        except ValueError:
            error = {"errors": [{"code": "PAGINATION_NUMBER_INVALID", "message": "invalid number of results requested"}]}
            return 400, [("Content-Type", "application/json")], json.dumps(error).encode()
        n = min(n, self.page_size)
        last = params.get("last", [None])[0]
        tags = sorted(json.loads(payload).get("tags") or [])
        if last is not None:
            tags = [t for t in tags if t > last]
        page, more = tags[:n], len(tags) > n
        result = [("Content-Type", "application/json")]
        if more and page:
            result.append(("Link", f'</v2/{name}/tags/list?n={n}&last={quote(page[-1])}>; rel="next"'))
        return 200, result, json.dumps({"name": name, "tags": page}).encode()
