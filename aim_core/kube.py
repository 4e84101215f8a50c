"""The one adapter that talks to the Kubernetes API server.

Everything else in the core reads from the watch-fed :mod:`store` and sends
writes through :class:`Kube`. Requests go over ``httpx`` with the credentials
kopf's login produced, so the operator and its watches share one identity.

Errors come out as :class:`~aim_core.reconcile.errors.ApiError` (the server
answered with a failure Status) or :class:`~aim_core.reconcile.errors.NetworkError`
(it did not answer), which the error taxonomy (F10) classifies.
"""

from __future__ import annotations

import json
import logging
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs
import httpx

from aim_core import metrics
from aim_core.providers import ResourceRef
from aim_core.reconcile.errors import ApiError, NetworkError

log = logging.getLogger("aim_engine.kube")

MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


@attrs.frozen
class Credentials:
    """How to reach and authenticate to the API server."""

    server: str
    token: str | None = None
    ca_path: str | None = None
    ca_data: bytes | None = None
    certificate_path: str | None = None
    certificate_data: bytes | None = None
    private_key_path: str | None = None
    private_key_data: bytes | None = None
    username: str | None = None
    password: str | None = None
    insecure: bool = False
    default_namespace: str | None = None


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


def resource_path(ref: ResourceRef, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
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


def _ssl_context(creds: Credentials) -> ssl.SSLContext | bool:
    if creds.insecure:
        return False
    ctx = ssl.create_default_context()
    if creds.ca_path:
        ctx.load_verify_locations(cafile=creds.ca_path)
    elif creds.ca_data:
        ctx.load_verify_locations(cadata=creds.ca_data.decode())
    cert, key = creds.certificate_path, creds.private_key_path
    if creds.certificate_data and creds.private_key_data:
        # ssl wants files; keep them for the life of the process.
        cert_file = tempfile.NamedTemporaryFile(delete=False, suffix=".crt")
        cert_file.write(creds.certificate_data)
        cert_file.close()
        key_file = tempfile.NamedTemporaryFile(delete=False, suffix=".key")
        key_file.write(creds.private_key_data)
        key_file.close()
        cert, key = cert_file.name, key_file.name
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


class Kube:
    """Async Kubernetes API client with the few verbs the operator uses."""

    def __init__(self, credentials: Credentials, *, timeout: float = 30.0) -> None:
        headers = {"Accept": "application/json", "User-Agent": "aim-engine"}
        auth = None
        if credentials.token:
            headers["Authorization"] = f"Bearer {credentials.token}"
        elif credentials.username and credentials.password:
            auth = httpx.BasicAuth(credentials.username, credentials.password)
        self.credentials = credentials
        self.counter = RequestCounter()
        self._client = httpx.AsyncClient(
            base_url=credentials.server.rstrip("/"),
            headers=headers,
            auth=auth,
            verify=_ssl_context(credentials),
            timeout=timeout,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

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
    ) -> Any:
        self.counter.count(verb)
        headers = {"Content-Type": content_type} if content_type else None
        content = json.dumps(body).encode() if body is not None else None
        started = time.monotonic()
        try:
            response = await self._client.request(method, path, params=params, content=content, headers=headers)
        except httpx.ConnectError as exc:
            kind = "dns" if "name" in str(exc).lower() and "resolution" in str(exc).lower() else "refused"
            raise NetworkError(kind, f"{method} {path}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise NetworkError("timeout", f"{method} {path}: timed out") from exc
        except httpx.RemoteProtocolError as exc:
            raise NetworkError("reset", f"{method} {path}: {exc}") from exc
        except httpx.TransportError as exc:
            raise NetworkError("other", f"{method} {path}: {exc}") from exc
        metrics.api_request(method, self.credentials.server, response.status_code, started)
        if response.status_code >= 400:
            raise _api_error(response, method, path)
        if not response.content:
            return None
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

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
        items = list((data or {}).get("items") or [])
        for item in items:  # list items come without apiVersion/kind
            item.setdefault("apiVersion", ref.api_version)
            item.setdefault("kind", ref.kind)
        return items

    async def list_versioned(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        field_selector: str | None = None,
    ) -> tuple[list[dict[str, Any]], str | None]:
        """All objects of a resource and the list's ``resourceVersion``, to watch from."""
        params = {"fieldSelector": field_selector} if field_selector else None
        data = await self._request("list", "GET", resource_path(ref, namespace), params=params) or {}
        items = list(data.get("items") or [])
        for item in items:
            item.setdefault("apiVersion", ref.api_version)
            item.setdefault("kind", ref.kind)
        return items, (data.get("metadata") or {}).get("resourceVersion")

    async def watch(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
    ) -> AsyncIterator[dict[str, Any]]:
        """The events of one watch request (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) until it ends.

        Bookmarks are asked for; the server ends the request after ``timeout_seconds``
        and the caller resumes from the last ``resourceVersion`` it saw.
        """
        params: dict[str, str] = {"watch": "true", "allowWatchBookmarks": "true",
                                  "timeoutSeconds": str(timeout_seconds)}
        if resource_version:
            params["resourceVersion"] = resource_version
        if field_selector:
            params["fieldSelector"] = field_selector
        path = resource_path(ref, namespace)
        self.counter.count("watch")
        timeout = httpx.Timeout(timeout_seconds + 30.0, connect=30.0)
        try:
            async with self._client.stream("GET", path, params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise _api_error(response, "GET", path)
                async for line in response.aiter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TimeoutException as exc:
            raise NetworkError("timeout", f"watch {path}: timed out") from exc
        except httpx.TransportError as exc:
            raise NetworkError("other", f"watch {path}: {exc}") from exc

    async def read_log(self, namespace: str, pod: str, *, container: str | None = None, tail_lines: int = 50) -> str:
        """The last lines of a pod's log."""
        params: dict[str, Any] = {"tailLines": tail_lines}
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

    async def create(self, ref: ResourceRef, obj: Mapping[str, Any], *, field_manager: str | None = None) -> dict[str, Any]:
        params = {"fieldManager": field_manager} if field_manager else None
        path = resource_path(ref, obj["metadata"].get("namespace"))
        return await self._request("create", "POST", path, params=params, body=dict(obj))

    async def replace(self, ref: ResourceRef, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT an object; its ``metadata.resourceVersion`` makes this a compare-and-swap."""
        meta = obj["metadata"]
        return await self._request("replace", "PUT", resource_path(ref, meta.get("namespace"), meta["name"]), body=dict(obj))

    async def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        """Delete an object in the background; a missing object is not an error."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        try:
            await self._request("delete", "DELETE", resource_path(ref, namespace, name), body=body)
        except ApiError as exc:
            if exc.status != 404:
                raise


def _api_error(response: httpx.Response, method: str, path: str) -> ApiError:
    reason, message = "", response.text[:500]
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        reason = str(data.get("reason") or "")
        message = str(data.get("message") or message)
    return ApiError(response.status_code, reason, f"{method} {path}: {message}")
