"""The operator's own list-then-watch streams, against the API emulator over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from aim_core.kube import Credentials, Kube
from aim_core.reconcile.errors import ApiError, NetworkError
from aim_core.reconcile.resources import EVENTS
from aim_core.runtime.reflector import Reflector
from aim_core.runtime.store import Store
from aim_testing.fixtures import Kube as Emulated

EVENTS_PATH = "/api/v1/namespaces/ns1/events"


def event(name: str, kind: str = "Pod", reason: str = "Failed") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "ns1"},
        "involvedObject": {"kind": kind, "name": "p1", "namespace": "ns1"},
        "reason": reason,
        "type": "Warning",
    }


class Fed:
    """A store fed by one reflector, as the runtime wires it."""

    def __init__(self, kube: Kube, **kwargs: Any) -> None:
        self.store = Store()
        self.reflector = Reflector(
            kube,
            EVENTS,
            field_selector="involvedObject.kind=Pod",
            on_list=self.on_list,
            on_event=self.on_event,
            backoffs=[0.01],
            **kwargs,
        )
        self.task: asyncio.Task[None] | None = None

    def on_list(self, items: list[dict[str, Any]]) -> None:
        self.store.replace_all(EVENTS, items)

    def on_event(self, kind: str, obj: dict[str, Any]) -> None:
        if kind == "DELETED":
            self.store.delete(EVENTS, "ns1", obj["metadata"]["name"])
        else:
            self.store.upsert(EVENTS, obj)

    def names(self) -> list[str]:
        return sorted(e["metadata"]["name"] for e in self.store.list(EVENTS))

    def start(self) -> None:
        self.task = asyncio.create_task(self.reflector.run())

    async def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def until(check: Any, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def test_a_field_selected_stream_lists_then_follows_only_its_kind(kube: Emulated) -> None:
    kube.put_object(event("listed"))
    kube.put_object(event("other-kind", kind="InferenceService"))
    client = Kube(Credentials(server=kube.url))
    fed = Fed(client)
    fed.start()
    try:
        await asyncio.wait_for(fed.reflector.listed.wait(), 5)
        assert fed.names() == ["listed"]
        kube.put_object(event("watched"))
        kube.put_object(event("ignored", kind="InferenceService"))
        await until(lambda: fed.names() == ["listed", "watched"])
        assert fed.reflector.lists == 1
    finally:
        await fed.stop()
        await client.aclose()


async def test_a_stream_resumes_where_it_was_and_lists_again_after_410_gone(
    kube: Emulated, api: httpx.AsyncClient
) -> None:
    kube.put_object(event("e1"))
    kube.put_object(event("e2"))
    client = Kube(Credentials(server=kube.url))
    fed = Fed(client, timeout_seconds=1)  # watch requests end every second and are resumed
    fed.start()
    try:
        await asyncio.wait_for(fed.reflector.listed.wait(), 5)
        watches = kube.count("watch", resource="v1/events")
        await until(lambda: kube.count("watch", resource="v1/events") > watches)  # resumed, not listed again
        assert fed.reflector.lists == 1

        await fed.stop()  # the stream is away while e1 is deleted and the history compacted
        assert (await api.delete(f"{EVENTS_PATH}/e1")).status_code == 200
        kube.put_object(event("e3"))
        kube.emulator.compact()
        fed.start()
        await until(lambda: fed.names() == ["e2", "e3"])
        assert fed.reflector.lists == 2  # the resume got 410 Gone: a fresh listing dropped e1

        # Away again, e2 is deleted and the history is kept: the resume replays the deletion, no listing
        # (why no periodic re-listing is needed: --resync-seconds defaults to 0).
        await fed.stop()
        assert (await api.delete(f"{EVENTS_PATH}/e2")).status_code == 200
        fed.start()
        await until(lambda: fed.names() == ["e3"])
        assert fed.reflector.lists == 2
    finally:
        await fed.stop()
        await client.aclose()


class Flaky:
    """An API server that refuses the first listing and drops the first watch after one event."""

    def __init__(self) -> None:
        self.lists = 0
        self.watches = 0
        self.resumed_from: list[str | None] = []

    async def list_pages(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
        self.lists += 1
        if self.lists == 1:
            raise NetworkError("refused", "connection refused")
        yield [{**event("listed"), "metadata": {"name": "listed", "namespace": "ns1", "resourceVersion": "5"}}], "5"

    async def watch(self, ref: Any, namespace: Any = None, *, resource_version: Any = None, **_: Any) -> Any:
        self.watches += 1
        self.resumed_from.append(resource_version)
        if self.watches == 1:
            yield {
                "type": "ADDED",
                "object": {
                    **event("streamed"),
                    "metadata": {"name": "streamed", "namespace": "ns1", "resourceVersion": "6"},
                },
            }
            raise NetworkError("reset", "connection reset")
        await asyncio.sleep(3600)
        yield {}


async def test_a_stream_that_fails_backs_off_and_resumes_where_it_was() -> None:
    flaky = Flaky()
    fed = Fed(flaky)  # type: ignore[arg-type]
    fed.start()
    try:
        await until(lambda: flaky.watches == 2)  # refused, listed, watched, resumed after the dropped watch
        assert flaky.lists == 2  # the dropped watch resumed from "6": no listing of everything again
        assert flaky.resumed_from == ["5", "6"]
        assert fed.names() == ["listed", "streamed"]
        assert fed.reflector.listed.is_set() and fed.task is not None and not fed.task.done()
    finally:
        await fed.stop()


class Closing:
    """A proxy that ends every watch request at once, with nothing in it."""

    def __init__(self) -> None:
        self.watches = 0

    async def list_pages(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
        yield [], "5"

    async def watch(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
        self.watches += 1
        return
        yield {}


async def test_a_watch_that_ends_at_once_backs_off_instead_of_spinning() -> None:
    closing = Closing()
    reflector = Reflector(
        closing, EVENTS, on_list=lambda items: None, on_event=lambda kind, obj: None, backoffs=[0.05, 0.1, 0.2]
    )
    task = asyncio.create_task(reflector.run())
    try:
        await asyncio.sleep(0.6)
        assert 2 <= closing.watches <= 8  # without backoff: thousands of requests in this time
        assert reflector.lists == 1 and reflector.resource_version == "5"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


class Reinstalled:
    """An API whose CRD is deleted and re-created (an upgrade): 404 for a while, then served again."""

    def __init__(self, missing_for: int) -> None:
        self.missing_for = missing_for
        self.lists = 0

    async def list_pages(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
        self.lists += 1
        if self.lists <= self.missing_for:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        yield [{**event("back"), "metadata": {"name": "back", "namespace": "ns1", "resourceVersion": "9"}}], "9"

    async def watch(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(3600)
        yield {}


async def test_a_resource_not_served_is_looked_for_again_with_backoff_not_after_ten_minutes() -> None:
    api = Reinstalled(missing_for=3)
    fed = Fed(api, missing_retry=600)  # type: ignore[arg-type]
    fed.reflector.backoffs = [0.01, 0.02, 0.05]
    fed.start()
    try:
        await until(lambda: fed.names() == ["back"], timeout=3)
        assert api.lists == 4
    finally:
        await fed.stop()


class Pages:
    """Where a paged listing goes: the store, with a note of each page."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.pages: list[list[str]] = []
        self.finished = 0

    def listing(self) -> Any:
        inner = self.store.relisting(EVENTS, copy_obj=False)
        outer = self

        class Noted:
            def add(self, items: Any) -> None:
                items = list(items)
                outer.pages.append([e["metadata"]["name"] for e in items])
                inner.add(items)

            def finish(self) -> None:
                outer.finished += 1
                inner.finish()

        return Noted()


