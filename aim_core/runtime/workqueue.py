"""A keyed work queue: de-duplicated, one worker per key at a time, delayed requeue.

The same guarantees controller-runtime's queue gives: a key enqueued many
times before a worker takes it is processed once; a key enqueued while it is
being processed runs again right after; failures back off exponentially per
key; a later explicit ``add`` resets nothing but runs sooner.

:meth:`WorkQueue.add_soon` gathers triggers that come in a row: a service's pod
turning Ready and then its InferenceService arrive as separate watch events a
few milliseconds apart, and reconciling after each wrote an intermediate status
and Event. Such a key waits until its triggers have been quiet for ``quiet``
seconds (``most`` at the longest) and is then reconciled once; a plain ``add``
(e.g. the object itself changed, a new object) is not delayed and takes the
waiting key with it. Waiting keys count as work in :meth:`busy` and :meth:`idle`.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable

from aim_core import metrics


class WorkQueue:
    def __init__(
        self, *, base_delay: float = 0.5, max_delay: float = 300.0, quiet: float = 0.5, most: float = 2.0
    ) -> None:
        self._ready: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._active: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._delayed: list[tuple[float, int, Hashable]] = []
        self._delayed_at: dict[Hashable, float] = {}
        self._failures: dict[Hashable, int] = {}
        self._soon: dict[Hashable, tuple[float, float]] = {}  # add_soon: key -> (first trigger, due)
        self._soon_heap: list[tuple[float, int, Hashable]] = []
        self.quiet, self.most = quiet, most
        self._seq = itertools.count()
        self._wakeup = asyncio.Event()
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.processed = 0
        self._awaited: set[Hashable] = set()  # see first_pass
        self._first_pass: asyncio.Event | None = None

    def add(self, key: Hashable) -> None:
        """Process ``key`` soon (once, however often it is added)."""
        self._delayed_at.pop(key, None)
        self._soon.pop(key, None)
        if key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._ready.put_nowait(key)
            metrics.queue_added(self, key)

    def add_soon(self, key: Hashable) -> None:
        """Process ``key`` once its triggers have been quiet for ``quiet`` s, ``most`` s after the first at the latest.

        A key already waiting to run (not delayed) needs nothing more: it reads the latest state when it runs.
        """
        if key in self._queued and key not in self._active:
            return
        now = time.monotonic()
        first = self._soon.get(key, (now, 0.0))[0]
        due = min(now + self.quiet, first + self.most)
        self._soon[key] = (first, due)
        heapq.heappush(self._soon_heap, (due, next(self._seq), key))
        self._wakeup.set()

    def add_after(self, key: Hashable, delay: float) -> None:
        """Process ``key`` after ``delay`` seconds unless something earlier is due."""
        if delay <= 0:
            self.add(key)
            return
        due = time.monotonic() + delay
        current = self._delayed_at.get(key)
        if current is not None and current <= due:
            return
        self._delayed_at[key] = due
        heapq.heappush(self._delayed, (due, next(self._seq), key))
        self._wakeup.set()

    def backoff(self, key: Hashable) -> float:
        """Record a failure of ``key`` and requeue it with exponential backoff."""
        n = self._failures.get(key, 0) + 1
        self._failures[key] = n
        metrics.queue_retried(self, key)
        delay = min(self.base_delay * 2 ** (n - 1), self.max_delay)
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """Reset the failure count of ``key`` after a success."""
        self._failures.pop(key, None)

    def first_pass(self, keys: Iterable[Hashable]) -> asyncio.Event:
        """An event set once each of ``keys`` has been handled at least once (at once when there are none).

        For the operator's start: when every object of the first listing has been reconciled.
        """
        self._awaited = set(keys)
        self._first_pass = asyncio.Event()
        if not self._awaited:
            self._first_pass.set()
        return self._first_pass

    def busy(self) -> bool:
        """Whether a key is queued or being processed now (delayed keys do not count)."""
        return bool(self._queued or self._active or self._soon)

    def pending(self) -> int:
        return len(self._queued) + len(self._active) + len(self._delayed_at) + len(self._soon)

    async def _timer(self) -> None:
        while True:
            now = time.monotonic()
            while self._delayed and self._delayed[0][0] <= now:
                due, _, key = heapq.heappop(self._delayed)
                if self._delayed_at.get(key) == due:
                    del self._delayed_at[key]
                    self.add(key)
            while self._soon_heap and self._soon_heap[0][0] <= now:
                due, _, key = heapq.heappop(self._soon_heap)
                waiting = self._soon.get(key)
                if waiting is not None and waiting[1] == due:  # else: pushed back by a later trigger, or taken
                    self.add(key)
            heads = [heap[0][0] for heap in (self._delayed, self._soon_heap) if heap]
            timeout = min(heads) - now if heads else None
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except TimeoutError:
                pass

    async def _worker(self, handle: Callable[[Hashable], Awaitable[None]]) -> None:
        while True:
            key = await self._ready.get()
            self._queued.discard(key)
            self._active.add(key)
            metrics.queue_started(self, key)
            try:
                await handle(key)
            finally:
                metrics.queue_done(self, key)
                self._active.discard(key)
                self.processed += 1
                if self._awaited:
                    self._awaited.discard(key)
                    if not self._awaited and self._first_pass is not None:
                        self._first_pass.set()
                if key in self._dirty:
                    self._dirty.discard(key)
                    self.add(key)

    async def run(self, handle: Callable[[Hashable], Awaitable[None]], workers: int = 4) -> None:
        """Run ``workers`` workers calling ``handle(key)`` until cancelled.

        ``handle`` must not raise; errors are the caller's to classify and
        turn into :meth:`backoff` calls.
        """
        tasks = [asyncio.create_task(self._timer())]
        tasks += [asyncio.create_task(self._worker(handle)) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def idle(self, settle: float = 0.05, timeout: float = 30.0) -> None:
        """Wait until nothing is queued, running or gathering triggers (delayed keys may remain)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._queued and not self._active and not self._soon:
                await asyncio.sleep(settle)
                if not self._queued and not self._active and not self._soon:
                    return
            await asyncio.sleep(settle)
        raise TimeoutError("work queue did not settle")
