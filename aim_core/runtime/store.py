"""An in-memory cache of watched objects with secondary indexes.

The watch streams (:mod:`aim_core.runtime.reflector`: a listing in pages, then
watch events) feed the store; observe steps read from it instead of asking the
API server. Indexes map a computed key to
the objects that produce it, so "which services use runtime config X in
namespace N" is a dictionary lookup, not a scan.

The store is plain Python: no I/O. What it keeps of each object (the stored
form) is in :mod:`aim_core.runtime.storeform`.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.obj import Stored
from aim_core.runtime.storeform import LAST_APPLIED, compact, owned_form, pod_essentials, slim, value_digest

__all__ = [
    "LAST_APPLIED",
    "IndexFn",
    "Listener",
    "ObjectKey",
    "Relisting",
    "Store",
    "compact",
    "object_key",
    "owned_form",
    "pod_essentials",
    "slim",
]

ObjectKey = tuple[str | None, str]  # (namespace, name)
IndexFn = Callable[[dict[str, Any]], Iterable[Hashable]]
Listener = Callable[[ResourceRef, str, dict[str, Any], dict[str, Any] | None], None]


def object_key(obj: dict[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or None, meta["name"])


def _rv(obj: dict[str, Any]) -> int | None:
    value = (obj.get("metadata") or {}).get("resourceVersion")
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


class _Table:
    """One resource's objects, by key and by namespace, and its indexes.

    Indexes are kept small (at 10,000 objects with nine indexes a set per object
    and index was 2 KB an object): an index value with one object maps to its
    key itself, only one with several to a set. What an object was
    indexed under is not kept: index functions are pure, so the object being
    replaced or removed gives its values again (a tuple per object and index was
    about 1 KB a service).
    """

    def __init__(self) -> None:
        self.objects: dict[ObjectKey, dict[str, Any]] = {}
        self.by_namespace: dict[str | None, dict[ObjectKey, None]] = defaultdict(dict)
        self.index_fns: dict[str, IndexFn] = {}
        self.indexes: dict[str, dict[Hashable, ObjectKey | set[ObjectKey]]] = {}

    def add_index(self, name: str, fn: IndexFn) -> None:
        self.index_fns[name] = fn
        self.indexes[name] = {}
        for key, obj in self.objects.items():
            self._index_one(name, key, obj)

    def keys(self, name: str, value: Hashable) -> Iterable[ObjectKey]:
        found = self.indexes[name].get(value)
        if found is None:
            return ()
        return found if found.__class__ is set else (found,)  # type: ignore[return-value]

    def _index_one(self, name: str, key: ObjectKey, obj: dict[str, Any]) -> None:
        computed = self.index_fns[name](obj)
        if not computed:
            return
        index = self.indexes[name]
        for value in dict.fromkeys(computed):
            bucket = index.get(value)
            if bucket is None:
                index[value] = key
            elif bucket.__class__ is set:
                bucket.add(key)  # type: ignore[union-attr]
            elif bucket != key:
                index[value] = {bucket, key}  # type: ignore[arg-type]

    def _unindex(self, key: ObjectKey, obj: dict[str, Any]) -> None:
        """Take ``key`` out of the indexes ``obj`` (what the table holds under it) put it in."""
        for name, fn in self.index_fns.items():
            computed = fn(obj)
            if not computed:
                continue
            index = self.indexes[name]
            for value in dict.fromkeys(computed):
                bucket = index.get(value)
                if bucket is None:
                    continue
                if bucket.__class__ is set:
                    bucket.discard(key)  # type: ignore[union-attr]
                    if len(bucket) == 1:  # type: ignore[arg-type]
                        index[value] = next(iter(bucket))  # type: ignore[call-overload]
                    elif not bucket:
                        del index[value]
                elif bucket == key:
                    del index[value]

    def put(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        key = object_key(obj)
        old = self.objects.get(key)
        if old is not None:
            self._unindex(key, old)
        self.objects[key] = obj
        self.by_namespace[key[0]][key] = None
        for name in self.index_fns:
            self._index_one(name, key, obj)
        return old

    def remove(self, key: ObjectKey) -> dict[str, Any] | None:
        old = self.objects.pop(key, None)
        if old is None:
            return None
        self._unindex(key, old)
        bucket = self.by_namespace.get(key[0])
        if bucket is not None:
            bucket.pop(key, None)
        return old


class Store:
    """Objects by resource, namespace and name, with named indexes per resource."""

    def __init__(
        self,
        *,
        field_managers: Iterable[str] | None = None,
        compact: bool = False,
        projections: dict[ResourceRef, Callable[[dict[str, Any]], dict[str, Any]]] | None = None,
    ) -> None:
        """``field_managers``: keep only their apply entries of ``managedFields`` (None: keep all).

        ``compact``: store objects in :func:`compact` form (the operator's store; see there).
        ``projections``: per resource, what of an object is kept (e.g. :func:`pod_essentials`).
        """
        self.field_managers = frozenset(field_managers) if field_managers is not None else None
        self.compact = compact
        self.projections = dict(projections or {})
        self._shared: dict[bytes, Any] = {}
        self._tables: dict[ResourceRef, _Table] = defaultdict(_Table)
        self._listeners: list[Listener] = []
        self._versions: dict[ResourceRef, int] = defaultdict(int)
        self.synced: set[ResourceRef] = set()

    # ----------------------------------------------------------- registration

    def add_index(self, ref: ResourceRef, name: str, fn: IndexFn) -> None:
        """Index objects of ``ref`` by the values ``fn`` returns."""
        self._tables[ref].add_index(name, fn)

    def has_index(self, ref: ResourceRef, name: str) -> bool:
        return name in self._tables[ref].index_fns

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(ref, event_type, new_or_old_obj, old_obj)`` on every change."""
        self._listeners.append(listener)

    # ---------------------------------------------------------------- changes

    def upsert(self, ref: ResourceRef, obj: dict[str, Any], *, copy_obj: bool = True) -> bool:
        """Store ``obj``; return whether it changed what the store held.

        An event older than what is held (lower numeric resourceVersion) is
        ignored, so a late start-up listing cannot roll an object back.
        ``copy_obj=False`` stores ``obj`` itself: for freshly decoded API
        responses nobody else holds.
        """
        table = self._tables[ref]
        key = object_key(obj)
        old = table.objects.get(key)
        if old is not None:
            new_rv, old_rv = _rv(obj), _rv(old)
            if new_rv is not None and old_rv is not None and new_rv < old_rv:
                return False
        obj = slim(obj, self.field_managers)
        project = self.projections.get(ref)
        if project is not None:
            obj = project(obj)
        if "apiVersion" not in obj or "kind" not in obj:
            obj = {"apiVersion": ref.api_version, "kind": ref.kind, **obj}
        if old is not None and old == obj:
            return False
        if copy_obj:
            obj = copy.deepcopy(obj)
        if self.compact:
            compact(obj, self._shared)
        obj = Stored(obj)  # read-only from here: views derived from it are kept with it
        table.put(obj)
        self._versions[ref] += 1
        for listener in self._listeners:
            listener(ref, "MODIFIED" if old is not None else "ADDED", obj, old)
        return True

    def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> bool:
        old = self._tables[ref].remove((namespace or None, name))
        if old is None:
            return False
        self._versions[ref] += 1
        for listener in self._listeners:
            listener(ref, "DELETED", old, old)
        return True

    def replace_all(
        self,
        ref: ResourceRef,
        objs: Iterable[dict[str, Any]],
        namespaces: set[str] | None = None,
        *,
        where: Callable[[dict[str, Any]], bool] | None = None,
        copy_obj: bool = True,
    ) -> None:
        """Reconcile the table with a fresh listing (objects absent from it are deleted).

        ``namespaces`` and ``where`` limit what the listing covers: held objects
        outside them are not deleted (e.g. one stream of several feeding a table).
        """
        listing = self.relisting(ref, namespaces, where=where, copy_obj=copy_obj)
        listing.add(objs)
        listing.finish()

    def relisting(
        self,
        ref: ResourceRef,
        namespaces: set[str] | None = None,
        *,
        where: Callable[[dict[str, Any]], bool] | None = None,
        keep: Callable[[dict[str, Any]], bool] | None = None,
        copy_obj: bool = True,
    ) -> Relisting:
        """:meth:`replace_all` a page at a time: ``add`` each page as it comes, ``finish`` after the last.

        ``keep``: objects it refuses are not stored (and so leave the store, as unlisted ones).
        A listing that never finishes (it failed half way) deletes nothing.
        """
        return Relisting(self, ref, namespaces, where, keep, copy_obj)

    # ------------------------------------------------------------------ reads

    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self._tables[ref].objects.get((namespace or None, name))

    def list(self, ref: ResourceRef, namespace: str | None = None) -> list[dict[str, Any]]:
        table = self._tables[ref]
        if namespace is None:
            return list(table.objects.values())
        return [table.objects[key] for key in table.by_namespace.get(namespace, ())]

    def by_index(self, ref: ResourceRef, index: str, value: Hashable) -> list[dict[str, Any]]:
        table = self._tables[ref]
        keys = table.keys(index, value)
        return [table.objects[key] for key in sorted(keys, key=lambda k: (k[0] or "", k[1]))]

    def keys_by_index(self, ref: ResourceRef, index: str, value: Hashable) -> set[ObjectKey]:
        return set(self._tables[ref].keys(index, value))

    def __iter__(self) -> Iterator[ResourceRef]:
        return iter(self._tables)

    def version(self, ref: ResourceRef) -> int:
        """A counter that moves on every change of ``ref``'s objects (for caching derived values)."""
        return self._versions[ref]

    def count(self, ref: ResourceRef) -> int:
        return len(self._tables[ref].objects)

    def damaged_shares(self) -> list[Any]:
        """Shared values (see :func:`compact`) somebody modified: a bug in the reader that did (tests call it)."""
        return [value for digest, value in self._shared.items() if value_digest(value) != digest]


class Relisting:
    """One listing of a resource fed into a store page by page (see :meth:`Store.relisting`)."""

    def __init__(
        self,
        store: Store,
        ref: ResourceRef,
        namespaces: set[str] | None,
        where: Callable[[dict[str, Any]], bool] | None,
        keep: Callable[[dict[str, Any]], bool] | None,
        copy_obj: bool,
    ) -> None:
        self.store, self.ref, self.namespaces, self.where, self.keep = store, ref, namespaces, where, keep
        self.copy_obj = copy_obj
        self.seen: set[ObjectKey] = set()

    def add(self, objs: Iterable[dict[str, Any]]) -> None:
        for obj in objs:
            if self.keep is not None and not self.keep(obj):
                continue
            self.seen.add(object_key(obj))
            self.store.upsert(self.ref, obj, copy_obj=self.copy_obj)

    def finish(self) -> None:
        """Delete what the listing did not hold (within its namespaces and ``where``); the table is synced."""
        store, seen, namespaces, where = self.store, self.seen, self.namespaces, self.where
        objects = store._tables[self.ref].objects
        for key in [k for k in objects if k not in seen]:
            obj = objects.get(key)  # a listener may have taken it already
            if obj is not None and (namespaces is None or key[0] in namespaces) and (where is None or where(obj)):
                store.delete(self.ref, *key)
        store.synced.add(self.ref)
