"""A Kubernetes API emulator for wire tests: kmock's KubernetesEmulator, made stricter.

kmock stores objects as plain JSON and merges every write into them. Our operator
relies on the parts of the API server that go beyond that, so :class:`Emulator`
replaces the write path (kmock's documented extension point: "inherit and
implement") and keeps kmock's discovery, object store (``emulator.objects``),
request log and reaction DSL. What it adds:

* server-side apply (``application/apply-patch+yaml`` + ``fieldManager``):
  create-or-merge, ``metadata.managedFields`` in the real ``FieldsV1`` format,
  and removal of fields a manager applied before but omits now;
* merge patch (RFC 7386, ``null`` deletes), JSON patch (``test`` failures are 422),
  strategic merge patch for built-in types only (415 for custom resources, as
  the real server does), PUT;
* the ``status`` subresource: writes to the main resource keep the old status,
  writes to ``/status`` change only the status, creates drop the status;
* ``resourceVersion`` from one global counter, ``generation``, ``uid``,
  ``creationTimestamp``; stale ``resourceVersion`` -> 409 Conflict; no-op
  writes change nothing (no new version, no watch event);
* label and field selectors on list, watch and deletecollection; watches that
  resume from a ``resourceVersion`` and turn selector transitions into
  ADDED/DELETED as the real server does;
* deletion with finalizers and owner-reference garbage collection (background
  propagation, done at once);
* Kubernetes ``Status`` error bodies with the real reasons (NotFound,
  AlreadyExists, Conflict, Invalid, BadRequest, UnsupportedMediaType).

Deliberate differences from a real server, kept for test speed and simplicity:

* Apply conflicts between managers are not detected: every apply behaves as if
  ``force=true`` and takes ownership of the fields whose value it changes.
* Lists are merged by key only where the key is evident from the field:
  items with ``name`` (env, containers, volumes, ...), ``volumeMounts`` by
  ``mountPath``, ports by port and protocol, ``conditions`` by ``type``,
  ``ownerReferences`` by ``uid``; ``finalizers`` are a set. Every other list is
  atomic (replaced as a whole). CRD ``x-kubernetes-list-type`` markers are not read.
* No schema validation, defaulting, admission, RBAC, namespaces lifecycle
  (objects may be created in namespaces that do not exist), pagination.
* Writes happen in kmock's fallback reactions, so a test reaction that answers
  a write (``kube['patch'] << 500``) also prevents the write, like a failing
  server would. (Plain kmock stores the write even when a reaction answers it.)
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import json
import random
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import attrs
import jsonpatch
import kmock
import yaml

Path = tuple[str, ...]  # one FieldsV1 key per level: 'f:spec', 'k:{"name":"x"}', 'v:"fin"'

READ_VERBS = frozenset({"get", "list", "watch"})
WRITE_VERBS = frozenset({"create", "update", "patch", "apply", "delete", "deletecollection"})
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"

# Metadata that the server owns; never part of a field set, never taken from a write.
_SYSTEM_META = ("name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink")
_KEYS_BY_FIELD = {"volumeMounts": ("mountPath",), "volumeDevices": ("devicePath",),
                  "ownerReferences": ("uid",), "conditions": ("type",), "hostAliases": ("ip",)}
_SET = ("<set>",)
_ITEM = object()  # the value of an "item exists" path in a flattened object
_MISSING = object()


# --------------------------------------------------------------------------- errors


def api_error(code: int, reason: str, message: str, **details: Any) -> kmock.KubernetesError:
    """A Kubernetes ``Status`` failure; kmock renders it as the response body."""
    return kmock.KubernetesError(status=code, reason=reason, message=message, details=details or {"causes": []})


def _not_found(res: kmock.resource, name: str | None = None) -> kmock.KubernetesError:
    what = f"{res.plural}.{res.group}".rstrip(".")
    if name is None:
        return api_error(404, "NotFound", "the server could not find the requested resource")
    return api_error(404, "NotFound", f'{what} "{name}" not found', name=name, group=res.group, kind=res.plural)


# --------------------------------------------------------------------------- field sets (SSA)


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _list_keys(field: str, items: list[Any]) -> tuple[str, ...] | None:
    """How the list at ``field`` merges: key fields, ``_SET`` for a set of scalars, None if atomic."""
    if not items:
        return None
    if field == "finalizers" and all(isinstance(item, str) for item in items):
        return _SET
    if not all(isinstance(item, dict) for item in items):
        return None
    candidates = [_KEYS_BY_FIELD[field]] if field in _KEYS_BY_FIELD else []
    if field == "ports":
        candidates += [("containerPort", "protocol"), ("port", "protocol")]
    candidates.append(("name",))
    for keys in candidates:
        if all(key in item for item in items for key in keys if key != "protocol"):
            seen = {_item_key(item, keys) for item in items}
            return keys if len(seen) == len(items) else None  # duplicate keys: atomic
    return None


def _item_key(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    return "k:" + _dump({key: item.get(key, "TCP" if key == "protocol" else None) for key in keys})


def flatten(obj: Mapping[str, Any]) -> dict[Path, Any]:
    """Map every owned-able field path of an object to its value (``_ITEM`` for list items)."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata" and isinstance(value, Mapping):
            for mkey, mvalue in value.items():
                if mkey not in _SYSTEM_META:
                    _flatten(mvalue, ("f:metadata", f"f:{mkey}"), mkey, out)
        else:
            _flatten(value, (f"f:{key}",), key, out)
    return out


