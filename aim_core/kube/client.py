"""The one adapter that talks to the Kubernetes API server.

Everything else in the core reads from the watch-fed :mod:`store` and sends
writes through :class:`Kube`. Requests go over ``aiohttp`` (the client kopf's
watches use too) with the credentials kopf's login produced, so the operator
and its watches share one identity. aiohttp costs about half the client CPU of
httpx per request, and JSON goes through ``orjson`` when it is installed
(benchmarks/bench_http.py; figures in benchmarks/README.md).

Errors come out as :class:`~aim_core.reconcile.errors.ApiError` (the server
answered with a failure Status) or :class:`~aim_core.reconcile.errors.NetworkError`
(it did not answer), which the error taxonomy (F10) classifies. How it
authenticates (credentials, TLS, proxy) is :mod:`aim_core.kube.credentials`;
every request carries the :class:`~aim_core.kube.credentials.Authenticator`'s
current header, and a request refused with 401 is sent once more after the
credentials were read again (a rotated token file, an expired exec token).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from asyncio import sslproto
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp

from aim_core import metrics
from aim_core.kube.credentials import Authenticator, Credentials, proxy_for, ssl_context
from aim_core.kube.wire import RequestCounter, dumps, loads, network_error, resource_path
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.errors import ApiError, NetworkError

log = logging.getLogger("aim_engine.kube")

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
USER_AGENT = "aim-engine"
READ_VERBS = frozenset({"get", "list", "watch"})
KEEPALIVE_SECONDS = 30.0
# asyncio gives each TLS connection a read buffer of 256 KiB, zeroed when the connection opens (so resident);
# the operator holds a connection per watch and up to one per request in flight (about 110 at 64 workers,
# 25 MiB). 32 KiB still takes two full TLS records per read.
TLS_READ_BUFFER = 32 * 1024
RETIRED_POOL_SECONDS = 10.0  # how long connections made with a replaced client certificate may finish requests  # idle connections are closed before an API server's (or proxy's) idle timeout


def small_tls_buffers() -> None:
    """Give asyncio's TLS connections of this process :data:`TLS_READ_BUFFER` to read into (a class setting)."""
    protocol = sslproto.SSLProtocol
    if getattr(protocol, "max_size", 0) > TLS_READ_BUFFER:
        protocol.max_size = TLS_READ_BUFFER


