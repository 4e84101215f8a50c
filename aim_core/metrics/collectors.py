"""What a scrape computes from the operator's state instead of it being kept by hand.

Queue depth and work in progress per controller, the workers' limit and how many
are busy, and the AIM objects in the store per kind and ``status.status``
(``aim_objects``): each collector reads its source when Prometheus scrapes, so
nothing on the hot paths maintains them.
"""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterator, Mapping
from typing import Any, Protocol

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

QUEUE_NAME = "aim-engine"  # label of keys that name no controller
UNSET = "None"  # the status label of objects that have no status.status yet


def queue_name(key: Hashable) -> str:
    """The queue label of a key: the controller it belongs to, as controller-runtime has a queue per controller."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return key[0]
    return QUEUE_NAME


class Metrics(Protocol):
    """What the queue collectors read of :class:`aim_core.metrics.families.Metrics`."""

    @property
    def queue_stats(self) -> Mapping[Any, Any]: ...

    @property
    def workers(self) -> Workers: ...


class QueueCollector(Collector):
    """``workqueue_depth``, ``workqueue_unfinished_work_seconds`` and ``workqueue_longest_running_processor_seconds``."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        now = time.monotonic()
        depth = GaugeMetricFamily("workqueue_depth", "Keys waiting in the work queue.", labels=["name"])
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "Seconds of work in progress not yet finished (summed over the "
            "keys being worked on); a large value means stuck workers.",
            labels=["name"],
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How long the longest-running worker has been on its key.",
            labels=["name"],
        )
        waiting: dict[str, int] = {name: 0 for name in self.metrics.workers.controllers}
        busy: dict[str, list[float]] = {name: [] for name in self.metrics.workers.controllers}
        for stats in list(self.metrics.queue_stats.values()):
            for key in list(stats.added):
                name = queue_name(key)
                waiting[name] = waiting.get(name, 0) + 1
            for key, started in list(stats.started.items()):
                busy.setdefault(queue_name(key), []).append(now - started)
        for name in sorted(waiting.keys() | busy.keys()):
            depth.add_metric([name], waiting.get(name, 0))
            runs = busy.get(name) or []
            unfinished.add_metric([name], sum(runs))
            longest.add_metric([name], max(runs, default=0.0))
        yield depth
        yield unfinished
        yield longest


class Workers(Collector):
    """``max_concurrent_reconciles`` and ``active_workers`` per controller (all controllers share the workers)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.controllers: tuple[str, ...] = ()
        self.count = 0

    def collect(self) -> Iterator[Any]:
        limit = GaugeMetricFamily(
            "controller_runtime_max_concurrent_reconciles",
            "Workers reconciling at most at once (shared by all controllers of the operator).",
            labels=["controller"],
        )
        active = GaugeMetricFamily(
            "controller_runtime_active_workers", "Workers reconciling right now.", labels=["controller"]
        )
        running: dict[str, int] = {}
        for stats in list(self.metrics.queue_stats.values()):
            for key in list(stats.started):
                running[queue_name(key)] = running.get(queue_name(key), 0) + 1
        for name in self.controllers:
            limit.add_metric([name], self.count)
            active.add_metric([name], running.get(name, 0))
        yield limit
        yield active


class ObjectsCollector(Collector):
    """``aim_objects``: the objects of ``kinds`` in the store, per kind and ``status.status``."""

    def __init__(self, store: Any, kinds: tuple[Any, ...]) -> None:
        self.store = store
        self.kinds = kinds

    def collect(self) -> Iterator[Any]:
        family = GaugeMetricFamily(
            "aim_objects",
            f"AIM objects in the operator's cache per kind and status.status ({UNSET}: no status yet).",
            labels=["kind", "status"],
        )
        for ref in self.kinds:
            counts: dict[str, int] = {}
            for obj in self.store.list(ref):
                status = (obj.get("status") or {}).get("status") or UNSET
                counts[status] = counts.get(status, 0) + 1
            for status, n in sorted(counts.items()):
                family.add_metric([ref.kind, str(status)], n)
        yield family