def _flatten(value: Any, path: Path, field: str, out: dict[Path, Any]) -> None:
    if value is None:
        return
    if isinstance(value, Mapping):
        if not value:
            out[path] = {}
        for key, sub in value.items():
            _flatten(sub, path + (f"f:{key}",), key, out)
        return
    keys = _list_keys(field, value) if isinstance(value, list) else None
    if keys is None:
        out[path] = value
    elif keys is _SET:
        for item in value:
            out[path + (f"v:{_dump(item)}",)] = item
    else:
        for item in value:
            item_path = path + (_item_key(item, keys),)
            out[item_path] = _ITEM
            for key, sub in item.items():
                _flatten(sub, item_path + (f"f:{key}",), key, out)


def merge_applied(live: Any, applied: Any, field: str = "") -> Any:
    """Merge an apply configuration into the live value (no removals; see :func:`remove_path`)."""
    if isinstance(applied, Mapping):
        base = dict(live) if isinstance(live, Mapping) else {}
        for key, value in applied.items():
            if value is not None:
                base[key] = merge_applied(base.get(key), value, key)
        return base
    if isinstance(applied, list):
        keys = _list_keys(field, applied)
        if keys is None or not isinstance(live, list) or _list_keys(field, live) != keys:
            return [merge_applied(None, item) for item in applied]
        if keys is _SET:
            return list(applied) + [item for item in live if item not in applied]
        by_key = {_item_key(item, keys): item for item in live}
        merged = [merge_applied(by_key.get(_item_key(item, keys)), item) for item in applied]
        applied_keys = {_item_key(item, keys) for item in applied}
        return merged + [item for item in live if _item_key(item, keys) not in applied_keys]
    return applied


def _child(node: Any, segment: str) -> Any:
    kind, _, rest = segment.partition(":")
    if kind == "f" and isinstance(node, Mapping):
        return node.get(rest)
    if kind == "k" and isinstance(node, list):
        wanted = json.loads(rest)
        for item in node:
            if isinstance(item, Mapping) and _item_key(item, tuple(wanted)) == segment:
                return item
    return None


def _drop(node: Any, segment: str) -> None:
    kind, _, rest = segment.partition(":")
    if kind == "f" and isinstance(node, dict):
        node.pop(rest, None)
    elif kind == "k" and isinstance(node, list):
        node[:] = [item for item in node if _child([item], segment) is None]
    elif kind == "v" and isinstance(node, list):
        value = json.loads(rest)
        node[:] = [item for item in node if item != value]


def remove_path(obj: dict[str, Any], path: Path) -> None:
    """Remove one field or list item in place; prune maps and lists left empty (below the top level)."""
    chain: list[tuple[Any, str]] = []
    node: Any = obj
    for segment in path[:-1]:
        chain.append((node, segment))
        node = _child(node, segment)
        if node is None:
            return
    _drop(node, path[-1])
    for parent, segment in reversed(chain[1:]):
        child = _child(parent, segment)
        if not (segment.startswith("f:") and isinstance(child, dict | list) and not child):
            break
        _drop(parent, segment)


def fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Render a field set as ``fieldsV1`` (``.`` marks a node that is owned itself)."""
    tree: dict[str, Any] = {}
    nodes: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(paths):
        node = tree
        for segment in path:
            node = node.setdefault(segment, {})
        nodes.append((path, node))
    for path, node in nodes:
        if node or path[-1].startswith("k:"):
            node["."] = {}
    return tree


def paths_of(tree: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    """Parse ``fieldsV1`` back into a field set."""
    out: set[Path] = set()
    for key, sub in tree.items():
        if key == ".":
            out.add(prefix)
        elif not sub:
            out.add(prefix + (key,))
        else:
            out |= paths_of(sub, prefix + (key,))
    return out


def _key_fields(path: Path) -> bool:
    """Is this the key field of a keyed list item (removed only with the item)?"""
    if len(path) < 2 or not path[-2].startswith("k:") or not path[-1].startswith("f:"):
        return False
    return path[-1][2:] in json.loads(path[-2][2:])


# --------------------------------------------------------------------------- patches


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: maps merge, ``null`` deletes, everything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge patch, simplified: merge patch plus keyed merging of lists."""
    if isinstance(patch, Mapping):
        result = dict(target) if isinstance(target, Mapping) else {}
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = strategic_merge_patch(result.get(key), value, key)
        return result
    if isinstance(patch, list) and isinstance(target, list):
        keys = _list_keys(field, patch)
        if keys not in (None, _SET) and _list_keys(field, target) == keys:
            patched = {_item_key(item, keys): item for item in patch}
            merged = [strategic_merge_patch(item, patched.pop(_item_key(item, keys)))
                      if _item_key(item, keys) in patched else item for item in target]
            return merged + list(patched.values())
    return copy.deepcopy(patch)


# --------------------------------------------------------------------------- selectors

_SET_REQ = re.compile(r"^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$")
_EQ_REQ = re.compile(r"^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$")
_EXISTS_REQ = re.compile(r"^(!?)\s*([^\s!=(),]+)$")

Matcher = Callable[[Mapping[str, Any]], bool]


