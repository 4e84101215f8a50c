"""Garbage collection for an operator whose heap is mostly a store of JSON trees.

CPython's cyclic collector runs a full collection each time the heap has grown
by a quarter since the last one, and a full collection traverses every
container the process holds. While a burst of new services fills the store
that is several full passes over a growing heap: in the process benchmark
(1,000 services created at once) 5 full collections took 1.0 s of the
operator's 4.7 s of CPU, one of them pausing everything for 360 ms.

The store's objects form no reference cycles: reference counting frees them
the moment they are replaced. Cycles come from the event loop and the HTTP
client (futures, exceptions and their tracebacks) and die young. So:

* the young generations collect as usual, the first one less often
  (``YOUNG_THRESHOLD`` allocations instead of 700: most short-lived objects
  are freed by reference counting before a pass would look at them);
* the oldest generation is not collected automatically; :func:`collect_old`
  collects it when the work queue is idle, at most every ``min_interval``
  seconds, and at least every ``max_interval`` seconds even under load, and
  only when something was promoted into it since the last time. A settled
  operator therefore spends nothing on it.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable

log = logging.getLogger("aim_engine.operator")

YOUNG_THRESHOLD = 10_000  # allocations minus deallocations between passes over the youngest generation
MIDDLE_THRESHOLD = 10  # youngest passes between passes over the middle one (CPython's default)
NEVER = 2**31 - 1  # the oldest generation's threshold: never reached, collect_old() does it


def configure() -> tuple[int, int, int]:
    """Apply the thresholds; return the previous ones (to restore them, e.g. in tests)."""
    previous = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, NEVER)
    return previous  # type: ignore[return-value]


def old_generation_pending() -> bool:
    """Whether objects were promoted into the oldest generation since it was last collected."""
    return gc.get_count()[2] > 0


async def collect_old(
    idle: Callable[[], bool],
    *,
    min_interval: float = 60.0,
    max_interval: float = 600.0,
    poll: float = 5.0,
) -> None:
    """Collect the oldest generation now and then, preferably while nothing is being reconciled (forever)."""
    last = time.monotonic()
    while True:
        await asyncio.sleep(poll)
        if not old_generation_pending():
            continue
        waited = time.monotonic() - last
        if waited < min_interval or (not idle() and waited < max_interval):
            continue
        started = time.perf_counter()
        found = gc.collect()
        last = time.monotonic()
        log.debug(
            "full garbage collection: %d unreachable objects in %.0f ms", found, (time.perf_counter() - started) * 1000
        )
