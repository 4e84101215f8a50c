"""The Event recorder: a reconcile hands its Events over and goes on; senders post them in the background.

As client-go's ``record`` package does for Go controllers. A reconcile calls
:meth:`EventRecorder.record`, which builds the Event body, puts it in a bounded
in-memory queue and returns at once: no reconcile waits for an Event to be posted,
so a burst of new objects is not slowed by their Events, and the Events take a
small share of the API server (:data:`SENDERS` requests at a time, against the
engine's ``--workers``).

* **Bounded.** At most :data:`CAPACITY` Events wait (client-go's broadcaster
  queue is 1,000 too). When it is full the *oldest* waiting Event is dropped to
  make room (``aim_events_dropped_total{reason="queue_full"}``, and one WARNING
  line a minute at most); recording never blocks.
* **Correlated.** Events are keyed by involved object (its uid), reporting
  component, type and reason (client-go's correlator keys the message too, then
  aggregates similar ones; here the message is the latest one's). A repeat of an
  Event still waiting is folded into it (its ``count`` grows, no request); a repeat
  of an Event already posted patches that Event's ``count``, ``lastTimestamp`` and
  ``message`` instead of creating another (what ``kubectl describe`` shows as
  ``x3 over 20m``). The last :data:`REMEMBERED` posted Events are remembered; one
  the server has meanwhile expired (404) is created again.
* **Not into a namespace being deleted** (issue 18): checked at the moment of
  sending, and a create refused as "being terminated" (403) marks the namespace
  for every writer (the engine's :meth:`~aim_core.runtime.engine.Engine.terminating`
  and ``_note_refusal`` are passed in).
* **Only as the leader.** Nothing is sent while the API client's write guard
  (leader election) refuses writes; what waits is dropped (``not_leader``).
* **Flushed on stop** (:meth:`stop`): what waits is sent for up to a timeout,
  the rest dropped (``shutdown``).
* **Best effort.** A failed post is logged at DEBUG and dropped (``failed``),
  never retried and never an error of the reconcile.

The message is the condition message as the reconcile wrote it (redacted where
it is made, truncated to 1,024 characters by :func:`~aim_core.reconcile.writes.event_body`).
"""

from __future__ import annotations

import asyncio
import collections
import datetime
import logging
import time
from collections.abc import Callable
from typing import Any

from aim_core import metrics
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.events import EventSpec
from aim_core.reconcile.resources import EVENTS
from aim_core.reconcile.writes import event_body, rfc3339

__all__ = ["CAPACITY", "FLUSH_TIMEOUT", "REMEMBERED", "SENDERS", "EventRecorder"]

log = logging.getLogger("aim_engine.events")

CAPACITY = 1000  #: Events that may wait to be sent; the oldest is dropped beyond
SENDERS = 2  #: Events posted at a time
REMEMBERED = 4096  #: posted Events remembered for counting repeats on them (client-go's LRU size)
FLUSH_TIMEOUT = 5.0  #: seconds :meth:`EventRecorder.stop` sends what waits before dropping it
DROP_LOG_INTERVAL = 60.0  #: at most one WARNING about a full queue per this many seconds

# (namespace, involved uid or kind/name, reporting component, type, reason)
EventKey = tuple[str, str, str, str, str]


class _Pending:
    """One Event waiting to be sent: its body (count and timestamps are set when sent)."""

    __slots__ = ("body", "count", "first", "key", "last")

    def __init__(self, key: EventKey, body: dict[str, Any], now: datetime.datetime) -> None:
        self.key = key
        self.body = body
        self.count = 1
        self.first = self.last = now


class _Posted:
    """What is remembered of an Event posted: its name, count and first time."""

    __slots__ = ("count", "first", "name")

    def __init__(self, name: str, count: int, first: str) -> None:
        self.name = name
        self.count = count
        self.first = first