def _split_requirements(selector: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return [part for part in parts if part]


def label_selector(selector: str) -> Matcher:
    """Compile a label selector: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``."""
    checks: list[Callable[[Mapping[str, str]], bool]] = []
    for req in _split_requirements(selector):
        if m := _SET_REQ.match(req):
            key, op, values = m[1], m[2], {v.strip() for v in m[3].split(",") if v.strip()}
            if op == "in":
                checks.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                checks.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif m := _EQ_REQ.match(req):
            key, op, value = m[1], m[2], m[3]
            if op == "!=":
                checks.append(lambda labels, k=key, v=value: labels.get(k) != v)
            else:
                checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif m := _EXISTS_REQ.match(req):
            negate, key = bool(m[1]), m[2]
            checks.append(lambda labels, k=key, n=negate: (k in labels) != n)
        else:
            raise api_error(400, "BadRequest", f"unable to parse requirement: {req!r}")
    return lambda obj: all(check((obj.get("metadata") or {}).get("labels") or {}) for check in checks)


def field_selector(selector: str) -> Matcher:
    """Compile a field selector: ``path.to.field=value``, ``==``, ``!=`` (any dotted path)."""
    checks: list[Matcher] = []
    for req in _split_requirements(selector):
        m = _EQ_REQ.match(req)
        if not m:
            raise api_error(400, "BadRequest", f"invalid field selector: {req!r}")
        path, op, value = m[1].split("."), m[2], m[3]
        checks.append(lambda obj, p=path, neg=(op == "!="), v=value: (_field_str(obj, p) == v) != neg)
    return lambda obj: all(check(obj) for check in checks)


def _field_str(obj: Any, path: list[str]) -> str:
    for part in path:
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return "" if obj is None else str(obj).lower() if isinstance(obj, bool) else str(obj)


def request_matcher(params: Mapping[str, str]) -> Matcher:
    """The ``labelSelector`` and ``fieldSelector`` of a request, as one predicate."""
    checks = []
    if params.get("labelSelector"):
        checks.append(label_selector(params["labelSelector"]))
    if params.get("fieldSelector"):
        checks.append(field_selector(params["fieldSelector"]))
    return lambda obj: all(check(obj) for check in checks)


# --------------------------------------------------------------------------- the emulator


@attrs.frozen
class ApiCall:
    """One request to the emulator, classified like a Kubernetes audit log entry."""

    verb: str  # get list watch create update patch apply delete deletecollection, or discovery/other
    resource: str | None  # 'v1/pods', 'aim.eai.amd.com/v1alpha1/aimservices'
    namespace: str | None
    name: str | None
    subresource: str | None
    field_manager: str | None
    user_agent: str


@attrs.frozen
class _Change:
    rv: int
    resource: kmock.resource
    type: str
    obj: dict[str, Any]
    old: dict[str, Any] | None


@attrs.define(kw_only=True)
class Emulator(kmock.KubernetesEmulator):
    """kmock's KubernetesEmulator with API-server write semantics (see the module docstring).

    Enter it like any kmock handler: ``async with Emulator() as k, kmock.Server(k): ...``.
    """

    gc: bool = True  # delete dependents whose owners are all gone
    custom_resources: set[kmock.resource] = attrs.field(factory=set, init=False)  # declared from CRDs
    logs: dict[tuple[str, str], str] = attrs.field(factory=dict, init=False)  # (ns, pod) -> pods/log
    _rv: int = attrs.field(default=0, init=False)
    _changes: list[_Change] = attrs.field(factory=list, init=False)
    _watchers: set[asyncio.Queue[_Change]] = attrs.field(factory=set, init=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.fallback[_is_replace] << self._serve_replace
        self.fallback[_is_delete_collection] << self._serve_delete_collection

    async def __call__(self, raw_request: Any) -> Any:
        # kmock's path parser cannot read the namespaces resource itself (it takes the name for a
        # namespace). Serve those URLs via a twin path it parses: /api/v1/namespaces/-/namespaces/...
        # The scope is then dropped because namespaces are cluster-scoped. Logged URLs show the twin.
        if m := _NAMESPACES_PATH.fullmatch(raw_request.path):
            twin = f"/api/v1/namespaces/-/namespaces{m[1] or ''}{m[2] or ''}"
            query = f"?{raw_request.query_string}" if raw_request.query_string else ""
            raw_request = raw_request.clone(rel_url=twin + query)
        return await super().__call__(raw_request)

    async def _handle(self, request: kmock.Request) -> Any:
        # Skip KubernetesEmulator._handle, which stores every write before the reactions run:
        # here the writes happen in the fallbacks below, with the API server's semantics.
        return await super(kmock.KubernetesEmulator, self)._handle(request)

    # ----------------------------------------------------------------- test helpers

    def resolve(self, resource: str | kmock.resource) -> kmock.resource:
        """Find a declared resource by key ('v1/pods'), plural, kind, singular or short name."""
        parsed = kmock.resource(resource)
        if parsed.group is not None and parsed.version is not None and parsed.plural:
            return parsed
        wanted = (parsed.plural or "").lower()
        found = [res for res, info in self.resources.items()
                 if (parsed.group is None or parsed.group == res.group)
                 and wanted in {res.plural, (info.kind or "").lower(), info.singular, *info.shortnames}]
        core = [res for res in found if res.group == ""]
        if len(found) == 1 or len(core) == 1:
            return found[0] if len(found) == 1 else core[0]
        raise LookupError(f"{resource!r} matches {len(found)} declared resources: {found!r}")

    def put_object(self, body: Mapping[str, Any], *, resource: str | kmock.resource | None = None) -> dict[str, Any]:
        """Store an object as is (status included), with uid and resourceVersion; watchers see it."""
        obj = copy.deepcopy(dict(body))
        res = self.resolve(resource) if resource is not None else self._resource_of(obj)
        info = self._info(res)
        meta = obj.setdefault("metadata", {})
        obj.setdefault("apiVersion", _api_version(res))
        obj.setdefault("kind", info.kind)
        if not self.namespaced(res):
            meta.pop("namespace", None)
        key = (res, meta.get("namespace"), meta["name"])
        old = self._live(key)
        old_meta = (old or {}).get("metadata", {})
        meta.setdefault("uid", old_meta.get("uid") or str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", old_meta.get("creationTimestamp") or _now())
        meta.setdefault("generation", old_meta.get("generation", 1))
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        self._store(key, obj)
        self._publish(res, "ADDED" if old is None else "MODIFIED", obj, old)
        return copy.deepcopy(obj)

    def get_object(self, resource: str | kmock.resource, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The current state of one object, or None if it does not exist (now)."""
        res = self.resolve(resource)
        live = self._live((res, namespace if self.namespaced(res) else None, name))
        return copy.deepcopy(live) if live is not None else None

    def list_objects(self, resource: str | kmock.resource, namespace: str | None = None, *,
                     label_selector: str | None = None) -> list[dict[str, Any]]:
        """Current objects of a resource, sorted by namespace and name."""
        res = self.resolve(resource)
        match = request_matcher({"labelSelector": label_selector or ""})
        return [copy.deepcopy(obj) for obj in self._live_objects(res, namespace) if match(obj)]

    def events_for(self, name: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Events (core v1 and events.k8s.io) about the named object, oldest first."""
        events = []
        for res in self.resources:
            if res.plural == "events" and res.group in ("", "events.k8s.io"):
                for event in self._live_objects(res, namespace):
                    about = event.get("involvedObject") or event.get("regarding") or {}
                    if about.get("name") == name:
                        events.append(copy.deepcopy(event))
        return sorted(events, key=lambda e: int(e["metadata"]["resourceVersion"]))

    @property
    def calls(self) -> list[ApiCall]:
        """Every request served so far, classified by verb (discovery requests included)."""
        return [self._call_of(request) for request in self._requests]

    def count(self, *verbs: str, resource: str | None = None, agent: str | None = None, since: int = 0) -> int:
        """Count API calls from index ``since`` by verb (all if none; "read"/"write" for the groups),
        resource key or plural, and user-agent prefix (e.g. "kopf")."""
        wanted = set().union(*({"read": READ_VERBS, "write": WRITE_VERBS}.get(v, {v}) for v in verbs))
        plural = resource.rsplit("/", 1)[-1] if resource else None
        return sum(1 for call in self.calls[since:]
                   if (not wanted or call.verb in wanted)
                   and (agent is None or call.user_agent.startswith(agent))
                   and (resource is None or call.resource == resource
                        or (call.resource or "").rsplit("/", 1)[-1] == plural and "/" not in resource))

    # ----------------------------------------------------------------- reads

    async def _serve_list(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        match = request_matcher(request.params)
        items = [obj for obj in self._live_objects(res, self._scope(info, request.namespace)) if match(obj)]
        return {"apiVersion": _api_version(res), "kind": f"{info.kind}List",
                "metadata": {"resourceVersion": str(self._rv)}, "items": items}

    async def _serve_fetch(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        key = self._key(res, info, request)
        obj = self._live(key)
        if obj is None:
            raise _not_found(res, request.name)
        if request.subresource == "log" and "log" in info.subresources:
            return self.logs.get((key[1] or "", key[2]), "").encode()
        if request.subresource not in (None, "status") or (request.subresource and "status" not in info.subresources):
            raise _not_found(res)
        return obj

    async def _serve_watch(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        since = request.params.get("resourceVersion") or "0"
        if not since.isdigit():
            raise api_error(400, "BadRequest", f"invalid resourceVersion: {since!r}")
        match = request_matcher(request.params)
        timeout = float(request.params.get("timeoutSeconds") or 0) or None
        scope = (res, self._scope(info, request.namespace), request.name, match)
        bookmark = request.params.get("sendInitialEvents") == "true"
        return self._watch_stream(scope, int(since), bookmark, timeout, info)

    async def _watch_stream(self, scope: tuple[Any, ...], since: int, bookmark: bool, timeout: float | None,
                      info: kmock.ResourceInfo) -> AsyncIterator[Any]:
        res, namespace, name, match = scope
        # Snapshot and subscribe with no await in between, so that no change is lost or doubled.
        if since == 0:
            backlog = [{"type": "ADDED", "object": obj} for obj in self._live_objects(res, namespace)
                       if (name is None or obj["metadata"]["name"] == name) and match(obj)]
            if bookmark:
                backlog.append({"type": "BOOKMARK", "object": {
                    "apiVersion": _api_version(res), "kind": info.kind, "metadata": {
                        "resourceVersion": str(self._rv), "annotations": {"k8s.io/initial-events-end": "true"}}}})
        else:
            backlog = [event for change in self._changes if change.rv > since
                       if (event := _event(change, scope)) is not None]
        queue: asyncio.Queue[_Change] = asyncio.Queue()
        self._watchers.add(queue)
        try:
            yield b""  # send the headers now, even if nothing happens
            for event in backlog:
                yield event
            loop = asyncio.get_running_loop()
            deadline = None if timeout is None else loop.time() + timeout
            while True:
                try:
                    remaining = None if deadline is None else max(0.0, deadline - loop.time())
                    change = await asyncio.wait_for(queue.get(), remaining)
                except TimeoutError:
                    return
                if (event := _event(change, scope)) is not None:
                    yield event
        finally:
            self._watchers.discard(queue)

    # ----------------------------------------------------------------- writes

    async def _serve_create(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        obj = self._body(request)
        meta = obj.setdefault("metadata", {})
        namespace = self._namespace(info, request.namespace, meta)
        name = meta.get("name") or (meta.get("generateName") and meta["generateName"] + _suffix())
        if not name:
            raise api_error(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        key = (res, namespace, name)
        if self._live(key) is not None:
            raise api_error(409, "AlreadyExists", f'{_what(res)} "{name}" already exists', name=name)
        obj.update(apiVersion=_api_version(res), kind=info.kind or obj.get("kind"))
        meta["name"] = name
        if "status" in info.subresources:
            obj.pop("status", None)
        stored = self._write(res, info, key, None, obj, manager=_manager(request), dry_run=_dry(request))
        return kmock.Response(status=201, payload=stored)

    async def _serve_update(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        sub = _subresource(request, info, res)
        ctype = _content_type(request)
        if ctype == APPLY:
            return self._apply(request, res, info, sub)
        key = self._key(res, info, request)
        old = self._live(key)
        if old is None:
            raise _not_found(res, request.name)
        patch, base = self._body(request, kind=list if ctype == JSON_PATCH else dict), copy.deepcopy(old)
        if ctype == MERGE:
            new = merge_patch(base, patch)
        elif ctype == JSON_PATCH:
            try:
                new = jsonpatch.apply_patch(base, patch)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                raise api_error(422, "Invalid", f"the JSON patch cannot be applied: {e}") from None
        elif ctype == STRATEGIC and res not in self.custom_resources:
            new = strategic_merge_patch(base, patch)
        else:
            raise api_error(415, "UnsupportedMediaType", f"the body of the request was in an unknown format "
                            f"- accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}")
        _check_version(res, old, new)
        stored = self._write(res, info, key, old, new, manager=_manager(request), subresource=sub,
                             dry_run=_dry(request))
        return kmock.Response(status=200, payload=stored)

    async def _serve_replace(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        sub = _subresource(request, info, res)
        key = self._key(res, info, request)
        old = self._live(key)
        if old is None:
            raise _not_found(res, request.name)
        new = self._body(request)
        meta = new.get("metadata") or {}
        if meta.get("name", request.name) != request.name:
            raise api_error(400, "BadRequest", "the name of the object does not match the name on the URL")
        if meta.get("resourceVersion") is None and res in self.custom_resources:
            raise api_error(422, "Invalid", "metadata.resourceVersion: Invalid value: 0x0: "
                            "must be specified for an update")
        _check_version(res, old, new)
        stored = self._write(res, info, key, old, new, manager=_manager(request), subresource=sub,
                             dry_run=_dry(request))
        return kmock.Response(status=200, payload=stored)

    async def _serve_delete(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        key = self._key(res, info, request)
        last = self._delete(res, info, key, dry_run=_dry(request))
        if last["metadata"].get("deletionTimestamp") or res not in self.custom_resources:
            return kmock.Response(status=200, payload=last)
        return kmock.Response(status=200, payload={
            "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Success",
            "details": {"name": key[2], "group": res.group, "kind": res.plural, "uid": last["metadata"]["uid"]}})

    async def _serve_delete_collection(self, request: kmock.Request) -> Any:
        res, info = self._declared(request)
        match = request_matcher(request.params)
        items = [self._delete(res, info, (res, obj["metadata"].get("namespace"), obj["metadata"]["name"]),
                              dry_run=_dry(request))
                 for obj in self._live_objects(res, self._scope(info, request.namespace)) if match(obj)]
        return kmock.Response(status=200, payload={
            "apiVersion": _api_version(res), "kind": f"{info.kind}List",
            "metadata": {"resourceVersion": str(self._rv)}, "items": items})

    def _apply(self, request: kmock.Request, res: kmock.resource, info: kmock.ResourceInfo,
               sub: str | None) -> kmock.Response:
        manager = request.params.get("fieldManager")
        if not manager:
            raise api_error(400, "BadRequest", "PATCH, application/apply-patch+yaml requires fieldManager")
        cfg = self._body(request)
        if cfg.get("apiVersion") != _api_version(res) or not cfg.get("kind"):
            raise api_error(400, "BadRequest", f"apply configurations need kind and apiVersion {_api_version(res)!r}")
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
                raise _not_found(res, request.name)
            new = merge_applied({"metadata": {"name": key[2]}}, effective)
            new["metadata"].pop("resourceVersion", None)
            if key[1] is not None:
                new["metadata"]["namespace"] = key[1]
            stored = self._write(res, info, key, None, new, manager=manager, applied=applied, dry_run=_dry(request))
            return kmock.Response(status=201, payload=stored)
        _check_version(res, old, cfg)
        owners = _owners(old)
        previous = owners.pop((manager, "Apply", sub or ""), set())
        others = set().union(*owners.values())
        new = copy.deepcopy(old)
        for path in sorted(previous - applied.keys(), key=len, reverse=True):
            shared = path in others or (path[-1].startswith("k:") and any(p[:len(path)] == path for p in others))
            if not shared and not _key_fields(path):
                remove_path(new, path)
        new = merge_applied(new, effective)
        stored = self._write(res, info, key, old, new, manager=manager, subresource=sub, applied=applied,
                             dry_run=_dry(request))
        return kmock.Response(status=200, payload=stored)

    # ----------------------------------------------------------------- storage

    def _write(self, res: kmock.resource, info: kmock.ResourceInfo, key: tuple[Any, ...],
               old: dict[str, Any] | None, new: dict[str, Any], *, manager: str, subresource: str | None = None,
               applied: dict[Path, Any] | None = None, dry_run: bool = False, internal: bool = False) -> dict[str, Any]:
        """Store a new state the way the API server would; return what a client gets back."""
        status_apart = "status" in info.subresources
        if old is None:
            meta = new.setdefault("metadata", {})
            for field in _SYSTEM_META[2:]:
                meta.pop(field, None)
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=_now(), generation=1)
            if key[1] is None:
                meta.pop("namespace", None)
        else:
            if not internal:
                new = _keep_system_fields(old, new, subresource, status_apart)
            meta = new["metadata"]
            deleting = meta.get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp")
            if deleting or _spec(old, status_apart) != _spec(new, status_apart):
                meta["generation"] = old["metadata"].get("generation", 1) + 1
        if not internal:
            meta["managedFields"] = _track(old, new, manager, subresource, applied)
            if not meta["managedFields"]:
                del meta["managedFields"]
        if old is not None and _comparable(old) == _comparable(new):
            return old  # a no-op: no new resourceVersion, no watch event
        if dry_run:
            return new
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        self._store(key, new)
        self._publish(res, "ADDED" if old is None else "MODIFIED", new, old)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._erase(res, key, new)
        return new

    def _delete(self, res: kmock.resource, info: kmock.ResourceInfo, key: tuple[Any, ...],
                dry_run: bool = False) -> dict[str, Any]:
        old = self._live(key)
        if old is None:
            raise _not_found(res, key[2])
        if dry_run or old["metadata"].get("deletionTimestamp"):
            return old
        if old["metadata"].get("finalizers"):
            new = copy.deepcopy(old)
            new["metadata"].update(deletionTimestamp=_now(), deletionGracePeriodSeconds=0)
            return self._write(res, info, key, old, new, manager="", internal=True)
        return self._erase(res, key, old)

    def _erase(self, res: kmock.resource, key: tuple[Any, ...], last: dict[str, Any]) -> dict[str, Any]:
        self._rv += 1
        gone = dict(last, metadata=dict(last["metadata"], resourceVersion=str(self._rv)))
        self._objects[key].delete()
        self._publish(res, "DELETED", gone, last)
        if self.gc:
            self._collect(gone["metadata"]["uid"])
        return gone

    def _collect(self, uid: str) -> None:
        """Background propagation, done at once: delete dependents that have no live owner left."""
        live = {obj["metadata"].get("uid") for _, obj in self._all_live()}
        for key, obj in self._all_live():
            refs = obj["metadata"].get("ownerReferences") or []
            if any(ref.get("uid") == uid for ref in refs) and not any(ref.get("uid") in live for ref in refs):
                if self._live(key) is not None:
                    self._delete(key[0], self._info(key[0]), key)

    def _store(self, key: tuple[Any, ...], obj: dict[str, Any]) -> None:
        if key in self._objects:
            self._objects[key].history.append(obj)
        else:
            self._objects[key] = obj

    def _live(self, key: tuple[Any, ...]) -> dict[str, Any] | None:
        if key in self._objects and not (obj := self._objects[key]).deleted:
            return obj.raw
        return None

    def _all_live(self) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
        for key, obj in list(self._objects.items()):
            if not obj.deleted:
                yield key, obj.raw

    def _live_objects(self, res: kmock.resource, namespace: str | None) -> list[dict[str, Any]]:
        found = [(key, obj) for key, obj in self._all_live()
                 if key[0] == res and (namespace is None or key[1] == namespace)]
        return [obj for _, obj in sorted(found, key=lambda item: (item[0][1] or "", item[0][2]))]

    def _publish(self, res: kmock.resource, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        change = _Change(self._rv, res, kind, obj, old)
        self._changes.append(change)
        for queue in self._watchers:
            queue.put_nowait(change)

    # ----------------------------------------------------------------- request parsing

    def _declared(self, request: kmock.Request) -> tuple[kmock.resource, kmock.ResourceInfo]:
        res = request.resource
        if res is None or not res.plural or res not in self.resources:
            raise api_error(404, "NotFound", "the server could not find the requested resource "
                            "(declare it: declare_resources(emulator, extra={'group/v1/plural': {...}}))")
        return res, self.resources[res]

    def _info(self, res: kmock.resource) -> kmock.ResourceInfo:
        return self.resources[res] if res in self.resources else kmock.ResourceInfo()  # no auto-creation

    def namespaced(self, resource: str | kmock.resource) -> bool:
        """Whether objects of this resource live in namespaces (False only if declared cluster-scoped)."""
        return self._info(self.resolve(resource)).namespaced is not False

    def _resource_of(self, obj: Mapping[str, Any]) -> kmock.resource:
        for res, info in self.resources.items():
            if info.kind == obj.get("kind") and _api_version(res) == obj.get("apiVersion"):
                return res
        raise LookupError(f"No declared resource for apiVersion={obj.get('apiVersion')!r} kind={obj.get('kind')!r}")

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
            raise api_error(400, "BadRequest", "the namespace of the provided object does not match "
                            "the namespace sent on the request")
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
                body = yaml.safe_load(request.body) if "yaml" in _content_type(request) else None
            except yaml.YAMLError:
                body = None
        if not isinstance(body, kind):
            raise api_error(400, "BadRequest", f"the request body must be a JSON/YAML {kind.__name__}")
        return body

    def _call_of(self, request: kmock.Request) -> ApiCall:
        res, method, params = request.resource, request.method.value, request.params
        if res is None or not res.plural or not res.version:
            verb = "discovery" if method == "GET" else "other"
        elif method == "GET":
            verb = "watch" if params.get("watch") in ("true", "1") else "get" if request.name else "list"
        elif method == "PATCH":
            verb = "apply" if _content_type(request) == APPLY else "patch"
        elif method == "DELETE":
            verb = "delete" if request.name else "deletecollection"
        else:
            verb = {"POST": "create", "PUT": "update"}.get(method, "other")
        known = res is not None and res in self.resources
        return ApiCall(verb=verb, resource=_res_key(res) if res is not None and res.plural else None,
                       namespace=self._scope(self.resources[res], request.namespace) if known else request.namespace,
                       name=request.name, subresource=request.subresource,
                       field_manager=params.get("fieldManager"), user_agent=_header(request, "user-agent"))


# --------------------------------------------------------------------------- helpers

_NAMESPACES_PATH = re.compile(r"/api/v1/namespaces(/[^/]+)?(/status|/finalize)?/?")


def _is_replace(request: kmock.Request) -> bool:
    return request.method.value == "PUT" and request.resource is not None and request.name is not None


def _is_delete_collection(request: kmock.Request) -> bool:
    return request.method.value == "DELETE" and request.resource is not None and request.name is None


def _event(change: _Change, scope: tuple[Any, ...]) -> dict[str, Any] | None:
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


def _owners(obj: Mapping[str, Any]) -> dict[tuple[str, str, str], set[Path]]:
    return {(e.get("manager", ""), e.get("operation", ""), e.get("subresource", "")): paths_of(e.get("fieldsV1") or {})
            for e in (obj.get("metadata") or {}).get("managedFields") or []}


def _track(old: Mapping[str, Any] | None, new: Mapping[str, Any], manager: str, subresource: str | None,
           applied: dict[Path, Any] | None) -> list[dict[str, Any]]:
    """New ``managedFields``: the writer owns what it applied or changed; others lose what it changed."""
    now = _now()
    entries = {key: {"paths": paths} for key, paths in _owners(old or {}).items()}
    for entry in (old or {}).get("metadata", {}).get("managedFields") or []:
        key = (entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", ""))
        entries[key].update(apiVersion=entry.get("apiVersion"), time=entry.get("time"))
    old_flat, new_flat = flatten(old) if old is not None else {}, flatten(new)
    mine = (manager, "Apply" if applied is not None else "Update", subresource or "")
    if applied is not None:
        taken = {path for path, value in applied.items() if old_flat.get(path, _MISSING) != value}
        entries[mine] = {"paths": set(applied), "time": now}
    else:
        taken = {path for path, value in new_flat.items() if old_flat.get(path, _MISSING) != value}
        if taken:
            entry = entries.setdefault(mine, {"paths": set()})
            entry.update(paths=entry["paths"] | taken, time=now)
    result = []
    for key, entry in entries.items():
        paths = (entry["paths"] if key == mine else entry["paths"] - taken) & new_flat.keys()
        if paths:
            result.append({"manager": key[0], "operation": key[1],
                           "apiVersion": entry.get("apiVersion") or new.get("apiVersion"),
                           "time": entry.get("time") or now, "fieldsType": "FieldsV1", "fieldsV1": fields_v1(paths),
                           **({"subresource": key[2]} if key[2] else {})})
    return result


def _keep_system_fields(old: dict[str, Any], new: dict[str, Any], subresource: str | None,
                        status_apart: bool) -> dict[str, Any]:
    """What a client cannot change: server metadata, and the status or all but the status."""
    if status_apart and subresource == "status":
        result = copy.deepcopy(old)
        result.pop("status", None)
        if new.get("status") is not None:
            result["status"] = new["status"]
        return result
    new.update(apiVersion=old.get("apiVersion"), kind=old.get("kind"))
    meta = new["metadata"] = dict(new.get("metadata") or {})
    for field in _SYSTEM_META:
        if field in old["metadata"]:
            meta[field] = old["metadata"][field]
        else:
            meta.pop(field, None)
    if status_apart:
        new.pop("status", None)
        if "status" in old:
            new["status"] = old["status"]
    return new


def _spec(obj: Mapping[str, Any], status_apart: bool) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")
            and not (status_apart and k == "status")}


def _comparable(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = dict(obj.get("metadata") or {})
    meta.pop("resourceVersion", None)
    meta["managedFields"] = [{k: v for k, v in e.items() if k != "time"} for e in meta.get("managedFields") or []]
    return dict(obj, metadata=meta)


def _check_version(res: kmock.resource, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    wanted = (new.get("metadata") or {}).get("resourceVersion") if isinstance(new, Mapping) else None
    if wanted is not None and wanted != old["metadata"]["resourceVersion"]:
        raise api_error(409, "Conflict", f'Operation cannot be fulfilled on {_what(res)} "{old["metadata"]["name"]}": '
                        "the object has been modified; please apply your changes to the latest version and try again",
                        name=old["metadata"]["name"], group=res.group, kind=res.plural)


def _subresource(request: kmock.Request, info: kmock.ResourceInfo, res: kmock.resource) -> str | None:
    if request.subresource is None or (request.subresource == "status" and "status" in info.subresources):
        return request.subresource
    raise _not_found(res)


def _header(request: kmock.Request, name: str) -> str:
    return next((v for k, v in request.headers.items() if k.lower() == name), "")


def _content_type(request: kmock.Request) -> str:
    return _header(request, "content-type").split(";")[0].strip().lower()


def _manager(request: kmock.Request) -> str:
    """The field manager of a non-apply write: the parameter, or the user agent's product name."""
    return request.params.get("fieldManager") or _header(request, "user-agent").split("/")[0] or "unknown"


def _dry(request: kmock.Request) -> bool:
    return request.params.get("dryRun") == "All"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _suffix() -> str:
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))


def _api_version(res: kmock.resource) -> str:
    return f"{res.group}/{res.version}" if res.group else str(res.version)


def _res_key(res: kmock.resource) -> str:
    return f"{_api_version(res)}/{res.plural}"


def _what(res: kmock.resource) -> str:
    return f"{res.plural}.{res.group}" if res.group else str(res.plural)


# --------------------------------------------------------------------------- declarations

_STATUS = ["status"]
BUILTIN_RESOURCES: dict[str, dict[str, Any]] = {
    "v1/namespaces": {"kind": "Namespace", "namespaced": False, "subresources": ["status", "finalize"]},
    "v1/events": {"kind": "Event", "namespaced": True},
    "events.k8s.io/v1/events": {"kind": "Event", "namespaced": True},
    "v1/pods": {"kind": "Pod", "namespaced": True, "subresources": ["status", "log"]},
    "v1/nodes": {"kind": "Node", "namespaced": False, "subresources": _STATUS},
    "v1/secrets": {"kind": "Secret", "namespaced": True},
    "v1/configmaps": {"kind": "ConfigMap", "namespaced": True},
    "v1/serviceaccounts": {"kind": "ServiceAccount", "namespaced": True},
    "v1/persistentvolumeclaims": {"kind": "PersistentVolumeClaim", "namespaced": True, "subresources": _STATUS},
    "v1/services": {"kind": "Service", "namespaced": True, "subresources": _STATUS},
    "apps/v1/deployments": {"kind": "Deployment", "namespaced": True, "subresources": ["status", "scale"]},
    "batch/v1/jobs": {"kind": "Job", "namespaced": True, "subresources": _STATUS},
    "coordination.k8s.io/v1/leases": {"kind": "Lease", "namespaced": True},
    "rbac.authorization.k8s.io/v1/rolebindings": {"kind": "RoleBinding", "namespaced": True},
    "autoscaling/v2/horizontalpodautoscalers": {"kind": "HorizontalPodAutoscaler", "namespaced": True,
                                                "subresources": _STATUS},
    "apiextensions.k8s.io/v1/customresourcedefinitions": {"kind": "CustomResourceDefinition",
                                                          "namespaced": False, "subresources": _STATUS},
}
# Served by CRDs in a real cluster: custom-resource rules apply (no strategic merge, PUT needs a version).
THIRD_PARTY_RESOURCES: dict[str, dict[str, Any]] = {
    "serving.kserve.io/v1beta1/inferenceservices": {"kind": "InferenceService", "namespaced": True,
                                                    "subresources": _STATUS},
    "serving.kserve.io/v1alpha1/servingruntimes": {"kind": "ServingRuntime", "namespaced": True},
    "serving.kserve.io/v1alpha1/clusterservingruntimes": {"kind": "ClusterServingRuntime", "namespaced": False},
    "gateway.networking.k8s.io/v1/httproutes": {"kind": "HTTPRoute", "namespaced": True, "subresources": _STATUS},
    "gateway.networking.k8s.io/v1/gateways": {"kind": "Gateway", "namespaced": True, "subresources": _STATUS},
    "gateway.networking.k8s.io/v1/gatewayclasses": {"kind": "GatewayClass", "namespaced": False,
                                                    "subresources": _STATUS},
    "keda.sh/v1alpha1/scaledobjects": {"kind": "ScaledObject", "namespaced": True, "subresources": _STATUS},
    "keda.sh/v1alpha1/triggerauthentications": {"kind": "TriggerAuthentication", "namespaced": True},
    "kopf.dev/v1/clusterkopfpeerings": {"kind": "ClusterKopfPeering", "namespaced": False},
    "kopf.dev/v1/kopfpeerings": {"kind": "KopfPeering", "namespaced": True},
}


def declare(emulator: Emulator, key: str, *, kind: str, namespaced: bool, subresources: Iterable[str] = (),
            custom: bool = False, verbs: Iterable[str] = ALL_VERBS, singular: str | None = None,
            shortnames: Iterable[str] = (), categories: Iterable[str] = ()) -> None:
    """Declare one resource for discovery and for the emulator's write rules."""
    emulator.resources[key] = kmock.ResourceInfo(
        kind=kind, namespaced=namespaced, singular=singular or kind.lower(), verbs=verbs,
        shortnames=shortnames, categories=categories, subresources=subresources)
    if custom:
        emulator.custom_resources.add(kmock.resource(key))


def declare_crd(emulator: Emulator, crd: Mapping[str, Any]) -> None:
    """Declare every served version of a CustomResourceDefinition (names, scope, subresources)."""
    spec, names = crd["spec"], crd["spec"]["names"]
    for version in spec.get("versions") or [{"name": spec["version"]}]:
        if version.get("served", True):
            declare(emulator, f"{spec['group']}/{version['name']}/{names['plural']}", kind=names["kind"],
                    namespaced=spec.get("scope", "Namespaced") == "Namespaced", custom=True,
                    subresources=(version.get("subresources") or spec.get("subresources") or {}).keys(),
                    singular=names.get("singular"), shortnames=names.get("shortNames") or (),
                    categories=names.get("categories") or ())


def declare_resources(emulator: Emulator, crds: Iterable[Mapping[str, Any]] | None = None,
                      extra: Mapping[str, Mapping[str, Any]] | None = None) -> Emulator:
    """Declare the built-in and third-party resources the operator uses, then ``crds``, then ``extra``.

    ``extra`` maps resource keys to :func:`declare` keyword arguments, e.g.
    ``{"example.com/v1/widgets": {"kind": "Widget", "namespaced": True, "subresources": ["status"]}}``.
    """
    for key, info in BUILTIN_RESOURCES.items():
        declare(emulator, key, **info)
    for key, info in THIRD_PARTY_RESOURCES.items():
        declare(emulator, key, custom=True, **info)
    for crd in crds or ():
        declare_crd(emulator, crd)
    for key, info in (extra or {}).items():
        declare(emulator, key, **info)
    return emulator
