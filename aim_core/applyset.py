"""Preparing desired children for server-side apply, and deciding whether to send them.

Owner references and identity labels are set here, in one place, for every
controller. :func:`needs_apply` keeps steady-state reconciles write-free: a
child is sent only when the live object lacks something we want, or still
carries a field our field manager owns that the plan no longer wants (which
is how settings get turned off cleanly).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from aim_core.reconcile import labels as labelling
from aim_core.reconcile.plan import Desired, LabelPolicy


def owner_reference(parent: Mapping[str, Any]) -> dict[str, Any]:
    meta = parent["metadata"]
    return {
        "apiVersion": parent["apiVersion"],
        "kind": parent["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
    }


def prepare(
    desired: Desired, parent: Mapping[str, Any], controller: str, policy: LabelPolicy
) -> dict[str, Any]:
    """The object to apply: apiVersion/kind, propagated and identity labels, owner reference."""
    obj = copy.deepcopy(desired.obj)
    obj["apiVersion"] = desired.resource.api_version
    obj["kind"] = desired.resource.kind
    meta = obj.setdefault("metadata", {})
    parent_meta = parent.get("metadata") or {}
    labels = labelling.propagate_labels(
        parent_meta.get("labels") or {}, meta.get("labels") or {}, policy.enabled, list(policy.patterns)
    )
    labels = labelling.controller_labels(controller, parent_meta["name"], labels)
    meta["labels"] = labels
    if desired.owned and parent_meta.get("uid"):
        ref = owner_reference(parent)
        others = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != ref["uid"]]
        meta["ownerReferences"] = [*others, ref]
    return obj


def is_subset(want: Any, have: Any) -> bool:
    """Whether ``have`` already contains everything in ``want``.

    Maps compare key by key (extra keys in ``have`` are fine: defaults and
    other managers' fields); lists compare element by element with equal
    length; scalars compare equal, with quantities compared as strings.
    """
    if isinstance(want, Mapping):
        if not isinstance(have, Mapping):
            return False
        return all(k in have and is_subset(v, have[k]) for k, v in want.items())
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return False
        return all(is_subset(w, h) for w, h in zip(want, have))
    if want == have:
        return True
    if isinstance(want, (int, float)) and isinstance(have, str) or isinstance(want, str) and isinstance(have, (int, float)):
        return str(want) == str(have)
    return False


def _desired_paths(value: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    paths: set[tuple[str, ...]] = set()
    if isinstance(value, Mapping) and value:
        for key, child in value.items():
            paths.add(prefix + (key,))
            paths |= _desired_paths(child, prefix + (key,))
    return paths


def _owned_paths(fields: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Field paths from a ``fieldsV1`` set, stopping at list entries (k:/v:/i:)."""
    paths: set[tuple[str, ...]] = set()
    for key, child in fields.items():
        if not key.startswith("f:"):
            continue
        path = prefix + (key[2:],)
        paths.add(path)
        if isinstance(child, Mapping) and all(k.startswith("f:") or k == "." for k in child):
            paths |= _owned_paths(child, path)
    return paths


def owned_fields(live: Mapping[str, Any], manager: str) -> set[tuple[str, ...]] | None:
    """Paths ``manager`` owns on ``live`` per managedFields, ``None`` when not recorded."""
    entries = (live.get("metadata") or {}).get("managedFields") or []
    found = None
    for entry in entries:
        if entry.get("manager") == manager and entry.get("operation") == "Apply":
            fields = entry.get("fieldsV1")
            if isinstance(fields, Mapping):
                found = (found or set()) | _owned_paths(fields)
    return found


_IGNORED_ROOTS = {("metadata", "managedFields"), ("status",), ("metadata", "resourceVersion")}


def needs_apply(obj: Mapping[str, Any], live: Mapping[str, Any] | None, manager: str) -> bool:
    """Whether applying ``obj`` would change ``live``."""
    if live is None:
        return True
    if not is_subset(obj, live):
        return True
    owned = owned_fields(live, manager)
    if owned is None:
        return False
    want = _desired_paths(obj)
    stale = {p for p in owned - want if not any(p[: len(r)] == r for r in _IGNORED_ROOTS)}
    return bool(stale)


def fingerprint(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))
