"""The Event recorder: reconciles hand Events over and go on; senders post them in the background."""

from __future__ import annotations

import asyncio
import datetime
import itertools
import logging
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from aim_core import metrics
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.events import EventSpec
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import EVENTS, NAMESPACES
from aim_core.runtime.controller import Context, Controller
from aim_core.runtime.engine import Engine
from aim_core.runtime.recorder import EventRecorder
from aim_core.runtime.store import Store
from tests.runtime.test_engine_children import PARENTS, ServerKube
from tests.runtime.test_engine_terminating import namespace

T0 = datetime.datetime(2026, 11, 27, 22, 0, tzinfo=datetime.UTC)


class EventKube:
    """Stores the Events it is sent, as an API server would (a name per create, merge patches)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.names = itertools.count(1)
        self.events: dict[str, dict[str, Any]] = {}
        self.requests: list[str] = []
        self.write_guard = None
        self.fail: BaseException | None = None

    async def create(self, resource, body):
        assert resource == EVENTS
        self.requests.append(f"create {body['reason']}")
        await asyncio.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        name = f"{body['metadata']['generateName']}{next(self.names)}"
        self.events[name] = {**body, "metadata": {**body["metadata"], "name": name}}
        return self.events[name]

    async def patch(self, resource, namespace, name, body, subresource=None):
        assert resource == EVENTS
        self.requests.append(f"patch {name}")
        await asyncio.sleep(self.delay)
        if name not in self.events:
            raise ApiError(404, "NotFound", f"events {name} not found")
        self.events[name].update(body)
        return self.events[name]


def obj(name: str = "svc", ns: str = "team") -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
    }


WARN = EventSpec("Warning", "ImagePullBackOff", "the image cannot be pulled", "ModelReady", True)


@pytest.fixture
def scraped() -> Iterator[metrics.Metrics]:
    m = metrics.Metrics()
    token = metrics.activate(m)
    yield m
    metrics.deactivate(token)


def sample(m: metrics.Metrics, name: str, **labels: str) -> float:
    return m.registry.get_sample_value(name, labels or None) or 0.0


async def test_a_full_queue_drops_the_oldest_counts_it_and_logs_once(scraped, caplog):
    kube = EventKube()
    recorder = EventRecorder(lambda: kube, capacity=3)
    with caplog.at_level(logging.WARNING, "aim_engine.events"):
        for n in range(5):
            recorder.record(obj(f"s{n}"), WARN, "aim-service-controller", T0)
    assert recorder.pending() == 3
    assert sample(scraped, "aim_events_dropped_total", reason="queue_full") == 2
    assert sample(scraped, "aim_event_queue_depth") == 3
    assert len([r for r in caplog.records if "queue full" in r.getMessage()]) == 1

    assert await recorder.flush()
    assert sorted(e["involvedObject"]["name"] for e in kube.events.values()) == ["s2", "s3", "s4"]
    assert sample(scraped, "aim_events_sent_total", action="create") == 3
    assert sample(scraped, "aim_event_queue_depth") == 0


async def test_a_repeat_still_waiting_is_folded_into_it(scraped):
    kube = EventKube()
    recorder = EventRecorder(lambda: kube)
    recorder.record(obj(), WARN, "aim-service-controller", T0)
    recorder.record(obj(), WARN, "aim-service-controller", T0 + datetime.timedelta(minutes=10))
    recorder.record(obj("other"), WARN, "aim-service-controller", T0)
    assert await recorder.flush()

    assert kube.requests == ["create ImagePullBackOff", "create ImagePullBackOff"]
    event = next(e for e in kube.events.values() if e["involvedObject"]["name"] == "svc")
    assert (event["count"], event["firstTimestamp"], event["lastTimestamp"]) == (
        2,
        "2026-11-27T22:00:00Z",
        "2026-11-27T22:10:00Z",
    )
    assert sample(scraped, "aim_events_coalesced_total") == 1


async def test_a_repeat_of_a_posted_event_counts_on_it_and_an_expired_one_is_posted_anew(scraped):
    kube = EventKube()
    recorder = EventRecorder(lambda: kube)
    recorder.record(obj(), WARN, "aim-service-controller", T0)
    assert await recorder.flush()
    later = EventSpec("Warning", "ImagePullBackOff", "still cannot be pulled", "ModelReady", True)
    recorder.record(obj(), later, "aim-service-controller", T0 + datetime.timedelta(minutes=10))
    assert await recorder.flush()

    [(name, event)] = kube.events.items()
    assert kube.requests == ["create ImagePullBackOff", f"patch {name}"]
    assert (event["count"], event["firstTimestamp"], event["lastTimestamp"], event["message"]) == (
        2,
        "2026-11-27T22:00:00Z",
        "2026-11-27T22:10:00Z",
        "still cannot be pulled",
    )
    assert sample(scraped, "aim_events_sent_total", action="patch") == 1

    kube.events.clear()  # the API server expired it (an hour by default)
    recorder.record(obj(), WARN, "aim-service-controller", T0 + datetime.timedelta(hours=2))
    assert await recorder.flush()
    [event] = kube.events.values()
    assert event["count"] == 1 and event["firstTimestamp"] == "2026-11-28T00:00:00Z"


async def test_other_reasons_types_and_objects_are_events_of_their_own(scraped):
    kube = EventKube()
    recorder = EventRecorder(lambda: kube)
    recorder.record(obj(), WARN, "aim-service-controller", T0)
    recorder.record(obj(), EventSpec("Warning", "Other", "m"), "aim-service-controller", T0)
    recorder.record(obj(), EventSpec("Normal", "ImagePullBackOff", "m"), "aim-service-controller", T0)
    recorder.record(obj("b"), WARN, "aim-service-controller", T0)
    assert await recorder.flush()
    assert len(kube.events) == 4 and all(e["count"] == 1 for e in kube.events.values())


async def test_stop_sends_what_waits_within_its_timeout_and_drops_the_rest(scraped):
    kube = EventKube(delay=0.05)
    recorder = EventRecorder(lambda: kube, senders=1)
    recorder.start()
    for n in range(3):
        recorder.record(obj(f"s{n}"), WARN, "aim-service-controller", T0)
    await recorder.stop(timeout=5.0)
    assert len(kube.events) == 3

    slow = EventKube(delay=1.0)
    recorder = EventRecorder(lambda: slow, senders=1)
    recorder.start()
    for n in range(5):
        recorder.record(obj(f"s{n}"), WARN, "aim-service-controller", T0)
    started = time.monotonic()
    await recorder.stop(timeout=0.3)
    assert time.monotonic() - started < 1.0
    assert slow.events == {} and recorder.pending() == 0
    assert sample(scraped, "aim_events_dropped_total", reason="shutdown") >= 4


async def test_nothing_is_sent_without_the_lease(scraped):
    kube = EventKube()
    leading = [True]
    kube.write_guard = lambda: leading[0]
    recorder = EventRecorder(lambda: kube)
    recorder.record(obj("a"), WARN, "aim-service-controller", T0)
    leading[0] = False
    assert await recorder.flush()
    recorder.record(obj("b"), WARN, "aim-service-controller", T0)
    await recorder.stop(timeout=5.0)
    assert kube.requests == []
    assert sample(scraped, "aim_events_dropped_total", reason="not_leader") == 2


async def test_a_failed_post_is_dropped_and_counted(scraped):
    kube = EventKube()
    kube.fail = ApiError(500, "InternalError", "etcd is busy")
    recorder = EventRecorder(lambda: kube)
    recorder.record(obj(), WARN, "aim-service-controller", T0)
    assert await recorder.flush()
    assert kube.requests == ["create ImagePullBackOff"]
    assert sample(scraped, "aim_events_dropped_total", reason="failed") == 1


# ------------------------------------------------------------------ with the engine


class Quick(Controller):
    """One child per parent, no observation: what a burst of new objects costs the engine."""

    name: ClassVar[str] = "quick"
    resource = PARENTS

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        plan = Plan()
        plan.component("Child", Health(State.PROGRESSING, "Creating", "the child is being made"))
        return plan


class SlowEvents(ServerKube):
    """Answers everything at once but Events, which take ``delay`` seconds each."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.statuses: list[str] = []
        self.events: list[tuple[str, str]] = []
        self.refuse_events = False

    async def patch(self, resource, namespace, name, body, subresource=None):
        if subresource == "status":
            self.statuses.append(name)
        return {}

    async def create(self, resource, body):
        assert resource == EVENTS
        await asyncio.sleep(self.delay)
        if self.refuse_events:
            raise ApiError(
                403, "Forbidden", "unable to create new content in namespace team because it is being terminated"
            )
        self.events.append((body["involvedObject"]["name"], body["reason"]))
        return {**body, "metadata": {**body["metadata"], "name": f"e{len(self.events)}"}}


