"""Events from watch streams, kept in the store by the object they are about.

Workload inspection (:mod:`aim_core.reconcile.workloads`, and the runtime provider's
``health``) explains a failing pod, PVC or serving object from its Events.
The operator does not list Events per object: it watches them, streams per
involved kind (``fieldSelector=involvedObject.kind=Pod,type=Warning`` ...,
see :meth:`EventCache.selectors`), and keeps in
the store's ``EVENTS`` table only what inspection can use:

* Warnings, and the few Normal reasons inspection reads (:data:`NORMAL_REASONS`);
* slimmed to the fields inspection and the mappers read (no managedFields,
  no annotations);
* at most :data:`MAX_PER_OBJECT` per involved object, the newest;
* dropped when the API server deletes them (Events expire, one hour by
  default) or when the involved object leaves the store.

Events are indexed by ``(namespace, kind, name)`` of the involved object
(:data:`BY_INVOLVED`); controllers map a changed Event to their objects
through that key, so an Event that explains something re-triggers its
owner at once and nothing is looked at on a timer. Plain Python, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.resources import EVENTS
from aim_core.reconcile.workloads import event_time
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Relisting, Store

BY_INVOLVED = "event-by-involved"

# Normal Events inspection reads (image pull progress; PVC provisioning); every Warning is kept.
NORMAL_REASONS = frozenset({"Pulling", "Provisioning", "ProvisioningSucceeded", "WaitForFirstConsumer"})
MAX_PER_OBJECT = 16
# Per involved kind, the streams (field selectors beside involvedObject.kind): Warnings, and the
# Normal reasons read about that kind; a kind not named here is streamed whole.
STREAMS_BY_KIND: dict[str, tuple[str, ...]] = {
    "Pod": ("type=Warning", "reason=Pulling"),
    "InferenceService": ("type=Warning",),
}

_META_KEPT = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
_TOP_KEPT = (
    "involvedObject",
    "regarding",
    "reason",
    "message",
    "type",
    "count",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
    "series",
    "source",
    "reportingComponent",
)

InvolvedKey = tuple[str | None, str, str]  # (namespace, kind, name)


def involved(event: dict[str, Any]) -> InvolvedKey | None:
    """``(namespace, kind, name)`` of the object an Event is about."""
    obj = event.get("involvedObject") or event.get("regarding") or {}
    kind, name = obj.get("kind"), obj.get("name")
    if not kind or not name:
        return None
    namespace = obj.get("namespace") or (event.get("metadata") or {}).get("namespace") or None
    return (namespace, kind, name)


def worth_keeping(event: dict[str, Any]) -> bool:
    """Whether inspection could use this Event: a Warning, or a Normal reason it reads."""
    return involved(event) is not None and (event.get("type") == "Warning" or event.get("reason") in NORMAL_REASONS)


def slim(event: dict[str, Any]) -> dict[str, Any]:
    """The Event with only what inspection and the mappers read (a new dict)."""
    meta = event.get("metadata") or {}
    out: dict[str, Any] = {
        "apiVersion": event.get("apiVersion", EVENTS.api_version),
        "kind": "Event",
        "metadata": {k: meta[k] for k in _META_KEPT if k in meta},
    }
    for key in _TOP_KEPT:
        if key in event:
            out[key] = event[key]
    return out


def add_index(store: Store) -> None:
    """Index Events by their involved object (once per store; controllers reading Events call it)."""
    if not store.has_index(EVENTS, BY_INVOLVED):
        store.add_index(EVENTS, BY_INVOLVED, lambda e: [k] if (k := involved(e)) is not None else [])


def events_about(store: Store, kind: str, namespace: str | None, name: str) -> list[dict[str, Any]]:
    """The kept Events about one object (oldest first as far as the store knows; inspection sorts by time)."""
    return store.by_index(EVENTS, BY_INVOLVED, (namespace or None, kind, name))


class EventCache:
    """Feeds Events into the store with the rules above; drops them with their involved objects."""

    def __init__(self, store: Store, involved_refs: Iterable[ResourceRef], *, max_per_object: int = MAX_PER_OBJECT):
        self.store = store
        self.max_per_object = max_per_object
        self.kinds = {ref.kind: ref for ref in involved_refs}
        add_index(store)
        store.subscribe(self._on_change)

    def selectors(self) -> list[str]:
        """The field selector of each Event stream: per involved kind, what inspection reads of it.

        The API server filters (a cluster's Normal Pod Events, four or five per
        pod start, are never sent); a kind not in :data:`STREAMS_BY_KIND` is
        streamed whole.
        """
        return [
            f"involvedObject.kind={kind}" + (f",{extra}" if extra else "")
            for kind in sorted(self.kinds)
            for extra in STREAMS_BY_KIND.get(kind, ("",))
        ]

    def apply(self, event_type: str, event: dict[str, Any]) -> None:
        """One watch event about an Event."""
        meta = event.get("metadata") or {}
        if not meta.get("name"):
            return
        if event_type == "DELETED" or not worth_keeping(event):
            self.store.delete(EVENTS, meta.get("namespace"), meta["name"])
            return
        self.store.upsert(EVENTS, slim(event), copy_obj=False)
        key = involved(event)
        if key is not None:
            self._trim(key)

    def replace(self, selector: str, events: Iterable[dict[str, Any]]) -> None:
        """A fresh listing of one stream: Events of its kind that are no longer listed go."""
        listing = self.relisting(selector)
        listing.add(events)
        listing.finish()

    def relisting(self, selector: str) -> EventRelisting:
        """:meth:`replace` a page at a time (``add`` each page, ``finish`` after the last).

        Only the Events this stream's selector covers are replaced (several streams feed one table).
        """
        return EventRelisting(
            self, self.store.relisting(EVENTS, where=Selection(field_selector=selector).matches, copy_obj=False)
        )

    def _trim(self, key: InvolvedKey) -> None:
        keys = self.store.keys_by_index(EVENTS, BY_INVOLVED, key)
        if len(keys) <= self.max_per_object:
            return
        events = sorted((self.store.get(EVENTS, *k) for k in keys), key=lambda e: event_time(e or {}))
        for old in events[: len(events) - self.max_per_object]:
            if old is not None:
                self.store.delete(EVENTS, old["metadata"].get("namespace"), old["metadata"]["name"])

    def _on_change(self, ref: ResourceRef, event_type: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if event_type != "DELETED" or ref == EVENTS:
            return
        known = self.kinds.get(ref.kind)
        if known is None or known != ref:
            return
        meta = obj.get("metadata") or {}
        gone: list[ObjectKey] = sorted(
            self.store.keys_by_index(EVENTS, BY_INVOLVED, (meta.get("namespace") or None, ref.kind, meta["name"])),
            key=lambda k: (k[0] or "", k[1]),
        )
        for namespace, name in gone:
            self.store.delete(EVENTS, namespace, name)


class EventRelisting:
    """One listing of an Event stream: only what inspection uses is stored; trimmed per object at the end."""

    def __init__(self, cache: EventCache, listing: Relisting) -> None:
        self.cache, self.listing = cache, listing
        self.involved: set[InvolvedKey] = set()

    def add(self, events: Iterable[dict[str, Any]]) -> None:
        kept = [slim(e) for e in events if worth_keeping(e)]
        self.involved.update(k for e in kept if (k := involved(e)) is not None)
        self.listing.add(kept)

    def finish(self) -> None:
        self.listing.finish()
        for key in sorted(self.involved, key=lambda k: (k[0] or "", k[1], k[2])):
            self.cache._trim(key)
