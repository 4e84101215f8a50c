"""Field sets for server-side apply: ``metadata.managedFields`` in the real ``FieldsV1`` format.

Server-side apply (``application/apply-patch+yaml`` + ``fieldManager``) is
create-or-merge, records what each manager owns in ``metadata.managedFields``,
and removes fields a manager applied before but omits now.

Deliberate differences from a real server, kept for test speed and simplicity:

* Apply conflicts between managers are not detected: every apply behaves as if
  ``force=true`` and takes ownership of the fields whose value it changes.
* Lists are merged by key only where the key is evident from the field:
  items with ``name`` (env, containers, volumes, ...), ``volumeMounts`` by
  ``mountPath``, ports by port and protocol, ``conditions`` by ``type``,
  ``ownerReferences`` by ``uid``; ``finalizers`` are a set. Every other list is
  atomic (replaced as a whole). CRD ``x-kubernetes-list-type`` markers are not read.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from aim_testing.emulator.metadata import SYSTEM_META, now

Path = tuple[str, ...]  # one FieldsV1 key per level: 'f:spec', 'k:{"name":"x"}', 'v:"fin"'

_KEYS_BY_FIELD = {
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ownerReferences": ("uid",),
    "conditions": ("type",),
    "hostAliases": ("ip",),
}
SET = ("<set>",)  # list_keys() of a list merged as a set of scalars
_ITEM = object()  # the value of an "item exists" path in a flattened object
_MISSING = object()


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def list_keys(field: str, items: list[Any]) -> tuple[str, ...] | None:
    """How the list at ``field`` merges: key fields, ``SET`` for a set of scalars, None if atomic."""
    if not items:
        return None
    if field == "finalizers" and all(isinstance(item, str) for item in items):
        return SET
    if not all(isinstance(item, dict) for item in items):
        return None
    candidates = [_KEYS_BY_FIELD[field]] if field in _KEYS_BY_FIELD else []
    if field == "ports":
        candidates += [("containerPort", "protocol"), ("port", "protocol")]
    candidates.append(("name",))
    for keys in candidates:
        if all(key in item for item in items for key in keys if key != "protocol"):
            seen = {item_key(item, keys) for item in items}
            return keys if len(seen) == len(items) else None  # duplicate keys: atomic
    return None


def item_key(item: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    """The ``k:{...}`` path segment of a keyed list item."""
    return "k:" + _dump({key: item.get(key, "TCP" if key == "protocol" else None) for key in keys})


def flatten(obj: Mapping[str, Any]) -> dict[Path, Any]:
    """Map every owned-able field path of an object to its value (``_ITEM`` for list items)."""
    out: dict[Path, Any] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind"):
            continue
        if key == "metadata" and isinstance(value, Mapping):
            for mkey, mvalue in value.items():
                if mkey not in SYSTEM_META:
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
    keys = list_keys(field, value) if isinstance(value, list) else None
    if keys is None:
        out[path] = value
    elif keys is SET:
        for item in value:
            out[path + (f"v:{_dump(item)}",)] = item
    else:
        for item in value:
            item_path = path + (item_key(item, keys),)
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
        keys = list_keys(field, applied)
        if keys is None or not isinstance(live, list) or list_keys(field, live) != keys:
            return [merge_applied(None, item) for item in applied]
        if keys is SET:
            return list(applied) + [item for item in live if item not in applied]
        by_key = {item_key(item, keys): item for item in live}
        merged = [merge_applied(by_key.get(item_key(item, keys)), item) for item in applied]
        applied_keys = {item_key(item, keys) for item in applied}
        return merged + [item for item in live if item_key(item, keys) not in applied_keys]
    return applied


def _child(node: Any, segment: str) -> Any:
    kind, _, rest = segment.partition(":")
    if kind == "f" and isinstance(node, Mapping):
        return node.get(rest)
    if kind == "k" and isinstance(node, list):
        wanted = json.loads(rest)
        for item in node:
            if isinstance(item, Mapping) and item_key(item, tuple(wanted)) == segment:
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


# --------------------------------------------------------------------------- managedFields


def _owners(obj: Mapping[str, Any]) -> dict[tuple[str, str, str], set[Path]]:
    return {
        (e.get("manager", ""), e.get("operation", ""), e.get("subresource", "")): paths_of(e.get("fieldsV1") or {})
        for e in (obj.get("metadata") or {}).get("managedFields") or []
    }


def reapply(
    old: dict[str, Any], effective: Mapping[str, Any], applied: dict[Path, Any], manager: str, subresource: str | None
) -> dict[str, Any]:
    """The live object after ``manager`` applies ``effective`` again (``applied`` is its flattened form).

    Fields this manager applied before but omits now are removed, unless another
    manager owns them too; key fields of list items go only with their item.
    """
    owners = _owners(old)
    previous = owners.pop((manager, "Apply", subresource or ""), set())
    others = set().union(*owners.values())
    new = copy.deepcopy(old)
    for path in sorted(previous - applied.keys(), key=len, reverse=True):
        shared = path in others or (path[-1].startswith("k:") and any(p[: len(path)] == path for p in others))
        if not shared and not _key_fields(path):
            remove_path(new, path)
    return merge_applied(new, effective)


def track(
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any],
    manager: str,
    subresource: str | None,
    applied: dict[Path, Any] | None,
) -> list[dict[str, Any]]:
    """New ``managedFields``: the writer owns what it applied or changed; others lose what it changed."""
    time = now()
    entries = {key: {"paths": paths} for key, paths in _owners(old or {}).items()}
    for entry in (old or {}).get("metadata", {}).get("managedFields") or []:
        key = (entry.get("manager", ""), entry.get("operation", ""), entry.get("subresource", ""))
        entries[key].update(apiVersion=entry.get("apiVersion"), time=entry.get("time"))
    old_flat, new_flat = flatten(old) if old is not None else {}, flatten(new)
    mine = (manager, "Apply" if applied is not None else "Update", subresource or "")
    if applied is not None:
        taken = {path for path, value in applied.items() if old_flat.get(path, _MISSING) != value}
        entries[mine] = {"paths": set(applied), "time": time}
    else:
        taken = {path for path, value in new_flat.items() if old_flat.get(path, _MISSING) != value}
        if taken:
            entry = entries.setdefault(mine, {"paths": set()})
            entry.update(paths=entry["paths"] | taken, time=time)
    result = []
    for key, entry in entries.items():
        paths = (entry["paths"] if key == mine else entry["paths"] - taken) & new_flat.keys()
        if paths:
            result.append(
                {
                    "manager": key[0],
                    "operation": key[1],
                    "apiVersion": entry.get("apiVersion") or new.get("apiVersion"),
                    "time": entry.get("time") or time,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": fields_v1(paths),
                    **({"subresource": key[2]} if key[2] else {}),
                }
            )
    return result