class Kube:
    """Async Kubernetes API client with the few verbs the operator uses.

    One keep-alive connection pool per event loop for requests, at most
    ``connections`` connections (size it for the engine's workers: each
    reconcile may send its status, an Event and a child apply at once), and
    one without a limit for watch streams.
    """

    def __init__(self, credentials: Credentials, *, timeout: float = 30.0, connections: int = 16) -> None:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        small_tls_buffers()
        self.auth = Authenticator(credentials)  # the Authorization header goes with each request: it can change
        # Asked before every write; False: the write is not sent (a leader whose lease ran out writes nothing).
        self.write_guard: Callable[[], bool] | None = None
        self.credentials = credentials
        self.counter = RequestCounter()
        self._base = credentials.server.rstrip("/")
        self._headers = headers
        self._ssl = ssl_context(credentials)
        self._timeout = aiohttp.ClientTimeout(total=None, connect=timeout, sock_connect=timeout, sock_read=timeout)
        self._connections = max(1, connections)
        self._proxy = proxy_for(self._base)
        self._sessions: dict[bool, aiohttp.ClientSession] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tls_generation = self.auth.tls_generation
        self._retired: list[aiohttp.ClientSession] = []  # pools of an older client certificate, closed soon
        self._closing: set[asyncio.Task[None]] = set()

    def _client(self, streams: bool = False) -> aiohttp.ClientSession:
        """The pool for requests, or (``streams``) the one for watches, which hold a connection each for minutes."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # A pool belongs to the loop that made it: a new loop (a test, a restarted operator) gets its own.
            self._sessions, self._loop, self._retired = {}, loop, []
        if self._tls_generation != self.auth.tls_generation:
            self._renew_tls(loop)
        session = self._sessions.get(streams)
        if session is None or session.closed:
            session = self._sessions[streams] = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    ssl=self._ssl,
                    limit=0 if streams else self._connections,
                    limit_per_host=0,
                    keepalive_timeout=KEEPALIVE_SECONDS,
                ),
                headers=self._headers,
                timeout=self._timeout,
                proxy=self._proxy,
                raise_for_status=False,
                cookie_jar=aiohttp.DummyCookieJar(),  # the API server sets none; a jar is looked up per request
            )
        return session

    def _renew_tls(self, loop: asyncio.AbstractEventLoop) -> None:
        """An exec plugin returned a new client certificate: new pools present it, as client-go's
        connection rotation does; the old pools close once requests in flight on them had time to end
        (a watch on one ends then, and its reflector resumes on a new connection)."""
        self._tls_generation = self.auth.tls_generation
        self._ssl = ssl_context(self.auth.creds)
        old = [session for session in self._sessions.values() if not session.closed]
        self._sessions = {}
        self._retired += old

        async def close_later() -> None:
            await asyncio.sleep(RETIRED_POOL_SECONDS)
            for session in old:
                if session in self._retired:
                    self._retired.remove(session)
                    await session.close()

        if old:
            task = loop.create_task(close_later(), name="kube-retired-pools")
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        log.info("the client certificate changed; new connections present the new one")

    async def aclose(self) -> None:
        if self._loop is asyncio.get_running_loop():
            for task in list(self._closing):
                task.cancel()
            for session in [*self._sessions.values(), *self._retired]:
                if not session.closed:
                    await session.close()
        self._sessions, self._retired = {}, []

    @metrics.api_errors
    async def _request(
        self,
        verb: str,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        streams: bool = False,
    ) -> Any:
        self.counter.count(verb)
        headers: dict[str, str] = {}
        data = None
        if body is not None:
            data = dumps(body)
            headers["Content-Type"] = content_type or "application/json"
        started = time.monotonic()
        auth = await self.auth.header()
        for attempt in (1, 2):
            if self.write_guard is not None and verb not in READ_VERBS and not self.write_guard():
                raise NetworkError("other", f"{method} {path}: not sent: this replica no longer holds the leader lease")
            if auth:
                headers["Authorization"] = auth
            try:
                async with self._client(streams).request(
                    method, self._base + path, params=params, data=data, headers=headers
                ) as response:
                    status, payload = response.status, await response.read()
                    media_type = response.content_type
                    charset = response.charset or "utf-8"
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise network_error(exc, method, path) from exc
            if status != 401:
                self.auth.accepted()
                break
            if attempt == 1 and await self.auth.refresh(auth):
                auth = self.auth.current()  # read again: send it once more with the new credentials
                continue
            self.auth.refused()
            break
        metrics.api_request(method, self.credentials.server, status, started)
        if status >= 400:
            raise _api_error(status, payload, method, path)
        if not payload:
            return None
        if media_type == "application/json":
            return loads(payload)
        return payload.decode(charset, errors="replace")

    # ------------------------------------------------------------------ reads

    async def get(self, ref: ResourceRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        """One object, or ``None`` when it does not exist."""
        try:
            return await self._request("get", "GET", resource_path(ref, namespace, name))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[dict[str, Any]]:
        """All objects of a resource, optionally in one namespace and filtered by labels or fields."""
        params = {}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        data = await self._request("list", "GET", resource_path(ref, namespace), params=params or None)
        return _items(data, ref)

    async def list_pages(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        field_selector: str | None = None,
        label_selector: str | None = None,
        limit: int = 500,
    ) -> AsyncIterator[tuple[list[dict[str, Any]], str | None]]:
        """The objects of a resource ``limit`` at a time (``continue``), each page with the list's ``resourceVersion``.

        As client-go's reflectors list: 10,000 objects are never decoded at once (the
        operator's memory peaked at 600 MiB listing 10,000 services and InferenceServices whole).
        Pages come over the watches' pool: the watch that follows a listing takes its connection
        again, instead of each stream holding one of each (40-odd connections more at start).
        """
        params = {"limit": str(limit)}
        if field_selector:
            params["fieldSelector"] = field_selector
        if label_selector:
            params["labelSelector"] = label_selector
        path = resource_path(ref, namespace)
        while True:
            data = await self._request("list", "GET", path, params=params, streams=True) or {}
            meta = data.get("metadata") or {}
            yield _items(data, ref), meta.get("resourceVersion")
            if not meta.get("continue"):
                return
            params = {**params, "continue": meta["continue"]}

    async def watch(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        field_selector: str | None = None,
        label_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[dict[str, Any]]:
        """The events of one watch request (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) until it ends.

        Bookmarks are asked for; the server ends the request after ``timeout_seconds``
        and the caller resumes from the last ``resourceVersion`` it saw.
        """
        params: dict[str, str] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        if resource_version:
            params["resourceVersion"] = resource_version
        if field_selector:
            params["fieldSelector"] = field_selector
        if label_selector:
            params["labelSelector"] = label_selector
        path = resource_path(ref, namespace)
        self.counter.count("watch")
        timeout = aiohttp.ClientTimeout(total=None, connect=30.0, sock_connect=30.0, sock_read=timeout_seconds + 30.0)
        auth = await self.auth.header()
        try:
            response = await self._client(streams=True).get(
                self._base + path, params=params, timeout=timeout, headers={"Authorization": auth} if auth else None
            )
            if response.status == 401:
                refusal = await response.read()
                response.release()
                if not await self.auth.refresh(auth):
                    self.auth.refused()
                    raise _api_error(401, refusal, "GET", path)
                auth = self.auth.current()
                response = await self._client(streams=True).get(
                    self._base + path, params=params, timeout=timeout, headers={"Authorization": auth} if auth else None
                )
            async with response:
                if response.status >= 400:
                    if response.status == 401:
                        self.auth.refused()
                    raise _api_error(response.status, await response.read(), "GET", path)
                self.auth.accepted()
                pending = b""  # one event per line; a line can be longer than a read (no line-length limit)
                async for chunk in response.content.iter_any():
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield loads(line)
                if pending.strip():
                    yield loads(pending)
        except TimeoutError as exc:
            raise NetworkError("timeout", f"watch {path}: timed out") from exc
        except aiohttp.ClientError as exc:
            raise NetworkError("other", f"watch {path}: {exc}") from exc

    async def read_log(self, namespace: str, pod: str, *, container: str | None = None, tail_lines: int = 50) -> str:
        """The last lines of a pod's log."""
        params: dict[str, Any] = {"tailLines": str(tail_lines)}
        if container:
            params["container"] = container
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log"
        text = await self._request("get", "GET", path, params=params)
        if text is None:  # an empty log has no body
            return ""
        return text if isinstance(text, str) else json.dumps(text)

    # ----------------------------------------------------------------- writes

    async def apply(
        self, ref: ResourceRef, obj: Mapping[str, Any], *, field_manager: str, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` as ``field_manager``."""
        meta = obj["metadata"]
        params = {"fieldManager": field_manager, "force": "true" if force else "false"}
        path = resource_path(ref, meta.get("namespace"), meta["name"])
        return await self._request("apply", "PATCH", path, params=params, body=dict(obj), content_type=APPLY_PATCH)

    async def patch(
        self,
        ref: ResourceRef,
        namespace: str | None,
        name: str,
        patch: Mapping[str, Any],
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """JSON merge patch of an object or its ``status`` subresource."""
        params = {"fieldManager": field_manager} if field_manager else None
        path = resource_path(ref, namespace, name, subresource)
        return await self._request("patch", "PATCH", path, params=params, body=dict(patch), content_type=MERGE_PATCH)

    async def create(
        self, ref: ResourceRef, obj: Mapping[str, Any], *, field_manager: str | None = None
    ) -> dict[str, Any]:
        params = {"fieldManager": field_manager} if field_manager else None
        path = resource_path(ref, obj["metadata"].get("namespace"))
        return await self._request("create", "POST", path, params=params, body=dict(obj))

    async def replace(self, ref: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT an object; its ``metadata.resourceVersion`` makes this a compare-and-swap."""
        meta = obj["metadata"]
        return await self._request(
            "replace", "PUT", resource_path(ref, meta.get("namespace"), meta["name"]), body=dict(obj)
        )

    async def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        """Delete an object in the background; a missing object is not an error."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        try:
            await self._request("delete", "DELETE", resource_path(ref, namespace, name), body=body)
        except ApiError as exc:
            if exc.status != 404:
                raise


def _api_error(status: int, payload: bytes, method: str, path: str) -> ApiError:
    text = payload.decode("utf-8", errors="replace")
    reason, message = "", text[:500]
    try:
        data = loads(payload) if payload else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        reason = str(data.get("reason") or "")
        message = str(data.get("message") or message)
    return ApiError(status, reason, f"{method} {path}: {message}")


def _items(data: dict[str, Any] | None, ref: ResourceRef) -> list[dict[str, Any]]:
    """The items of a list answer, typed: list items come without apiVersion and kind."""
    items = list((data or {}).get("items") or [])
    for item in items:
        item.setdefault("apiVersion", ref.api_version)
        item.setdefault("kind", ref.kind)
    return items