def parents(store: Store, n: int) -> None:
    store.upsert(NAMESPACES, namespace("Active"))
    for i in range(n):
        store.upsert(
            PARENTS,
            {
                "apiVersion": "example.com/v1",
                "kind": "Parent",
                "metadata": {"name": f"p{i}", "namespace": "team", "uid": f"u{i}", "resourceVersion": "1"},
            },
        )


async def test_a_burst_of_reconciles_does_not_wait_for_a_slow_event_endpoint(scraped):
    store = Store()
    kube = SlowEvents(delay=0.5)
    engine = Engine(Context(store=store, kube=kube, plugins=None, operator_namespace="aim-system"), [Quick()])
    parents(store, 40)
    started = time.monotonic()
    run = asyncio.create_task(engine.run(workers=4, flush_timeout=0.2))
    try:
        while len(kube.statuses) < 40:
            assert time.monotonic() - started < 5.0, f"{len(kube.statuses)} statuses written"
            await asyncio.sleep(0.01)
        took = time.monotonic() - started
        # 40 Events at 0.5 s each, two at a time, take 10 s; the statuses were all written long before
        assert took < 2.0
        assert len(kube.events) <= 4
        assert engine.events.pending() >= 36
    finally:
        run.cancel()
        await asyncio.gather(run, return_exceptions=True)
    assert engine.events.pending() == 0  # stopped: the flush timed out, the rest dropped
    assert sample(scraped, "aim_events_dropped_total", reason="shutdown") >= 30


