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
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import attrs
import httpx

from aim_testing.registry.loopback import Answer, Fault, Faults, LoopbackServer

__all__ = ["Fault", "LoggedRequest", "RegistryFront"]

_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "content-encoding",
    "te",
    "trailer",
    "upgrade",
}
_TAGS = re.compile(r"^/v2/(?P<name>.+)/tags/list$")


@attrs.frozen
class LoggedRequest:
    method: str
    path: str  #: path and query as received
    authorization: str  #: scheme of the ``Authorization`` header (``basic``, ``bearer``), ``""`` when none
    answered: int  #: status sent back
    at: float = 0.0  #: ``time.monotonic()`` when the request arrived


class RegistryFront(LoopbackServer):
    """A paging, fault-injecting proxy in front of ``upstream`` (``http://127.0.0.1:PORT``)."""

    def __init__(self, upstream: str, *, page_size: int = 100) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")
        self.page_size = page_size
        self.log: list[LoggedRequest] = []
        self.faults = Faults()
        self._http = httpx.Client(trust_env=False, timeout=60, follow_redirects=False)

    # ------------------------------------------------------------ programming

    def fail(
        self,
        path: str,
        status: int,
        *,
        times: int = 1,
        retry_after: str | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        """Answer the next ``times`` requests whose path matches the regex ``path`` with ``status``."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        payload = json.dumps(
            body
            if body is not None
            else {
                "errors": [
                    {"code": "TOOMANYREQUESTS" if status == 429 else "UNAVAILABLE", "message": f"injected {status}"}
                ]
            }
        ).encode()
        self.faults.add(Fault(re.compile(path), status, times, headers, payload))

    def stall(self, path: str, seconds: float, *, times: int = 1) -> None:
        """Hold the next ``times`` matching requests for ``seconds``, then pass them on."""
        self.faults.add(Fault(re.compile(path), 0, times, delay=seconds))

    def clear(self) -> None:
        self.faults.clear()
        self.log.clear()

    def requests(self, path: str = "", method: str | None = None) -> list[LoggedRequest]:
        """Logged requests whose path matches the regex ``path`` (and ``method``)."""
        return [r for r in self.log if re.search(path, r.path) and (method is None or r.method == method)]

    # ------------------------------------------------------------ serving

    def start(self, port: int = 0) -> RegistryFront:
        return super().start(port)

    def stop(self) -> None:
        super().stop()
        self._http.close()

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        arrived = time.monotonic()
        authorization = next(
            (v.split(" ", 1)[0].lower() for k, v in headers.items() if k.lower() == "authorization"), ""
        )
        fault = self.faults.take(path)
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

    def _forward(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, list[tuple[str, str]], bytes]:
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
            error = {
                "errors": [{"code": "PAGINATION_NUMBER_INVALID", "message": "invalid number of results requested"}]
            }
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
