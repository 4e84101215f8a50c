"""The operator's own list-then-watch streams, against the API emulator over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from aim_core.kube import Credentials, Kube
from aim_core.operator.reflector import Reflector
from aim_core.reconcile.errors import NetworkError
from aim_core.resources import EVENTS
from aim_core.store import Store
from aim_core.testing.fixtures import Kube as Emulated

EVENTS_PATH = "/api/v1/namespaces/ns1/events"


def event(name: str, kind: str = "Pod", reason: str = "Failed") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "ns1"},
            "involvedObject": {"kind": kind, "name": "p1", "namespace": "ns1"}, "reason": reason, "type": "Warning"}


class Fed:
    """A store fed by one reflector, as the runtime wires it."""

    def __init__(self, kube: Kube, **kwargs: Any) -> None:
        self.store = Store()
        self.reflector = Reflector(kube, EVENTS, field_selector="involvedObject.kind=Pod", on_list=self.on_list,
                                   on_event=self.on_event, backoffs=[0.01], **kwargs)
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


async def test_a_stream_resumes_where_it_was_and_lists_again_after_410_gone(kube: Emulated, api: httpx.AsyncClient) -> None:
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

    async def list_versioned(self, ref: Any, namespace: Any = None, **_: Any) -> tuple[list[dict[str, Any]], str]:
        self.lists += 1
        if self.lists == 1:
            raise NetworkError("refused", "connection refused")
        return [{**event("listed"), "metadata": {"name": "listed", "namespace": "ns1", "resourceVersion": "5"}}], "5"

    async def watch(self, ref: Any, namespace: Any = None, **_: Any) -> Any:
        self.watches += 1
        if self.watches == 1:
            yield {"type": "ADDED", "object": {**event("streamed"),
                                               "metadata": {"name": "streamed", "namespace": "ns1",
                                                            "resourceVersion": "6"}}}
            raise NetworkError("reset", "connection reset")
        await asyncio.sleep(3600)
        yield {}


async def test_a_stream_that_fails_backs_off_and_lists_again() -> None:
    flaky = Flaky()
    fed = Fed(flaky)  # type: ignore[arg-type]
    fed.start()
    try:
        await until(lambda: flaky.lists == 3)  # refused, listed, listed again after the dropped watch
        await until(lambda: flaky.watches == 2)
        assert fed.names() == ["listed"]  # the fresh listing is what holds: "streamed" is gone
        assert fed.reflector.listed.is_set() and fed.task is not None and not fed.task.done()
    finally:
        await fed.stop()
