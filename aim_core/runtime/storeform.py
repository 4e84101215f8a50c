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

    Metadata stays whole (pods are found by labels, owners and uid). Of the
    spec only the volumes that mount a PersistentVolumeClaim (artifact usage,
    F76) and the node stay: a serving pod's containers, probes and environment
    are most of its size and nothing here reads them. Of the status what pod
    inspection and the plans read (:func:`pod_status_essentials`). At 10,000
    running services their pods would otherwise weigh more than everything
    else in the store.
    """
    spec = pod.get("spec")
    status = pod.get("status")
    kept_spec = spec
    if isinstance(spec, dict):
        kept_spec = {}
        claims = [v for v in spec.get("volumes") or () if isinstance(v, dict) and "persistentVolumeClaim" in v]
        if claims:
            kept_spec["volumes"] = claims
        if spec.get("nodeName"):
            kept_spec["nodeName"] = spec["nodeName"]
        if kept_spec == spec:
            kept_spec = spec
    kept_status = pod_status_essentials(status) if isinstance(status, dict) else status
    if kept_spec is spec and kept_status is status:
        return pod
    return {**pod, "spec": kept_spec, "status": kept_status}


_POD_STATUS = ("phase", "reason", "message")
_POD_CONDITIONS = frozenset({"Ready", "PodScheduled"})  # what inspection asks of a pod's conditions
_CONDITION_KEYS = ("type", "status", "reason", "message")
_CONTAINER_KEYS = ("name", "ready", "restartCount")


def pod_status_essentials(status: dict[str, Any]) -> dict[str, Any]:
    """A pod's status as inspection reads it (``status`` itself when that is all it has).

    Phase, reason and message; the Ready and PodScheduled conditions without
    their times; per container its name, readiness, restart count, state and
    last termination (running since when is not read; a waiting container keeps
    its image, which a pull failure names). Addresses, QoS class, start time,
    image IDs and the other conditions go: on a running pod they were two
    thirds of its status.
    """
    out: dict[str, Any] = {key: status[key] for key in _POD_STATUS if key in status}
    conditions = [
        {key: c[key] for key in _CONDITION_KEYS if key in c}
        for c in status.get("conditions") or ()
        if isinstance(c, dict) and c.get("type") in _POD_CONDITIONS
    ]
    if conditions:
        out["conditions"] = conditions
    for field in ("initContainerStatuses", "containerStatuses"):
        containers = [_container_essentials(cs) for cs in status.get(field) or () if isinstance(cs, dict)]
        if containers:
            out[field] = containers
    return status if out == status else out


def _container_essentials(cs: dict[str, Any]) -> dict[str, Any]:
    out = {key: cs[key] for key in _CONTAINER_KEYS if key in cs}
    state = cs.get("state")
    if isinstance(state, dict):
        out["state"] = {k: ({} if k == "running" else v) for k, v in state.items()}
        if "waiting" in state and "image" in cs:
            out["image"] = cs["image"]
    last = (cs.get("lastState") or {}).get("terminated") if isinstance(cs.get("lastState"), dict) else None
    if last:
        out["lastState"] = {"terminated": last}
    return out


_SHORT = 128  # strings up to this length are interned: names, reasons, messages, times repeat across objects
_SHARED_MAX = 4096


def _fit(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` in a table of its size: a decoder sizes maps of 6 to 10 keys for 16 (352 bytes, not 272)."""
    return dict(value.items()) if len(value) > 5 else value


def compact(value: Any, shared: dict[bytes, Any]) -> Any:
    """Make the object ``value`` take less memory, in place (it stays equal) and return it.

    Short strings are interned (a decoder makes new ones per document; orjson,
    the adapter's, already shares dict keys). Values that are often equal
    between objects are shared (``shared`` maps their canonical JSON's digest
    to the one copy): the ``spec`` (every InferenceService of one template in
    one namespace has the same; so have most services), the maps in the
    ``status`` (a service's resolved model, template, runtime config, cache),
    the annotations, the finalizers and the ``managedFields`` kept (:func:`owned_form`). Stored objects are
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
            else:
                value[key] = item = _fit(item)
                if key == "status":
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
        elif key == "managedFields" or key == "annotations" or key == "finalizers":
            meta[key] = _shared(item, shared)
        elif cls is dict:
            meta[key] = _compact(_fit(item), shared)
        elif cls is list:
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
            elif cls is dict:
                value[key] = _compact(_fit(item), shared)
            elif cls is list:
                _compact(item, shared)
    elif value.__class__ is list:
        for index, item in enumerate(value):
            cls = item.__class__
            if cls is str:
                if len(item) <= _SHORT:
                    value[index] = sys.intern(item)
            elif cls is dict:
                value[index] = _compact(_fit(item), shared)
            elif cls is list:
                _compact(item, shared)
    return value


def _shared(value: Any, shared: dict[bytes, Any]) -> Any:
    """The one copy of ``value`` (equal JSON) in ``shared``, compacted; ``value`` itself the first time."""
    if not value or (value.__class__ is not dict and value.__class__ is not list):
        return value
    digest = value_digest(value)
    found = shared.get(digest)
    if found is None:
        found = _compact(_fit(value) if value.__class__ is dict else value, shared)
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