async def test_a_listing_goes_into_the_store_a_page_at_a_time(kube: Emulated) -> None:
    for i in range(5):
        kube.put_object(event(f"e{i}"))
    store = Store()
    store.upsert(EVENTS, {**event("gone"), "metadata": {"name": "gone", "namespace": "ns1", "resourceVersion": "1"}})
    pages = Pages(store)
    client = Kube(Credentials(server=kube.url))
    reflector = Reflector(
        client,
        EVENTS,
        listing=pages.listing,
        page_size=2,
        backoffs=[0.01],
        on_event=lambda kind, obj: store.upsert(EVENTS, obj),
    )
    task = asyncio.create_task(reflector.run())
    try:
        await asyncio.wait_for(reflector.listed.wait(), 5)
        assert pages.pages == [["e0", "e1"], ["e2", "e3"], ["e4"]] and pages.finished == 1
        assert sorted(e["metadata"]["name"] for e in store.list(EVENTS)) == ["e0", "e1", "e2", "e3", "e4"]
        kube.put_object(event("e5"))  # the watch goes on from the listing's version
        await until(lambda: store.get(EVENTS, "ns1", "e5") is not None)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.aclose()


async def test_a_listing_that_fails_half_way_deletes_nothing() -> None:
    class HalfWay:
        async def list_pages(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
            yield [{**event("new"), "metadata": {"name": "new", "namespace": "ns1", "resourceVersion": "7"}}], "7"
            raise NetworkError("reset", "connection reset")

        async def watch(self, *args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(3600)
            yield {}

    store = Store()
    store.upsert(EVENTS, {**event("held"), "metadata": {"name": "held", "namespace": "ns1", "resourceVersion": "1"}})
    reflector = Reflector(
        HalfWay(),
        EVENTS,
        listing=lambda: store.relisting(EVENTS, copy_obj=False),
        on_event=lambda kind, obj: None,
        backoffs=[10],
    )
    task = asyncio.create_task(reflector.run())
    try:
        await until(lambda: store.get(EVENTS, "ns1", "new") is not None)
        await asyncio.sleep(0.05)
        assert store.get(EVENTS, "ns1", "held") is not None and not reflector.listed.is_set()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_streams_opened_together_ask_for_different_watch_timeouts() -> None:
    reflectors = [
        Reflector(object(), EVENTS, on_list=lambda items: None, on_event=lambda kind, obj: None, timeout_seconds=300)
        for _ in range(20)
    ]
    timeouts = [r.watch_timeout() for r in reflectors]
    assert all(300 <= t <= 600 for t in timeouts)
    assert len(set(timeouts)) > 5  # spread over five minutes, not all ending in the same second
