"""Storage with the API server's bookkeeping, on kmock's object store (``emulator.objects``).

* the stored form: empty metadata maps and lists dropped, and for custom resources
  with a declared structural schema, unknown fields pruned and defaults applied
  (:mod:`~aim_testing.emulator.schemas`);
* ``resourceVersion`` from one global counter, ``generation``, ``uid``,
  ``creationTimestamp``; no-op writes change nothing (no new version, no watch event);
* every stored change is published to the watches (see :class:`Change`);
* deletion with finalizers and owner-reference garbage collection (background
  propagation, done at once);
* the namespace lifecycle: deleting a namespace makes it ``Terminating``, deletes
  everything in it (finalizers hold objects as usual) and removes it once empty,
  as kube-controller-manager's namespace controller does; creates in a terminating
  namespace are refused (403), Events included, and creates in a namespace that does
  not exist are refused (404 ``namespaces "x" not found``), as the NamespaceLifecycle
  admission does (``default`` and the ``kube-*`` namespaces always exist).

Also the test helpers that read and seed objects directly, without a request.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import attrs
import kmock

from aim_testing.emulator.errors import api_error, not_found
from aim_testing.emulator.fieldsets import Path, track
from aim_testing.emulator.immutable import check_immutable
from aim_testing.emulator.metadata import (
    SYSTEM_META,
    api_version,
    comparable,
    drop_empty_metadata,
    keep_system_fields,
    now,
    spec,
)
from aim_testing.emulator.schemas import prune_and_default
from aim_testing.emulator.selectors import request_matcher
from aim_testing.emulator.validation import check_object

_NAMESPACES = kmock.resource("v1/namespaces")
# The namespaces a cluster always has (kube-apiserver makes them at start): creates there need no Namespace object.
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


@attrs.frozen
class Change:
    """One stored change, as the watches see it (``old`` is the state before, if any)."""

    rv: int
    resource: kmock.resource
    type: str
    obj: dict[str, Any]
    old: dict[str, Any] | None


@attrs.define(kw_only=True)
class Storage(kmock.KubernetesEmulator):
    """kmock's KubernetesEmulator storing objects the way the API server does; serving is in the subclass."""

    gc: bool = True  # delete dependents whose owners are all gone
    namespace_controller: bool = True  # empty and then remove a namespace that is being deleted
    namespaces_required: bool = True  # refuse creates in a namespace that does not exist (404)
    schemas: dict[kmock.resource, dict[str, Any]] = attrs.field(factory=dict, init=False)  # structural, by resource
    history_limit: int | None = None  # changes kept for watches to resume from (None: all, until compact())
    bookmark_interval: float = 60.0  # seconds between BOOKMARKs on a quiet watch that allows them
    _rv: int = attrs.field(default=0, init=False)
    _changes: list[Change] = attrs.field(factory=list, init=False)
    _compacted: int = attrs.field(default=0, init=False)  # watches from a version below this get 410 Gone
    _watchers: set[asyncio.Queue[Change]] = attrs.field(factory=set, init=False)

    def __repr__(self) -> str:
        # Short on purpose: pytest's assertion rewriting shows the repr of whatever a failing assertion
        # touched (``kube.get`` is a bound method of the facade holding this), and a poll that fails
        # until it holds would otherwise format every stored change each time, seconds per test.
        return f"<{type(self).__name__} at rv {self._rv}, {len(self._changes)} changes kept>"

    # ----------------------------------------------------------------- test helpers

    def resolve(self, resource: str | kmock.resource) -> kmock.resource:
        """Find a declared resource by key ('v1/pods'), plural, kind, singular or short name."""
        parsed = kmock.resource(resource)
        if parsed.group is not None and parsed.version is not None and parsed.plural:
            return parsed
        wanted = (parsed.plural or "").lower()
        found = [
            res
            for res, info in self.resources.items()
            if (parsed.group is None or parsed.group == res.group)
            and wanted in {res.plural, (info.kind or "").lower(), info.singular, *info.shortnames}
        ]
        core = [res for res in found if res.group == ""]
        if len(found) == 1 or len(core) == 1:
            return found[0] if len(found) == 1 else core[0]
        raise LookupError(f"{resource!r} matches {len(found)} declared resources: {found!r}")

    def compact(self) -> None:
        """Forget the change history, as etcd compaction does: a watch resuming from an older
        ``resourceVersion`` is answered with 410 Gone and the client must list again."""
        self._changes.clear()
        self._compacted = self._rv

    def put_object(self, body: Mapping[str, Any], *, resource: str | kmock.resource | None = None) -> dict[str, Any]:
        """Store an object as is (status included), with uid and resourceVersion; watchers see it.

        Its namespace is made when it does not exist (as the real-server backend's seeding does).
        """
        obj = copy.deepcopy(dict(body))
        res = self.resolve(resource) if resource is not None else self._resource_of(obj)
        info = self._info(res)
        meta = obj.setdefault("metadata", {})
        obj.setdefault("apiVersion", api_version(res))
        obj.setdefault("kind", info.kind)
        drop_empty_metadata(obj)
        if not self.namespaced(res):
            meta.pop("namespace", None)
        elif meta.get("namespace") and not self._namespace_exists(meta["namespace"]):
            self.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["namespace"]}})
        key = (res, meta.get("namespace"), meta["name"])
        old = self._live(key)
        old_meta = (old or {}).get("metadata", {})
        meta.setdefault("uid", old_meta.get("uid") or str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", old_meta.get("creationTimestamp") or now())
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

    def list_objects(
        self, resource: str | kmock.resource, namespace: str | None = None, *, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
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

    def namespaced(self, resource: str | kmock.resource) -> bool:
        """Whether objects of this resource live in namespaces (False only if declared cluster-scoped)."""
        return self._info(self.resolve(resource)).namespaced is not False

    def _info(self, res: kmock.resource) -> kmock.ResourceInfo:
        return self.resources[res] if res in self.resources else kmock.ResourceInfo()  # no auto-creation

    def _resource_of(self, obj: Mapping[str, Any]) -> kmock.resource:
        for res, info in self.resources.items():
            if info.kind == obj.get("kind") and api_version(res) == obj.get("apiVersion"):
                return res
        raise LookupError(f"No declared resource for apiVersion={obj.get('apiVersion')!r} kind={obj.get('kind')!r}")

    # ----------------------------------------------------------------- storage

    def _write(
        self,
        res: kmock.resource,
        info: kmock.ResourceInfo,
        key: tuple[Any, ...],
        old: dict[str, Any] | None,
        new: dict[str, Any],
        *,
        manager: str,
        subresource: str | None = None,
        applied: dict[Path, Any] | None = None,
        dry_run: bool = False,
        internal: bool = False,
    ) -> dict[str, Any]:
        """Store a new state the way the API server would; return what a client gets back."""
        status_apart = "status" in info.subresources
        if not internal:
            new = self.stored_form(res, new)
        if old is None:
            if not internal:
                check_object(info.kind, res.group, new, self.schemas.get(res), creating=True)
            meta = new.setdefault("metadata", {})
            for field in SYSTEM_META[2:]:
                meta.pop(field, None)
            meta.update(uid=str(uuid.uuid4()), creationTimestamp=now(), generation=1)
            if key[1] is None:
                meta.pop("namespace", None)
        else:
            if not internal:
                new = keep_system_fields(old, new, subresource, status_apart)
                status_only = status_apart and subresource == "status"
                check_object(info.kind, res.group, new, self.schemas.get(res), creating=False, status_only=status_only)
                if subresource is None:
                    check_immutable(info.kind, old, new)
            meta = new["metadata"]
            deleting = meta.get("deletionTimestamp") and not old["metadata"].get("deletionTimestamp")
            if deleting or spec(old, status_apart) != spec(new, status_apart):
                meta["generation"] = old["metadata"].get("generation", 1) + 1
        if not internal:
            meta["managedFields"] = track(old, new, manager, subresource, applied)
            if not meta["managedFields"]:
                del meta["managedFields"]
        if old is not None and comparable(old) == comparable(new):
            return old  # a no-op: no new resourceVersion, no watch event
        if dry_run:
            return new
        self._rv += 1
        meta["resourceVersion"] = str(self._rv)
        self._store(key, new)
        self._publish(res, "ADDED" if old is None else "MODIFIED", new, old)
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and res != _NAMESPACES:
            self._erase(res, key, new)
        return new

    def stored_form(self, res: kmock.resource, obj: dict[str, Any]) -> dict[str, Any]:
        """``obj`` as the server would store it: empty metadata dropped, pruned and defaulted per schema."""
        schema = self.schemas.get(res)
        if schema is not None:
            obj = prune_and_default(obj, schema)
        return drop_empty_metadata(obj)

    def _namespace_exists(self, namespace: str) -> bool:
        return namespace in SYSTEM_NAMESPACES or self._live((_NAMESPACES, None, namespace)) is not None

    def refuse_in_terminating_namespace(self, res: kmock.resource, namespace: str | None, name: str) -> None:
        """A create in a namespace that is being deleted is 403, in one that does not exist 404 (the
        NamespaceLifecycle admission)."""
        if namespace and self.namespaces_required and res != _NAMESPACES and not self._namespace_exists(namespace):
            raise not_found(_NAMESPACES, namespace)
        ns = self._live((_NAMESPACES, None, namespace)) if namespace else None
        if ns is not None and (
            ns["metadata"].get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating"
        ):
            what = f"{res.plural}.{res.group}" if res.group else str(res.plural)
            raise api_error(
                403,
                "Forbidden",
                f'{what} "{name}" is forbidden: unable to create new content in '
                f"namespace {namespace} because it is being terminated",
                name=name,
                kind=res.plural,
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "field": "metadata.namespace",
                        "message": f"namespace {namespace} is being terminated",
                    }
                ],
            )

    def _delete(
        self, res: kmock.resource, info: kmock.ResourceInfo, key: tuple[Any, ...], dry_run: bool = False
    ) -> dict[str, Any]:
        old = self._live(key)
        if old is None:
            raise not_found(res, key[2])
        if dry_run or old["metadata"].get("deletionTimestamp"):
            return old
        if res == _NAMESPACES and self.namespace_controller:
            return self._terminate_namespace(res, info, key, old)
        if old["metadata"].get("finalizers"):
            new = copy.deepcopy(old)
            new["metadata"].update(deletionTimestamp=now(), deletionGracePeriodSeconds=0)
            return self._write(res, info, key, old, new, manager="", internal=True)
        return self._erase(res, key, old)

    def _erase(self, res: kmock.resource, key: tuple[Any, ...], last: dict[str, Any]) -> dict[str, Any]:
        self._rv += 1
        gone = dict(last, metadata=dict(last["metadata"], resourceVersion=str(self._rv)))
        self._objects[key].delete()
        self._publish(res, "DELETED", gone, last)
        if self.gc:
            self._collect(gone["metadata"]["uid"])
        if key[1] is not None:
            self._finish_namespace(key[1])
        return gone

    def _terminate_namespace(
        self, res: kmock.resource, info: kmock.ResourceInfo, key: tuple[Any, ...], old: dict[str, Any]
    ) -> dict[str, Any]:
        """Mark the namespace Terminating, delete what is in it, and remove it once it is empty."""
        new = copy.deepcopy(old)
        new["metadata"].update(deletionTimestamp=now(), deletionGracePeriodSeconds=0)
        new.setdefault("spec", {})["finalizers"] = ["kubernetes"]
        new.setdefault("status", {})["phase"] = "Terminating"
        terminating = self._write(res, info, key, old, new, manager="", internal=True)
        for (other, namespace, name), _ in list(self._all_live()):
            if namespace == key[2] and self._live((other, namespace, name)) is not None:
                self._delete(other, self._info(other), (other, namespace, name))
        self._finish_namespace(key[2])  # nothing (left) in it: gone at once
        return self._live(key) or terminating

    def _finish_namespace(self, namespace: str) -> None:
        key = (_NAMESPACES, None, namespace)
        ns = self._live(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp") or not self.namespace_controller:
            return
        if not any(k[1] == namespace for k, _ in self._all_live()):
            self._erase(_NAMESPACES, key, ns)

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
        found = [
            (key, obj) for key, obj in self._all_live() if key[0] == res and (namespace is None or key[1] == namespace)
        ]
        return [obj for _, obj in sorted(found, key=lambda item: (item[0][1] or "", item[0][2]))]

    def _publish(self, res: kmock.resource, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        change = Change(self._rv, res, kind, obj, old)
        self._changes.append(change)
        if self.history_limit is not None and len(self._changes) > self.history_limit:
            dropped = self._changes[: len(self._changes) - self.history_limit]
            del self._changes[: len(dropped)]
            self._compacted = dropped[-1].rv
        for queue in self._watchers:
            queue.put_nowait(change)
