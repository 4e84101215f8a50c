"""Request handling: kmock's KubernetesEmulator, made stricter.

kmock stores objects as plain JSON and merges every write into them. Our operator
relies on the parts of the API server that go beyond that, so :class:`Emulator`
replaces the write path (kmock's documented extension point: "inherit and
implement") and keeps kmock's discovery, object store (``emulator.objects``),
request log and reaction DSL. Here each verb is served: list, get (and
``pods/log``), watch, create, update (PUT), patch, apply, delete, deletecollection.

Watches resume from a ``resourceVersion`` and turn selector transitions into
ADDED/DELETED as the real server does; a version older than the kept history
(see ``compact()``/``history_limit``) is answered with an ERROR event carrying
410 Gone; ``allowWatchBookmarks=true`` gets a BOOKMARK every
``bookmark_interval`` seconds of quiet. Field selectors accept only the fields
the API server supports (Events, Pods, Secrets, ...; custom resources: name and
namespace only; see :mod:`~aim_testing.emulator.selectors`). Lists honour ``limit`` and
``continue`` (pages in namespace/name order, every page with the first page's
``resourceVersion``; unlike the API server's, a later page shows objects as
they are then, not as they were at the first page).

Deliberate differences from a real server, kept for test speed and simplicity:

* No authentication unless ``tokens`` is set: then only those bearer tokens are accepted.
* Schema validation of custom resources as in :mod:`~aim_testing.emulator.validation`
  (after pruning and defaulting, :mod:`~aim_testing.emulator.schemas`): no formats,
  list-map key uniqueness or CEL rules other than immutability; no admission; RBAC
  only answers SubjectAccessReviews (:mod:`~aim_testing.emulator.access`)
  and never refuses a request;
  objects may be created in namespaces that do not exist (but not in one being deleted).
* Writes happen in kmock's fallback reactions, so a test reaction that answers
  a write (``kube['patch'] << 500``) also prevents the write, like a failing
  server would. (Plain kmock stores the write even when a reaction answers it.)
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp.web
import attrs
import kmock
import kmock._internal.dsl as kmock_dsl
import yaml

from aim_testing.emulator.access import ACCESS_REVIEWS, TOKEN_REVIEWS, review, token_review
from aim_testing.emulator.calls import READ_VERBS, WRITE_VERBS, ApiCall, classify, content_type, header
from aim_testing.emulator.errors import api_error, not_found
from aim_testing.emulator.fieldsets import flatten, merge_applied, reapply
from aim_testing.emulator.metadata import api_version, check_version, suffix, what
from aim_testing.emulator.patches import APPLY, JSON_PATCH, apply_patch
from aim_testing.emulator.selectors import check_field_selector, request_matcher
from aim_testing.emulator.storage import Change, Storage
from aim_testing.emulator.validation import invalid


@attrs.define(kw_only=True, repr=False)  # Storage's short repr (see there)
class Emulator(Storage):
    """kmock's KubernetesEmulator with API-server write semantics (see the package docstring).

    Enter it like any kmock handler: ``async with Emulator() as k, kmock.Server(k): ...``.
    """

    custom_resources: set[kmock.resource] = attrs.field(factory=set, init=False)  # declared from CRDs
    logs: dict[tuple[str, str], str] = attrs.field(factory=dict, init=False)  # (ns, pod) -> pods/log
    # Bearer tokens the server accepts; None: every request, with or without one (the default).
    # Any other token is answered 401 Unauthorized, as the API server answers a revoked or expired one.
    tokens: set[str] | None = attrs.field(default=None, init=False)
    refused: int = attrs.field(default=0, init=False)  # requests answered 401
    # TokenReviews: token -> the user it authenticates ({"username", "groups", "uid"}); others are not authenticated
    users: dict[str, dict[str, Any]] = attrs.field(factory=dict, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.fallback[_is_replace] << self._serve_replace
        self.fallback[_is_delete_collection] << self._serve_delete_collection

    async def __call__(self, raw_request: Any) -> Any:
        if self.tokens is not None:
            given = raw_request.headers.get("Authorization", "")
            if not (given.startswith("Bearer ") and given[len("Bearer ") :] in self.tokens):
                self.refused += 1
                return aiohttp.web.json_response(
                    {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Failure",
                        "message": "Unauthorized",
                        "reason": "Unauthorized",
                        "code": 401,
                    },
                    status=401,
                )
        # kmock's path parser cannot read the namespaces resource itself (it takes the name for a
        # namespace). Serve those URLs via a twin path it parses: /api/v1/namespaces/-/namespaces/...
        # The scope is then dropped because namespaces are cluster-scoped. Logged URLs show the twin.
        if m := _NAMESPACES_PATH.fullmatch(raw_request.path):
            twin = f"/api/v1/namespaces/-/namespaces{m[1] or ''}{m[2] or ''}"
            query = f"?{raw_request.query_string}" if raw_request.query_string else ""
            raw_request = raw_request.clone(rel_url=twin + query)
        return await super().__call__(raw_request)

    async def _render_error(self, exc: Exception) -> aiohttp.web.StreamResponse:
        # kmock fills missing details with a traceback; the API server leaves them out
        if isinstance(exc, kmock.KubernetesError) and not exc.details:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
            body.update(message=exc.message or repr(exc), reason=exc.reason or type(exc).__name__, code=exc.status)
            return aiohttp.web.json_response(body, status=exc.status)
        return await super()._render_error(exc)

    async def _handle(self, request: kmock.Request) -> Any:
        # Skip KubernetesEmulator._handle, which stores every write before the reactions run:
        # here the writes happen in the fallbacks below, with the API server's semantics.
        # This is kmock's RawHandler._handle but for how it asks whether a reaction sees the request:
        # ``request in view`` walks every request served so far through the view's filters, for each
        # reaction, so a test's n-th request cost n times the first (minutes in a 20-service test).
        # A view made of filters on this emulator sees the new request if and only if each filter
        # accepts it; any other view (slices, groups, exclusions) is still asked kmock's way.
        payloads = list(self._payloads)
        priorities = [payload.priorities for payload in payloads]
        longest = max((len(priority) for priority in priorities), default=0)
        padded = [tuple(-p for p in priority) + (0,) * (longest - len(priority)) for priority in priorities]
        for index in sorted(range(len(padded)), key=lambda i: padded[i]):
            payload = payloads[index]
            if self._sees(payload._source, request) and not payload._disabled.is_set():  # noqa: SLF001
                try:
                    return await payload(request)
                except kmock_dsl.rendering.ReactionMismatchError:  # either mismatch or depletion
                    payload._disabled.set()  # noqa: SLF001
                except NotImplementedError:  # matched, but nothing to respond with
                    pass
        raise NotImplementedError(
            "Undefined server behaviour: no reaction matching the request is defined. "
            "Consider adding a catch-all fallback reaction: `kmock.fallback << 404`."
        )

    def _sees(self, view: Any, request: kmock.Request) -> bool:
        """Whether ``view`` holds ``request``, the one being served (kmock's ``request in view``)."""
        while True:
            if view is self:  # every request served so far, this one included
                return True
            if type(view) is kmock_dsl.Filter:
                if not view.criteria(request):
                    return False
                view = view._source  # noqa: SLF001
            elif type(view) is kmock_dsl.Priority:
                view = view._source  # noqa: SLF001
            else:
                return request in view

    # ----------------------------------------------------------------- call log

    @property
    def calls(self) -> list[ApiCall]:
        """Every request served so far, classified by verb (discovery requests included)."""
        return [self._call_of(request) for request in self._requests]

    def count(self, *verbs: str, resource: str | None = None, agent: str | None = None, since: int = 0) -> int:
        """Count API calls from index ``since`` by verb (all if none; "read"/"write" for the groups),
        resource key or plural, and user-agent prefix (e.g. "kopf")."""
        wanted = set().union(*({"read": READ_VERBS, "write": WRITE_VERBS}.get(v, {v}) for v in verbs))
        plural = resource.rsplit("/", 1)[-1] if resource else None
        return sum(
            1
            for call in self.calls[since:]
            if (not wanted or call.verb in wanted)
            and (agent is None or call.user_agent.startswith(agent))
            and (
                resource is None
                or call.resource == resource
                or (call.resource or "").rsplit("/", 1)[-1] == plural
                and "/" not in resource
            )
        )

    # ----------------------------------------------------------------- reads

    async def _serve_list(self, request: kmock.Request) -> Any:
        res, info = self._declared(request, "list")
        check_field_selector(res, request.params.get("fieldSelector"), custom=res in self.custom_resources)
        match = request_matcher(request.params)
        items = [obj for obj in self._live_objects(res, self._scope(info, request.namespace)) if match(obj)]
        meta: dict[str, Any] = {"resourceVersion": str(self._rv)}
        limit, token = request.params.get("limit"), request.params.get("continue")
        if limit or token:
            items, meta = _page(items, meta, limit, token)
        return {"apiVersion": api_version(res), "kind": f"{info.kind}List", "metadata": meta, "items": items}

    async def _serve_fetch(self, request: kmock.Request) -> Any:
        res, info = self._declared(request, "get")
        key = self._key(res, info, request)
        obj = self._live(key)
        if obj is None:
            raise not_found(res, request.name)
        if request.subresource == "log" and "log" in info.subresources:
            return self.logs.get((key[1] or "", key[2]), "").encode()
        if request.subresource not in (None, "status") or (request.subresource and "status" not in info.subresources):
            raise not_found(res)
        return obj

    async def _serve_watch(self, request: kmock.Request) -> Any:
        res, info = self._declared(request, "watch")
        since = request.params.get("resourceVersion") or "0"
        if not since.isdigit():
            raise api_error(400, "BadRequest", f"invalid resourceVersion: {since!r}")
        check_field_selector(res, request.params.get("fieldSelector"), custom=res in self.custom_resources)
        match = request_matcher(request.params)
        timeout = float(request.params.get("timeoutSeconds") or 0) or None
        scope = (res, self._scope(info, request.namespace), request.name, match)
        bookmark = request.params.get("sendInitialEvents") == "true"
        bookmarks = request.params.get("allowWatchBookmarks") == "true"
        return self._watch_stream(scope, int(since), bookmark, timeout, info, bookmarks)

    async def _watch_stream(
        self,
        scope: tuple[Any, ...],
        since: int,
        bookmark: bool,
        timeout: float | None,
        info: kmock.ResourceInfo,
        bookmarks: bool = False,
    ) -> AsyncIterator[Any]:
        res, namespace, name, match = scope
        if 0 < since < self._compacted:
            yield b""
            yield {
                "type": "ERROR",
                "object": {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "code": 410,
                    "reason": "Expired",
                    "message": f"too old resource version: {since} ({self._compacted})",
                },
            }
            return
        # Snapshot and subscribe with no await in between, so that no change is lost or doubled.
        if since == 0:
            backlog = [
                {"type": "ADDED", "object": obj}
                for obj in self._live_objects(res, namespace)
                if (name is None or obj["metadata"]["name"] == name) and match(obj)
            ]
            if bookmark:
                backlog.append(
                    {
                        "type": "BOOKMARK",
                        "object": {
                            "apiVersion": api_version(res),
                            "kind": info.kind,
                            "metadata": {
                                "resourceVersion": str(self._rv),
                                "annotations": {"k8s.io/initial-events-end": "true"},
                            },
                        },
                    }
                )
        else:
            backlog = [
                event for change in self._changes if change.rv > since if (event := _event(change, scope)) is not None
            ]
        queue: asyncio.Queue[Change] = asyncio.Queue()
        self._watchers.add(queue)
        try:
            yield b""  # send the headers now, even if nothing happens
            for event in backlog:
                yield event
            loop = asyncio.get_running_loop()
            deadline = None if timeout is None else loop.time() + timeout
            while True:
                remaining = None if deadline is None else max(0.0, deadline - loop.time())
                wait = (
                    min(remaining, self.bookmark_interval)
                    if bookmarks and remaining is not None
                    else self.bookmark_interval
                    if bookmarks
                    else remaining
                )
                try:
                    change = await asyncio.wait_for(queue.get(), wait)
                except TimeoutError:
                    if deadline is not None and loop.time() >= deadline:
                        return
                    yield {
                        "type": "BOOKMARK",
                        "object": {
                            "apiVersion": api_version(res),
                            "kind": info.kind,
                            "metadata": {"resourceVersion": str(self._rv)},
                        },
                    }
                    continue
                if (event := _event(change, scope)) is not None:
                    yield event
        finally:
            self._watchers.discard(queue)

    # ----------------------------------------------------------------- writes

    async def _serve_create(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        obj = self._body(request)
        if res == ACCESS_REVIEWS:  # answered, never stored
            return kmock.Response(status=201, payload=review(self, obj))
        if res == TOKEN_REVIEWS:
            return kmock.Response(status=201, payload=token_review(self.users, obj))
        meta = obj.setdefault("metadata", {})
        namespace = self._namespace(info, request.namespace, meta)
        name = meta.get("name") or (meta.get("generateName") and meta["generateName"] + suffix())
        if not name:
            raise api_error(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        key = (res, namespace, name)
        if self._live(key) is not None:
            group = {"group": res.group} if res.group else {}
            raise api_error(
                409, "AlreadyExists", f'{what(res)} "{name}" already exists', name=name, **group, kind=res.plural
            )
        self.refuse_in_terminating_namespace(res, namespace, name)
        obj.update(apiVersion=api_version(res), kind=info.kind or obj.get("kind"))
        meta["name"] = name
        if "status" in info.subresources:
            obj.pop("status", None)
        stored = self._write(res, info, key, None, obj, manager=_manager(request), dry_run=_dry(request))
        return kmock.Response(status=201, payload=stored)

    async def _serve_update(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        sub = _subresource(request, info, res)
        ctype = content_type(request)
        if ctype == APPLY:
            return self._apply(request, res, info, sub)
        key = self._key(res, info, request)
        old = self._live(key)
        if old is None:
            raise not_found(res, request.name)
        patch, base = self._body(request, kind=list if ctype == JSON_PATCH else dict), copy.deepcopy(old)
        new = apply_patch(ctype, base, patch, strategic=res not in self.custom_resources)
        check_version(res, old, new)
        stored = self._write(
            res, info, key, old, new, manager=_manager(request), subresource=sub, dry_run=_dry(request)
        )
        return kmock.Response(status=200, payload=stored)

    async def _serve_replace(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        sub = _subresource(request, info, res)
        key = self._key(res, info, request)
        old = self._live(key)
        if old is None:
            raise not_found(res, request.name)
        new = self._body(request)
        meta = new.get("metadata") or {}
        if meta.get("name", request.name) != request.name:
            raise api_error(
                400,
                "BadRequest",
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({request.name})",
            )
        if meta.get("resourceVersion") is None and res in self.custom_resources:
            cause = {
                "reason": "FieldValueInvalid",
                "message": "Invalid value: 0x0: must be specified for an update",
                "field": "metadata.resourceVersion",
            }
            raise invalid(str(res.plural), res.group, request.name, [cause])
        check_version(res, old, new)
        stored = self._write(
            res, info, key, old, new, manager=_manager(request), subresource=sub, dry_run=_dry(request)
        )
        return kmock.Response(status=200, payload=stored)

    async def _serve_delete(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        key = self._key(res, info, request)
        last = self._delete(res, info, key, dry_run=_dry(request))
        if last["metadata"].get("deletionTimestamp") or res not in self.custom_resources:
            return kmock.Response(status=200, payload=last)
        return kmock.Response(
            status=200,
            payload={
                "apiVersion": "v1",
                "kind": "Status",
                "metadata": {},
                "status": "Success",
                "details": {"name": key[2], "group": res.group, "kind": res.plural, "uid": last["metadata"]["uid"]},
            },
        )

    async def _serve_delete_collection(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        check_field_selector(res, request.params.get("fieldSelector"), custom=res in self.custom_resources)
        match = request_matcher(request.params)
        items = [
            self._delete(
                res, info, (res, obj["metadata"].get("namespace"), obj["metadata"]["name"]), dry_run=_dry(request)
            )
            for obj in self._live_objects(res, self._scope(info, request.namespace))
            if match(obj)
        ]
        return kmock.Response(
            status=200,
            payload={
                "apiVersion": api_version(res),
                "kind": f"{info.kind}List",
                "metadata": {"resourceVersion": str(self._rv)},
                "items": items,
            },
        )

    def _apply(
        self, request: kmock.Request, res: kmock.resource, info: kmock.ResourceInfo, sub: str | None
    ) -> kmock.Response:
        manager = request.params.get("fieldManager")
        if not manager:
            cause = {
                "reason": "FieldValueRequired",
                "message": "Required value: is required for apply patch",
                "field": "fieldManager",
            }
            raise invalid("PatchOptions", "meta.k8s.io", "", [cause])
        cfg = self._body(request)
        if cfg.get("apiVersion") != api_version(res) or not cfg.get("kind"):
            raise api_error(400, "BadRequest", f"apply configurations need kind and apiVersion {api_version(res)!r}")
        meta = cfg.get("metadata") or {}
        if meta.get("name", request.name) != request.name:
            raise api_error(400, "BadRequest", "the name of the object does not match the name on the URL")
        key = self._key(res, info, request)
        if key[1] is not None and meta.get("namespace", key[1]) != key[1]:
            raise api_error(400, "BadRequest", "the namespace of the object does not match the namespace on the URL")
        status_apart = "status" in info.subresources
        if sub == "status":
            effective = {"status": cfg["status"]} if cfg.get("status") is not None else {}
        else:
            effective = {k: v for k, v in cfg.items() if not (status_apart and k == "status")}
        applied = flatten(effective)
        old = self._live(key)
        if old is None:
            if sub is not None:
                raise not_found(res, request.name)
            self.refuse_in_terminating_namespace(res, key[1], key[2])
            new = merge_applied({"metadata": {"name": key[2]}}, effective)
            new["metadata"].pop("resourceVersion", None)
            if key[1] is not None:
                new["metadata"]["namespace"] = key[1]
            stored = self._write(res, info, key, None, new, manager=manager, applied=applied, dry_run=_dry(request))
            return kmock.Response(status=201, payload=stored)
        check_version(res, old, cfg)
        new = reapply(old, effective, applied, manager, sub)
        stored = self._write(
            res, info, key, old, new, manager=manager, subresource=sub, applied=applied, dry_run=_dry(request)
        )
        return kmock.Response(status=200, payload=stored)

    # ----------------------------------------------------------------- request parsing

    def _declared(self, request: kmock.Request, verb: str | None = None) -> tuple[kmock.resource, kmock.ResourceInfo]:
        res = request.resource
        if res is None or not res.plural or res not in self.resources:
            raise api_error(
                404,
                "NotFound",
                "the server could not find the requested resource "
                "(declare it: declare_resources(emulator, extra={'group/v1/plural': {...}}))",
            )
        info = self.resources[res]
        if verb is not None and info.verbs and verb not in info.verbs:  # e.g. a GET of subjectaccessreviews
            raise api_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        return res, info

    @staticmethod
    def _scope(info: kmock.ResourceInfo, namespace: str | None) -> str | None:
        return None if info.namespaced is False else namespace

    def _key(self, res: kmock.resource, info: kmock.ResourceInfo, request: kmock.Request) -> tuple[Any, ...]:
        return (res, self._scope(info, request.namespace), request.name)

    @staticmethod
    def _namespace(info: kmock.ResourceInfo, url_namespace: str | None, meta: dict[str, Any]) -> str | None:
        if info.namespaced is False:
            meta.pop("namespace", None)
            return None
        namespace = url_namespace or meta.get("namespace")
        if meta.get("namespace", namespace) != namespace:
            raise api_error(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        if namespace is None:
            raise api_error(400, "BadRequest", "a namespace is required for a namespaced resource")
        meta["namespace"] = namespace
        return namespace

    @staticmethod
    def _body(request: kmock.Request, kind: type = dict) -> Any:
        try:
            body = json.loads(request.body)
        except ValueError:
            try:
                body = yaml.safe_load(request.body) if "yaml" in content_type(request) else None
            except yaml.YAMLError:
                body = None
        if not isinstance(body, kind):
            raise api_error(400, "BadRequest", f"the request body must be a JSON/YAML {kind.__name__}")
        return body

    def _call_of(self, request: kmock.Request) -> ApiCall:
        return classify(request, self.resources)


# --------------------------------------------------------------------------- helpers

_NAMESPACES_PATH = re.compile(r"/api/v1/namespaces(/[^/]+)?(/status|/finalize)?/?")


def _is_replace(request: kmock.Request) -> bool:
    return request.method.value == "PUT" and request.resource is not None and request.name is not None


def _is_delete_collection(request: kmock.Request) -> bool:
    return request.method.value == "DELETE" and request.resource is not None and request.name is None


def _event(change: Change, scope: tuple[Any, ...]) -> dict[str, Any] | None:
    """The watch event a watcher with this scope sees for a change (selector transitions included)."""
    res, namespace, name, match = scope
    meta = change.obj["metadata"]
    if change.resource != res or (namespace is not None and meta.get("namespace") != namespace):
        return None
    if name is not None and meta.get("name") != name:
        return None
    now = match(change.obj)
    if change.type == "MODIFIED" and change.old is not None:
        before = match(change.old)
        kind = "MODIFIED" if now and before else "ADDED" if now else "DELETED" if before else None
    else:
        kind = change.type if now else None
    return {"type": kind, "object": change.obj} if kind else None


def _subresource(request: kmock.Request, info: kmock.ResourceInfo, res: kmock.resource) -> str | None:
    if request.subresource is None or (request.subresource == "status" and "status" in info.subresources):
        return request.subresource
    raise not_found(res)


def _manager(request: kmock.Request) -> str:
    """The field manager of a non-apply write: the parameter, or the user agent's product name."""
    return request.params.get("fieldManager") or header(request, "user-agent").split("/")[0] or "unknown"


def _dry(request: kmock.Request) -> bool:
    return request.params.get("dryRun") == "All"


def _page(
    items: list[dict[str, Any]], meta: dict[str, Any], limit: str | None, token: str | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One page of a list (``limit``, ``continue``), as the API server pages: by key, with a token to go on."""

    def key(obj: dict[str, Any]) -> tuple[str, str]:
        return (obj["metadata"].get("namespace") or "", obj["metadata"]["name"])

    try:
        size = int(limit) if limit else 0
        if size < 0:
            raise ValueError(limit)
    except (ValueError, TypeError) as exc:
        raise api_error(400, "BadRequest", f"invalid limit: {exc}") from None
    try:
        after = json.loads(base64.urlsafe_b64decode(token.encode())) if token else None
        if after is not None and not {"rv", "ns", "name"} <= set(after):
            raise ValueError("continue key is not valid")
    except (ValueError, TypeError) as exc:
        raise api_error(400, "BadRequest", f"invalid continue token: {exc}") from None
    items = sorted(items, key=key)
    if after is not None:
        meta = {"resourceVersion": after["rv"]}
        start = (after["ns"], after["name"])
        items = [obj for obj in items if key(obj) > start]
    if size and len(items) > size:
        last = key(items[size - 1])
        state = {"rv": meta["resourceVersion"], "ns": last[0], "name": last[1]}
        meta = {
            **meta,
            "continue": base64.urlsafe_b64encode(json.dumps(state).encode()).decode(),
            "remainingItemCount": len(items) - size,
        }
        items = items[:size]
    return items, meta
