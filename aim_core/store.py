"""An in-memory cache of watched objects with secondary indexes.

Watch events (from kopf) and the start-up listing feed the store; planners
read from it instead of asking the API server. Indexes map a computed key to
the objects that produce it, so "which services use runtime config X in
namespace N" is a dictionary lookup, not a scan.

The store is plain Python: no I/O, no kopf.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the standard library is the fallback
    orjson = None  # type: ignore[assignment]
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from aim_core.providers import ResourceRef

ObjectKey = tuple[str | None, str]  # (namespace, name)
IndexFn = Callable[[dict[str, Any]], Iterable[Hashable]]
Listener = Callable[[ResourceRef, str, dict[str, Any], dict[str, Any] | None], None]


def object_key(obj: dict[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or None, meta["name"])


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def slim(obj: dict[str, Any], field_managers: frozenset[str] | None) -> dict[str, Any]:
    """``obj`` without what no reader of the store uses (a shallow copy when something goes).

    kubectl's last-applied annotation goes; with ``field_managers`` given, only
    their server-side-apply entries of ``managedFields`` stay, in the form
    :func:`aim_core.applyset.owned_fields` reads (:func:`owned_form`). At 10,000
    objects these are most of the store's memory.
    """
    meta = obj.get("metadata")
    if not meta:
        return obj
    entries = meta.get("managedFields")
    notes = meta.get("annotations")
    drop_entries = bool(entries) and field_managers is not None
    drop_note = bool(notes) and LAST_APPLIED in notes
    if not (drop_entries or drop_note):
        return obj
    meta = dict(meta)
    if drop_entries:
        kept = [owned_form(entry) for entry in entries if _ours(entry, field_managers)]  # type: ignore[arg-type]
        if kept:
            meta["managedFields"] = kept
        else:
            del meta["managedFields"]
    if drop_note:
        rest = {k: v for k, v in notes.items() if k != LAST_APPLIED}
        if rest:
            meta["annotations"] = rest
        else:
            del meta["annotations"]
    return {**obj, "metadata": meta}


def owned_form(entry: dict[str, Any]) -> dict[str, Any]:
    """A ``managedFields`` entry with what :func:`aim_core.applyset.owned_fields` reads (a new dict).

    That is the manager, the operation and the ``fieldsV1`` paths down to the
    first list: ``owned_fields`` stops at a field whose entries are keyed
    (``k:``/``v:``/``i:``), so what lies below one is left out (an empty map
    there reads the same). The rest of an InferenceService's set (the owner's
    uid, container and volume names) made every object's set different and was
    most of its memory.
    """
    out = {key: entry[key] for key in ("manager", "operation") if key in entry}
    fields = entry.get("fieldsV1")
    if fields.__class__ is dict:
        out["fieldsV1"] = _owned_paths_form(fields)
    return out


def _owned_paths_form(fields: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, child in fields.items():
        if child.__class__ is dict and child:
            if all(k.startswith("f:") or k == "." for k in child):
                out[key] = _owned_paths_form(child)
            else:
                out[key] = {}  # list entries below: not read
        else:
            out[key] = child
    return out


def pod_essentials(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod as its readers in the store use it (a shallow copy when something goes).

    Metadata and status stay whole (inspection reads phases, conditions,
    container states and owners; Job and serving pods are found by labels).
    Of the spec only the volumes that mount a PersistentVolumeClaim (artifact
    usage, F76) and the node stay: a serving pod's containers, init
    containers, probes and environment are most of its size and nothing here
    reads them. At 10,000 running services their pods would otherwise weigh
    more than everything else in the store.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return pod
    kept: dict[str, Any] = {}
    claims = [v for v in spec.get("volumes") or () if isinstance(v, dict) and "persistentVolumeClaim" in v]
    if claims:
        kept["volumes"] = claims
    if spec.get("nodeName"):
        kept["nodeName"] = spec["nodeName"]
    if kept == spec:
        return pod
    return {**pod, "spec": kept}


_SHORT = 128  # strings up to this length are interned: names, reasons, messages, times repeat across objects
_SHARED_MAX = 4096


def compact(value: Any, shared: dict[bytes, Any]) -> Any:
    """Make the object ``value`` take less memory, in place (it stays equal) and return it.

    Short strings are interned (a decoder makes new ones per document; orjson,
    the adapter's, already shares dict keys). Values that are often equal
    between objects are shared (``shared`` maps their canonical JSON's digest
    to the one copy): the ``spec`` (every InferenceService of one template in
    one namespace has the same; so have most services), the maps in the
    ``status`` (a service's resolved model, template, runtime config, cache),
    the annotations and the ``managedFields`` kept (:func:`owned_form`). Stored objects are
    read-only for everyone (as they always were): shared parts must never be
    modified (:meth:`Store.damaged_shares` checks, the wire tests call it). In
    place, because rebuilding every container cost twice the time.
    """
    if value.__class__ is not dict:
        return _compact(value, shared)
    for key, item in value.items():
        cls = item.__class__
        if cls is str:
            if len(item) <= _SHORT:
                value[key] = sys.intern(item)
        elif cls is dict:
            if key == "spec":
                value[key] = _shared(item, shared)
            elif key == "status":
                _compact_status(item, shared)
            elif key == "metadata":
                _compact_meta(item, shared)
            else:
                _compact(item, shared)
        elif cls is list:
            _compact(item, shared)
    return value


def _compact_meta(meta: dict[str, Any], shared: dict[bytes, Any]) -> None:
    for key, item in meta.items():
        cls = item.__class__
        if cls is str:
            if len(item) <= _SHORT:
                meta[key] = sys.intern(item)
        elif key == "managedFields" or key == "annotations":
            meta[key] = _shared(item, shared)
        elif cls is dict or cls is list:
            _compact(item, shared)


def _compact_status(status: dict[str, Any], shared: dict[bytes, Any]) -> None:
    """The status's maps are shared (the resolved model, template, runtime config, cache of a service ...)."""
    for key, item in status.items():
        cls = item.__class__
        if cls is str:
            if len(item) <= _SHORT:
                status[key] = sys.intern(item)
        elif cls is dict:
            status[key] = _shared(item, shared)
        elif cls is list:
            _compact(item, shared)


def _compact(value: Any, shared: dict[bytes, Any]) -> Any:
    if value.__class__ is dict:
        for key, item in value.items():
            cls = item.__class__
            if cls is str:
                if len(item) <= _SHORT:
                    value[key] = sys.intern(item)
            elif cls is dict or cls is list:
                _compact(item, shared)
    elif value.__class__ is list:
        for index, item in enumerate(value):
            cls = item.__class__
            if cls is str:
                if len(item) <= _SHORT:
                    value[index] = sys.intern(item)
            elif cls is dict or cls is list:
                _compact(item, shared)
    return value


def _shared(value: Any, shared: dict[bytes, Any]) -> Any:
    """The one copy of ``value`` (equal JSON) in ``shared``, compacted; ``value`` itself the first time."""
    if not value or (value.__class__ is not dict and value.__class__ is not list):
        return value
    digest = _digest(value)
    found = shared.get(digest)
    if found is None:
        found = _compact(value, shared)
        if len(shared) >= _SHARED_MAX:
            _sweep(shared)
        shared[digest] = found
    return found


def _sweep(shared: dict[bytes, Any]) -> None:
    """Make room: drop the values no stored object uses any more, else the older half."""
    if hasattr(sys, "getrefcount"):
        for digest in list(shared):
            if sys.getrefcount(shared[digest]) <= 2:  # the table's reference and the argument's
                del shared[digest]
    if len(shared) >= _SHARED_MAX // 2:
        for digest in list(shared)[: len(shared) // 2]:
            del shared[digest]


def _digest(value: Any) -> bytes:
    return hashlib.sha256(_canonical(value)).digest()[:16]  # sha256: the fastest hashlib digest here (SHA extensions)


def _canonical(value: Any) -> bytes:
    if orjson is not None:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # keys that are not strings: the standard library's form
            pass
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()


def _ours(entry: dict[str, Any], field_managers: frozenset[str]) -> bool:
    return entry.get("operation") == "Apply" and entry.get("manager") in field_managers


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
    key itself, only one with several to a set; an object's values are a tuple
    of the index's own copies (index functions make a new tuple per object),
    and an object without values has no entry.
    """

    def __init__(self) -> None:
        self.objects: dict[ObjectKey, dict[str, Any]] = {}
        self.by_namespace: dict[str | None, dict[ObjectKey, None]] = defaultdict(dict)
        self.index_fns: dict[str, IndexFn] = {}
        self.indexes: dict[str, dict[Hashable, ObjectKey | set[ObjectKey]]] = {}
        self.reverse: dict[str, dict[ObjectKey, tuple[Hashable, ...]]] = {}
        self.values: dict[str, dict[Hashable, Hashable]] = {}  # per index: each value held, to itself

    def add_index(self, name: str, fn: IndexFn) -> None:
        self.index_fns[name] = fn
        self.indexes[name] = {}
        self.reverse[name] = {}
        self.values[name] = {}
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
        held = self.values[name]
        values = tuple(dict.fromkeys(held.setdefault(value, value) for value in computed))
        if not values:
            return
        self.reverse[name][key] = values
        index = self.indexes[name]
        for value in values:
            bucket = index.get(value)
            if bucket is None:
                index[value] = key
            elif bucket.__class__ is set:
                bucket.add(key)  # type: ignore[union-attr]
            elif bucket != key:
                index[value] = {bucket, key}  # type: ignore[arg-type]

    def _unindex(self, key: ObjectKey) -> None:
        for name, reverse in self.reverse.items():
            values = reverse.pop(key, None)
            if not values:
                continue
            index = self.indexes[name]
            for value in values:
                bucket = index.get(value)
                if bucket is None:
                    continue
                if bucket.__class__ is set:
                    bucket.discard(key)  # type: ignore[union-attr]
                    if len(bucket) == 1:  # type: ignore[arg-type]
                        index[value] = next(iter(bucket))  # type: ignore[call-overload]
                    elif not bucket:
                        del index[value]
                        self.values[name].pop(value, None)
                elif bucket == key:
                    del index[value]
                    self.values[name].pop(value, None)

    def put(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        key = object_key(obj)
        old = self.objects.get(key)
        self._unindex(key)
        self.objects[key] = obj
        self.by_namespace[key[0]][key] = None
        for name in self.index_fns:
            self._index_one(name, key, obj)
        return old

    def remove(self, key: ObjectKey) -> dict[str, Any] | None:
        self._unindex(key)
        bucket = self.by_namespace.get(key[0])
        if bucket is not None:
            bucket.pop(key, None)
        return self.objects.pop(key, None)


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
        return [value for digest, value in self._shared.items() if _digest(value) != digest]


class Relisting:
    """One listing of a resource fed into a store page by page (see :meth:`Store.relisting`)."""

    def __init__(self, store: Store, ref: ResourceRef, namespaces: set[str] | None,
                 where: Callable[[dict[str, Any]], bool] | None, keep: Callable[[dict[str, Any]], bool] | None,
                 copy_obj: bool) -> None:
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
