"""The form objects are kept in by the operator's store: slimmed, projected and compacted.

Everything here is pure: what of an object no reader uses goes
(:func:`slim`, :func:`owned_form`, :func:`pod_essentials`), and what stays is
interned and shared between objects with equal parts (:func:`compact`). At
10,000 services with their InferenceServices this is most of the operator's
memory saved (benchmarks/README.md, "Memory"). :mod:`aim_core.runtime.store` applies it.
"""

from __future__ import annotations

import hashlib
import json
import sys

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; the standard library is the fallback
    orjson = None  # type: ignore[assignment]
from typing import Any

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def slim(obj: dict[str, Any], field_managers: frozenset[str] | None) -> dict[str, Any]:
    """``obj`` without what no reader of the store uses (a shallow copy when something goes).

    kubectl's last-applied annotation goes; with ``field_managers`` given, only
    their server-side-apply entries of ``managedFields`` stay, in the form
    :func:`aim_core.runtime.applyset.owned_fields` reads (:func:`owned_form`). At 10,000
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
    """A ``managedFields`` entry with what :func:`aim_core.runtime.applyset.owned_fields` reads (a new dict).

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
    digest = value_digest(value)
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


def value_digest(value: Any) -> bytes:
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
