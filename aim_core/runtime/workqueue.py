"""A keyed work queue: de-duplicated, one worker per key at a time, delayed requeue.

The same guarantees controller-runtime's queue gives: a key enqueued many
times before a worker takes it is processed once; a key enqueued while it is
being processed runs again right after; failures back off exponentially per
key; a later explicit ``add`` resets nothing but runs sooner.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable, Callable, Hashable

from aim_core import metrics


class WorkQueue:
    def __init__(self, *, base_delay: float = 0.5, max_delay: float = 300.0) -> None:
        self._ready: asyncio.Queue[Hashable] = asyncio.Queue()
        self._queued: set[Hashable] = set()
        self._active: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._delayed: list[tuple[float, int, Hashable]] = []
        self._delayed_at: dict[Hashable, float] = {}
        self._failures: dict[Hashable, int] = {}
        self._seq = itertools.count()
        self._wakeup = asyncio.Event()
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.processed = 0

    def add(self, key: Hashable) -> None:
        """Process ``key`` soon (once, however often it is added)."""
        self._delayed_at.pop(key, None)
        if key in self._active:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._ready.put_nowait(key)
            metrics.queue_added(self, key)

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

    def busy(self) -> bool:
        """Whether a key is queued or being processed now (delayed keys do not count)."""
        return bool(self._queued or self._active)

    def pending(self) -> int:
        return len(self._queued) + len(self._active) + len(self._delayed_at)

    async def _timer(self) -> None:
        while True:
            now = time.monotonic()
            while self._delayed and self._delayed[0][0] <= now:
                due, _, key = heapq.heappop(self._delayed)
                if self._delayed_at.get(key) == due:
                    del self._delayed_at[key]
                    self.add(key)
            timeout = self._delayed[0][0] - now if self._delayed else None
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
        """Wait until nothing is queued or running (delayed keys may remain)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._queued and not self._active:
                await asyncio.sleep(settle)
                if not self._queued and not self._active:
                    return
            await asyncio.sleep(settle)
        raise TimeoutError("work queue did not settle")
