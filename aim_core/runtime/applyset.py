"""Preparing desired children for server-side apply, and deciding whether to send them.

Owner references and identity labels are set here, in one place, for every
controller. :func:`needs_apply` keeps steady-state reconciles write-free: a
child is sent only when the live object lacks something we want, or still
carries a field our field manager owns that the plan no longer wants (which
is how settings get turned off cleanly).

Desired and live objects are compared in the form the API server stores, or a
builder could make the operator apply the same object forever:

* :func:`prepare` puts the body in that form where it is known without asking
  the server: no empty ``labels``/``annotations``/``finalizers``/``ownerReferences``
  (ObjectMeta omits them), no ``null`` values;
* what only the server knows (fields its schema prunes, defaults inside values
  we send, canonical quantities) is learned from its answer: :class:`AppliedForms`
  keeps, per child, the body last applied and what the server stored of it,
  and while the plan wants that same body the stored form is what the live
  object is compared with. At most one write per child and operator start can
  be spent learning; none can repeat.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import orjson

from aim_core.reconcile import labels as labelling
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.obj import clone
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


def prepare(desired: Desired, parent: Mapping[str, Any], controller: str, policy: LabelPolicy) -> dict[str, Any]:
    """The object to apply: apiVersion/kind, propagated and identity labels, owner reference."""
    obj = clone(desired.obj)
    obj["apiVersion"] = desired.resource.api_version
    obj["kind"] = desired.resource.kind
    meta = obj.setdefault("metadata", {})
    parent_meta = parent.get("metadata") or {}
    labels = labelling.propagate_labels(
        parent_meta.get("labels") or {}, meta.get("labels") or {}, policy.enabled, list(policy.patterns)
    )
    labels = labelling.controller_labels(controller, parent_meta["name"], labels)
    own = meta.get("labels") or {}
    meta["labels"] = labels
    if obj["kind"] == "Job":
        # What the Job gained (propagated labels, F81/F82, and the controller's identity label) reaches its pods
        # too: NetworkPolicies and cost tools select pods (issue 18). Jobs are created once (their pod template
        # is immutable), so this never changes a live Job.
        template = obj.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {})
        gained = {k: v for k, v in labels.items() if k not in own}
        template["labels"] = {**gained, **(template.get("labels") or {})}
    if desired.owned and parent_meta.get("uid"):
        ref = owner_reference(parent)
        others = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != ref["uid"]]
        meta["ownerReferences"] = [*others, ref]
    return stored_form(obj)


def should_send(
    desired: Desired, body: Mapping[str, Any], live: Mapping[str, Any] | None, manager: str, applied: Any
) -> bool:
    """Whether to send ``body``: :func:`needs_apply`, and a create-only object only while it does not exist."""
    if desired.create_only and live is not None:
        return False  # created once, never written again (whoever made it)
    return needs_apply(body, live, manager, applied)


async def send(kube: Any, desired: Desired, body: dict[str, Any], field_manager: str) -> dict[str, Any] | None:
    """Apply ``body`` (server-side, forced), or create it when the plan wants it created only.

    ``None``: a create-only object already exists (made by someone else since the
    store last saw it); it is theirs, not taken over.
    """
    if not desired.create_only:
        return await kube.apply(desired.resource, body, field_manager=field_manager)
    try:
        return await kube.create(desired.resource, body, field_manager=field_manager)
    except ApiError as exc:
        if exc.status == 409:
            return None
        raise


# ObjectMeta fields the server omits when empty: an empty one never comes back.
_OMIT_EMPTY_META = ("labels", "annotations", "finalizers", "ownerReferences", "generateName")


def stored_form(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (changed in place) without what the server never stores: ``null`` values, empty metadata."""
    _drop_nulls(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for field in _OMIT_EMPTY_META:
            if field in meta and not meta[field]:
                del meta[field]
    return obj


def _drop_nulls(value: Any) -> None:
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for sub in value.values():
            _drop_nulls(sub)
    elif isinstance(value, list):
        for sub in value:
            _drop_nulls(sub)


def as_stored(sent: Any, stored: Any) -> Any:
    """What the server kept of ``sent``, in its own spelling: ``sent``'s fields, ``stored``'s values.

    Fields ``sent`` had that ``stored`` lacks (pruned, or dropped because empty)
    are left out; scalars take the stored value (canonical quantities); a list
    whose length the server changed (merged with other managers' items) is
    taken as stored; maps and equal-length lists are followed field by field.
    """
    if isinstance(sent, dict) and isinstance(stored, dict):  # dict, not Mapping: an ABC check costs 5x
        return {k: as_stored(v, stored[k]) for k, v in sent.items() if k in stored}
    if isinstance(sent, list) and isinstance(stored, list) and len(sent) == len(stored):
        return [as_stored(a, b) for a, b in zip(sent, stored)]
    return stored if isinstance(stored, _IMMUTABLE) else copy.deepcopy(stored)


_IMMUTABLE = (str, int, float, bool, type(None))


def kept_as_sent(sent: Any, stored: Any) -> bool:
    """Whether ``as_stored(sent, stored) == sent`` (the server kept every field as sent), without building it."""
    if isinstance(sent, dict):
        return isinstance(stored, dict) and all(k in stored and kept_as_sent(v, stored[k]) for k, v in sent.items())
    if isinstance(sent, list):
        return (
            isinstance(stored, list)
            and len(sent) == len(stored)
            and all(kept_as_sent(a, b) for a, b in zip(sent, stored))
        )
    return bool(sent == stored)


class AppliedForms:
    """Per child: the body last applied (by digest) and the server's stored form of it.

    Bounded: the oldest entries go first once ``limit`` children are remembered
    (forgetting costs at most one more write for that child). Small: the body is
    kept as a 16-byte digest of its :func:`fingerprint`, and the stored form only
    where the server changed something of what was sent (pruned a field,
    respelled a quantity, merged a list); usually it kept the body as sent, and
    the body the caller asks about is then its own stored form. Keeping both in
    full cost 10-20 KB per InferenceService and status, 200 MB or more at 10,000
    services.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self._forms: OrderedDict[Hashable, tuple[bytes, dict[str, Any] | None]] = OrderedDict()
        self._last: tuple[Any, bytes] = (None, b"")  # a reconcile asks get() then remember() of the same body

    def _digest(self, body: Mapping[str, Any]) -> bytes:
        if self._last[0] is body:
            return self._last[1]
        found = digest(body)
        self._last = (body, found)
        return found

    def remember(self, key: Hashable, body: Mapping[str, Any], stored: Mapping[str, Any]) -> None:
        """Record what the server stored (``stored``, its answer to the apply) of ``body``."""
        sent = _comparable(body)
        # usually the server kept the body as sent: checked without building its stored form
        form = None if kept_as_sent(sent, stored) else as_stored(sent, stored)
        self._forms[key] = (self._digest(body), None if form is None or form == sent else form)
        self._last = (None, b"")
        self._forms.move_to_end(key)
        while len(self._forms) > self.limit:
            self._forms.popitem(last=False)

    def get(self, key: Hashable, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored form of ``body`` if it is the body last applied to ``key``, else ``None``."""
        entry = self._forms.get(key)
        if entry is None or entry[0] != self._digest(body):
            return None
        return entry[1] if entry[1] is not None else _comparable(body)

    def forget(self, key: Hashable) -> None:
        self._forms.pop(key, None)

    def __len__(self) -> int:
        return len(self._forms)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._forms


def _comparable(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a body that the live object is compared on (apiVersion/kind are not stored per se)."""
    return {k: v for k, v in body.items() if k not in ("apiVersion", "kind")}


def is_subset(want: Any, have: Any) -> bool:
    """Whether ``have`` already contains everything in ``want``.

    Maps compare key by key (extra keys in ``have`` are fine: defaults and
    other managers' fields); lists compare element by element with equal
    length; scalars compare equal, with quantities compared as strings.
    """
    if isinstance(want, dict):  # dict, not Mapping: objects and bodies are dicts, and an ABC check costs 5x
        if not isinstance(have, dict):
            return False
        return all(k in have and is_subset(v, have[k]) for k, v in want.items())
    if isinstance(want, list):
        if not isinstance(have, list) or len(want) != len(have):
            return False
        return all(is_subset(w, h) for w, h in zip(want, have))
    if want == have:
        return True
    if (
        isinstance(want, (int, float))
        and isinstance(have, str)
        or isinstance(want, str)
        and isinstance(have, (int, float))
    ):
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


def needs_apply(
    obj: Mapping[str, Any], live: Mapping[str, Any] | None, manager: str, stored: Mapping[str, Any] | None = None
) -> bool:
    """Whether applying ``obj`` would change ``live``.

    ``stored`` is the server's stored form of ``obj`` when known (see
    :class:`AppliedForms`); otherwise ``obj`` is compared in :func:`stored_form`.
    """
    if live is None:
        return True
    want = stored if stored is not None else stored_form(_comparable(clone(obj)))
    if not is_subset(want, live):
        return True
    owned = owned_fields(live, manager)
    if owned is None:
        return False
    wanted = _desired_paths(want)
    stale = {p for p in owned - wanted if not any(p[: len(r)] == r for r in _IGNORED_ROOTS) and _has_path(live, p)}
    return bool(stale)


def _has_path(obj: Any, path: tuple[str, ...]) -> bool:
    """Whether ``obj`` carries a field at ``path`` (an owned field the server dropped is not carried)."""
    for key in path:
        if not isinstance(obj, Mapping) or key not in obj:
            return False
        obj = obj[key]
    return True


def digest(obj: Mapping[str, Any]) -> bytes:
    """16 bytes of SHA-256 over :func:`fingerprint` (about 3 us for an InferenceService body)."""
    return hashlib.sha256(fingerprint(obj)).digest()[:16]


def fingerprint(obj: Mapping[str, Any]) -> bytes:
    """A canonical form of ``obj`` to compare with an earlier one (orjson: a quarter of json.dumps's cost)."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # keys that are not strings, types orjson does not know: the standard library's form
        return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()