class EventRecorder:
    """A bounded queue of Events and the senders that post them (see the module's docstring).

    :param kube: returns the API client (it is made once the credentials are known).
    :param terminating: whether a namespace is being deleted (nothing is sent there).
    :param refused: told of a failed create; returns True if it was a namespace refusing as terminating.
    """

    def __init__(
        self,
        kube: Callable[[], Any],
        *,
        terminating: Callable[[str], bool] = lambda namespace: False,
        refused: Callable[[str, BaseException], bool] = lambda namespace, exc: False,
        capacity: int = CAPACITY,
        senders: int = SENDERS,
        remembered: int = REMEMBERED,
    ) -> None:
        self._kube = kube
        self._terminating = terminating
        self._refused = refused
        self.capacity = capacity
        self.senders = senders
        self.remembered = remembered
        self._queue: collections.deque[_Pending] = collections.deque()
        self._waiting: dict[EventKey, _Pending] = {}
        self._posted: collections.OrderedDict[EventKey, _Posted] = collections.OrderedDict()
        self._ready = asyncio.Event()
        self._in_flight = 0
        self._sending: dict[EventKey, asyncio.Event] = {}  # keys being sent: a repeat waits (one create per key)
        self._idle = asyncio.Event()
        self._idle.set()
        self._tasks: list[asyncio.Task[None]] = []
        self._dropped_unlogged = 0
        self._drop_logged_at = -DROP_LOG_INTERVAL

    @property
    def kube(self) -> Any:
        return self._kube()

    def pending(self) -> int:
        """Events waiting or being sent."""
        return len(self._queue) + self._in_flight

    # -------------------------------------------------------------- recording

    def record(self, obj: dict[str, Any], spec: EventSpec, component: str, now: datetime.datetime) -> None:
        """Queue ``spec`` as an Event on ``obj`` reported by ``component``; never blocks, never raises."""
        body = event_body(obj, spec, component, now)
        if self._terminating(body["metadata"]["namespace"]):
            metrics.event_dropped("namespace_terminating")
            return  # checked again when it is sent
        involved = body["involvedObject"]
        key: EventKey = (
            body["metadata"]["namespace"],
            involved.get("uid") or f"{involved['kind']}/{involved['name']}",
            component,
            spec.type,
            spec.reason,
        )
        waiting = self._waiting.get(key)
        if waiting is not None:
            waiting.count += 1
            waiting.last = now
            waiting.body = body
            metrics.event_coalesced()
            return
        if len(self._queue) >= self.capacity:
            oldest = self._queue.popleft()
            del self._waiting[oldest.key]
            metrics.event_dropped("queue_full")
            self._note_overflow()
        item = _Pending(key, body, now)
        self._queue.append(item)
        self._waiting[key] = item
        self._idle.clear()
        self._ready.set()
        metrics.event_queue_depth(len(self._queue))

    def _note_overflow(self) -> None:
        self._dropped_unlogged += 1
        clock = time.monotonic()
        if clock - self._drop_logged_at >= DROP_LOG_INTERVAL:
            log.warning(
                "Event queue full (%d waiting): dropped %d Event(s), the oldest first",
                self.capacity,
                self._dropped_unlogged,
            )
            self._drop_logged_at = clock
            self._dropped_unlogged = 0

    # ---------------------------------------------------------------- sending

    def start(self) -> None:
        """Start the senders (idempotent)."""
        if self._tasks:
            return
        self._tasks = [asyncio.create_task(self._sender()) for _ in range(self.senders)]

    async def _sender(self) -> None:
        while True:
            if not self._queue:
                self._ready.clear()
                await self._ready.wait()
                continue
            await self._send_next()

    async def _send_next(self) -> None:
        item = self._queue.popleft()
        del self._waiting[item.key]
        metrics.event_queue_depth(len(self._queue))
        self._in_flight += 1
        try:
            await self._send(item)
        except asyncio.CancelledError:
            metrics.event_dropped("shutdown")  # cut off by the stop (or the flush's timeout)
            raise
        finally:
            self._in_flight -= 1
            if not self._queue and not self._in_flight:
                self._idle.set()

    def _may_write(self) -> bool:
        kube = self.kube
        guard = getattr(kube, "write_guard", None)
        return kube is not None and (guard is None or guard())

    async def _send(self, item: _Pending) -> None:
        namespace = item.body["metadata"]["namespace"]
        if not self._may_write():
            metrics.event_dropped("not_leader")
            return
        if self._terminating(namespace):
            metrics.event_dropped("namespace_terminating")
            return  # an Event is a create: refused in a namespace being deleted
        while (sending := self._sending.get(item.key)) is not None:
            await sending.wait()
        done = self._sending[item.key] = asyncio.Event()
        try:
            await self._post(item, namespace)
        finally:
            del self._sending[item.key]
            done.set()

    async def _post(self, item: _Pending, namespace: str) -> None:
        last = rfc3339(item.last)
        posted = self._posted.get(item.key)
        try:
            if posted is not None:
                count = posted.count + item.count
                try:
                    await self.kube.patch(
                        EVENTS,
                        namespace,
                        posted.name,
                        {"count": count, "lastTimestamp": last, "message": item.body["message"]},
                    )
                except ApiError as exc:
                    if exc.status != 404:
                        raise
                    del self._posted[item.key]  # expired (the API server keeps Events an hour): post it anew
                else:
                    posted.count = count
                    self._posted.move_to_end(item.key)
                    metrics.event_sent("patch")
                    return
            body = item.body
            body["count"] = item.count
            body["firstTimestamp"] = rfc3339(item.first)
            body["lastTimestamp"] = last
            result = await self.kube.create(EVENTS, body)
            metrics.event_sent("create")
            name = ((result or {}).get("metadata") or {}).get("name") if isinstance(result, dict) else None
            if name:
                self._posted[item.key] = _Posted(name, item.count, body["firstTimestamp"])
                if len(self._posted) > self.remembered:
                    self._posted.popitem(last=False)
        except Exception as exc:  # noqa: BLE001 - events are best effort
            self._refused(namespace, exc)
            metrics.event_dropped("failed")
            log.debug("Event %s on %s failed: %s", item.body["reason"], item.body["involvedObject"]["name"], exc)

    # --------------------------------------------------------------- flushing

    async def flush(self, timeout: float = FLUSH_TIMEOUT) -> bool:
        """Send what waits (also when no sender runs) and wait for what is in flight; False on timeout."""
        try:
            async with asyncio.timeout(timeout):
                while self._queue:
                    await self._send_next()
                await self._idle.wait()
        except TimeoutError:
            return False
        return True

    async def sent(self, timeout: float) -> None:
        """Wait until every Event handed over is sent or dropped (by the running senders); TimeoutError after ``timeout``."""
        async with asyncio.timeout(timeout):
            await self._idle.wait()

    async def stop(self, timeout: float = FLUSH_TIMEOUT) -> None:
        """Stop sending: as the leader, send what waits for up to ``timeout`` seconds first; drop the rest."""
        try:
            if self._queue or self._in_flight:
                if self._may_write():
                    if not await self.flush(timeout):
                        log.warning("%d Event(s) not sent within %.1f s of stopping", self.pending(), timeout)
                else:
                    metrics.event_dropped("not_leader", len(self._queue))
                    self._discard()
        finally:
            tasks, self._tasks = self._tasks, []
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            metrics.event_dropped("shutdown", len(self._queue))
            self._discard()

    def _discard(self) -> None:
        self._queue.clear()
        self._waiting.clear()
        metrics.event_queue_depth(0)
        if not self._in_flight:
            self._idle.set()