async def test_an_event_is_not_sent_into_a_namespace_that_began_terminating_after_the_reconcile(scraped):
    store = Store()
    kube = SlowEvents(delay=0.0)
    engine = Engine(Context(store=store, kube=kube, plugins=None, operator_namespace="aim-system"), [Quick()])
    parents(store, 1)
    await engine.reconcile(engine.controllers["quick"], "team", "p0")
    assert kube.statuses == ["p0"] and engine.events.pending() == 1
    store.upsert(NAMESPACES, namespace("Terminating"))
    assert await engine.events.flush()
    assert kube.events == []
    assert sample(scraped, "aim_events_dropped_total", reason="namespace_terminating") == 1


async def test_a_refusal_as_terminating_is_remembered_for_every_writer(scraped):
    store = Store()
    kube = SlowEvents(delay=0.0)
    kube.refuse_events = True
    engine = Engine(Context(store=store, kube=kube, plugins=None, operator_namespace="aim-system"), [Quick()])
    parents(store, 2)
    await engine.reconcile(engine.controllers["quick"], "team", "p0")
    assert await engine.events.flush()
    assert engine.terminating("team")  # the 403 marked the namespace (its watch has not said so yet)
    await engine.reconcile(engine.controllers["quick"], "team", "p1")
    assert kube.statuses == ["p0"]  # nothing more is written there
