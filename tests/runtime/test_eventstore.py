"""Events from watches in the store: only what inspection reads, slim, bounded, gone with their object."""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.resources import EVENTS, PODS, PVCS
from aim_core.runtime.eventstore import MAX_PER_OBJECT, EventCache, events_about
from aim_core.runtime.store import Store


def event(
    name: str,
    reason: str,
    *,
    kind: str = "Pod",
    about: str = "p1",
    type_: str = "Warning",
    at: str = "2026-01-01T00:00:00Z",
    ns: str = "ns1",
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": name,
            "namespace": ns,
            "resourceVersion": "1",
            "managedFields": [{"manager": "kubelet"}],
            "annotations": {"a": "b"},
        },
        "involvedObject": {"kind": kind, "name": about, "namespace": ns},
        "reason": reason,
        "type": type_,
        "message": f"{reason} message",
        "lastTimestamp": at,
    }


def pod(name: str = "p1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns1"}}


def cache() -> tuple[Store, EventCache]:
    store = Store()
    return store, EventCache(store, [PODS, PVCS])


def test_streams_per_involved_kind_ask_only_for_what_inspection_reads() -> None:
    _, events = cache()
    # Pods: Warnings and image pulls (a cluster's Normal pod Events, four or five per pod start, are never sent)
    assert events.selectors() == [
        "involvedObject.kind=PersistentVolumeClaim",
        "involvedObject.kind=Pod,type=Warning",
        "involvedObject.kind=Pod,reason=Pulling",
    ]


def test_a_listing_of_one_stream_replaces_only_the_events_it_selects() -> None:
    store, events = cache()
    events.apply("ADDED", event("warned", "Failed"))
    events.apply("ADDED", event("pulling", "Pulling", type_="Normal"))
    listing = events.relisting("involvedObject.kind=Pod,type=Warning")
    listing.add([])  # no Warnings any more: the Pulling one belongs to the other stream and stays
    listing.finish()
    assert [e["reason"] for e in events_about(store, "Pod", "ns1", "p1")] == ["Pulling"]


def test_warnings_and_the_normal_reasons_inspection_reads_are_kept_slim() -> None:
    store, events = cache()
    events.apply("ADDED", event("e1", "Failed"))
    events.apply("ADDED", event("e2", "Pulling", type_="Normal"))
    events.apply("ADDED", event("e3", "Scheduled", type_="Normal"))  # inspection never reads it
    kept = events_about(store, "Pod", "ns1", "p1")
    assert sorted(e["reason"] for e in kept) == ["Failed", "Pulling"]
    assert all("managedFields" not in e["metadata"] and "annotations" not in e["metadata"] for e in kept)
    assert kept[0]["involvedObject"] == {"kind": "Pod", "name": "p1", "namespace": "ns1"}


def test_a_deleted_event_or_one_that_stops_mattering_leaves_the_store() -> None:
    store, events = cache()
    events.apply("ADDED", event("e1", "Failed"))
    events.apply("ADDED", event("e2", "FailedMount"))
    events.apply("DELETED", event("e1", "Failed"))
    events.apply("MODIFIED", event("e2", "Started", type_="Normal"))
    assert store.count(EVENTS) == 0


def test_only_the_newest_events_of_an_object_are_kept() -> None:
    store, events = cache()
    for i in range(MAX_PER_OBJECT + 5):
        events.apply("ADDED", event(f"e{i:02}", f"R{i}", at=f"2026-01-01T00:{i:02}:00Z"))
    events.apply("ADDED", event("other", "Failed", about="p2"))
    kept = sorted(e["metadata"]["name"] for e in events_about(store, "Pod", "ns1", "p1"))
    assert kept == [f"e{i:02}" for i in range(5, MAX_PER_OBJECT + 5)]
    assert len(events_about(store, "Pod", "ns1", "p2")) == 1


def test_events_go_with_their_object() -> None:
    store, events = cache()
    store.upsert(PODS, pod("p1"))
    store.upsert(PODS, pod("p2"))
    events.apply("ADDED", event("e1", "Failed", about="p1"))
    events.apply("ADDED", event("e2", "Failed", about="p2"))
    events.apply("ADDED", event("e3", "ProvisioningFailed", kind="PersistentVolumeClaim", about="p1"))
    store.delete(PODS, "ns1", "p1")
    assert events_about(store, "Pod", "ns1", "p1") == []
    assert len(events_about(store, "Pod", "ns1", "p2")) == 1
    assert len(events_about(store, "PersistentVolumeClaim", "ns1", "p1")) == 1  # a claim of the same name stays


def test_a_fresh_listing_of_one_stream_replaces_only_that_kind() -> None:
    store, events = cache()
    events.apply("ADDED", event("e1", "Failed"))
    events.apply("ADDED", event("e2", "ProvisioningFailed", kind="PersistentVolumeClaim", about="c1"))
    events.replace("involvedObject.kind=Pod", [event("e3", "BackOff"), event("e4", "Created", type_="Normal")])
    assert sorted(e["metadata"]["name"] for e in store.list(EVENTS)) == ["e2", "e3"]
