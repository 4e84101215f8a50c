"""The metric families of one operator, in a registry of their own, and what records into them.

:class:`Metrics` holds the counters and histograms the hot paths add to (through
:mod:`aim_core.metrics.recorders`) and registers the scrape-time collectors of
:mod:`aim_core.metrics.collectors`. Family names follow controller-runtime and
client-go where one exists, so their dashboards work; ours start with ``aim_``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Hashable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from aim_core.metrics.collectors import ObjectsCollector, QueueCollector, Workers, queue_name
from aim_core.reconcile.resources import JOBS

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# controller-runtime's buckets, so the same dashboards and alerts apply.
RECONCILE_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.15,
    0.2,
    0.25,
    0.3,
    0.35,
    0.4,
    0.45,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5,
    6,
    7,
    8,
    9,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
)
QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))  # 10ns .. 1000s, as client-go's workqueue
REST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
HOOK_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)


class Metrics:
    """The metric families of one operator, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        # controller-runtime: reconciles
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Reconciles per controller and result (success, error, requeue_after).",
            ["controller", "result"],
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Reconciles that ended in an error or asked for a retry with backoff.",
            ["controller"],
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Time one reconcile took.",
            ["controller"],
            buckets=RECONCILE_BUCKETS,
            registry=r,
        )
        # client-go workqueue
        self.queue_adds = Counter("workqueue_adds_total", "Keys added to the work queue.", ["name"], registry=r)
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds",
            "Time a key waits in the queue before a worker takes it.",
            ["name"],
            buckets=QUEUE_BUCKETS,
            registry=r,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "Time a worker spends on one key.",
            ["name"],
            buckets=QUEUE_BUCKETS,
            registry=r,
        )
        self.queue_retries = Counter(
            "workqueue_retries_total", "Keys requeued with backoff after a failure.", ["name"], registry=r
        )
        # client-go rest client
        self.rest_requests = Counter(
            "rest_client_requests_total",
            "Requests to the API server by status code, method and host (code <error> when no answer came).",
            ["code", "method", "host"],
            registry=r,
        )
        self.rest_latency = Histogram(
            "rest_client_request_duration_seconds",
            "Time from sending a request to the API server to its answer.",
            ["verb", "host"],
            buckets=REST_BUCKETS,
            registry=r,
        )
        # client-go leader election
        self.leader = Gauge(
            "leader_election_master_status",
            "1 while this replica holds the leader Lease, else 0 (only with --leader-elect).",
            ["name"],
            registry=r,
        )
        # ours
        self.registry_requests = Counter(
            "aim_registry_requests_total",
            "HTTP requests to image registries (and their token services) by "
            "registry host, method and status code (code <error> when no answer came).",
            ["host", "method", "code"],
            registry=r,
        )
        self.registry_failures = Counter(
            "aim_registry_failures_total",
            "Registry operations that failed, by registry host and reason.",
            ["host", "reason"],
            registry=r,
        )
        self.jobs_created = Counter(
            "aim_jobs_created_total",
            "Jobs the operator started (discovery, download, check-size) while this replica reconciled.",
            ["type"],
            registry=r,
        )
        self.jobs_finished = Counter(
            "aim_jobs_finished_total",
            "Jobs of the operator that finished, by type and result (succeeded, failed).",
            ["type", "result"],
            registry=r,
        )
        self.hook_calls = Counter(
            "aim_plugin_hook_calls_total", "Plugin hook implementations called.", ["hook", "plugin"], registry=r
        )
        self.hook_errors = Counter(
            "aim_plugin_hook_errors_total", "Plugin hook implementations that raised.", ["hook", "plugin"], registry=r
        )
        self.hook_time = Histogram(
            "aim_plugin_hook_duration_seconds",
            "Time one plugin hook implementation took.",
            ["hook", "plugin"],
            buckets=HOOK_BUCKETS,
            registry=r,
        )
        # the Event recorder (aim_core.runtime.recorder)
        self.events_sent = Counter(
            "aim_events_sent_total",
            "Event requests the operator's Event recorder sent: create (a new Event), patch (count and "
            "lastTimestamp of an Event already posted, for a repeat).",
            ["action"],
            registry=r,
        )
        self.events_coalesced = Counter(
            "aim_events_coalesced_total",
            "Events folded into an equal one still waiting to be sent (its count grew; no request).",
            registry=r,
        )
        self.events_dropped = Counter(
            "aim_events_dropped_total",
            "Events not posted, by reason: queue_full (the oldest waiting one made room), namespace_terminating, "
            "not_leader, shutdown (not sent within the flush timeout), failed (the API server refused or did not "
            "answer).",
            ["reason"],
            registry=r,
        )
        self.event_queue_depth = Gauge(
            "aim_event_queue_depth", "Events waiting in the Event recorder's queue to be sent.", registry=r
        )
        self.queue_stats: dict[int, QueueStats] = {}
        self.workers = Workers(self)
        r.register(self.workers)
        r.register(QueueCollector(self))
        self._objects: ObjectsCollector | None = None
        self._reconcile_children: dict[str, tuple[Any, Any, Any, Any, Any]] = {}
        self._rest_children: dict[tuple[str, str, Any], tuple[Any, Any]] = {}
        self._leading = True  # without leader election this replica always reconciles

    # ------------------------------------------------------------ exposition

    def exposition(self) -> bytes:
        """The registry in Prometheus' text format."""
        return generate_latest(self.registry)

    def family_names(self) -> set[str]:
        """The name of every family a scrape shows (counters with their ``_total``), for docs and tests."""
        return {family.name + ("_total" if family.type == "counter" else "") for family in self.registry.collect()}

    # -------------------------------------------------------------- binding

    def watch_store(self, store: Any, kinds: Iterable[Any]) -> None:
        """Count objects of ``kinds`` per ``status.status`` at scrape time, and the operator's Jobs as they change."""
        if self._objects is None:
            self._objects = ObjectsCollector(store, tuple(kinds))
            self.registry.register(self._objects)
        store.subscribe(functools.partial(self._on_change, store))

    def _on_change(self, store: Any, ref: Any, event: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if ref != JOBS or event == "DELETED" or JOBS not in store.synced:
            return  # the initial listing is what exists, not what was created
        job_type = _job_type(obj)
        if job_type is None:
            return
        if event == "ADDED" and self._leading:
            self.jobs_created.labels(job_type).inc()
        result = _job_result(obj)
        if result is not None and (old is None or _job_result(old) is None):
            self.jobs_finished.labels(job_type, result).inc()

    # -------------------------------------------------------------- recorders

    def _reconcile_series(self, controller: str) -> tuple[Any, Any, Any, Any, Any]:
        children = self._reconcile_children.get(controller)
        if children is None:
            children = self._reconcile_children[controller] = (
                self.reconcile_total.labels(controller, "success"),
                self.reconcile_total.labels(controller, "error"),
                self.reconcile_total.labels(controller, "requeue_after"),
                self.reconcile_errors.labels(controller),
                self.reconcile_time.labels(controller),
            )
        return children

    def controllers_started(self, controllers: Iterable[str]) -> None:
        """Every reconcile series of ``controllers`` at 0, as controller-runtime starts them: dashboards and
        alerts (``rate(...{result="error"})``) see a series before the first reconcile, on standbys too."""
        for controller in controllers:
            self._reconcile_series(controller)

    def reconciled(self, controller: str, requeue: Any, error: BaseException | None, seconds: float) -> None:
        success, error_total, requeue_after, errors, duration = self._reconcile_series(controller)
        duration.observe(seconds)
        if error is not None or requeue == "backoff":
            error_total.inc()
            errors.inc()
        elif requeue is not None:
            requeue_after.inc()
        else:
            success.inc()

    def api_request(self, method: str, host: str, code: Any, seconds: float) -> None:
        key = (method, host, code)
        children = self._rest_children.get(key)
        if children is None:
            children = self._rest_children[key] = (
                self.rest_requests.labels(str(code), method, host),
                self.rest_latency.labels(method, host),
            )
        children[0].inc()
        children[1].observe(seconds)

    def leading(self, name: str, holding: bool) -> None:
        self._leading = holding
        self.leader.labels(name).set(1 if holding else 0)

    def queue(self, queue: Any) -> QueueStats:
        stats = self.queue_stats.get(id(queue))
        if stats is None or stats.queue is not queue:
            stats = self.queue_stats[id(queue)] = QueueStats(self, queue)
        return stats


class QueueStats:
    """When each queued key was added and each running key was taken, for latencies and scrape-time gauges."""

    def __init__(self, metrics: Metrics, queue: Any) -> None:
        self.metrics = metrics
        self.queue = queue
        self.added: dict[Hashable, float] = {}
        self.started: dict[Hashable, float] = {}

    def add(self, key: Hashable) -> None:
        self.added[key] = time.monotonic()
        self.metrics.queue_adds.labels(queue_name(key)).inc()

    def start(self, key: Hashable) -> None:
        now = time.monotonic()
        added = self.added.pop(key, None)
        if added is not None:
            self.metrics.queue_latency.labels(queue_name(key)).observe(now - added)
        self.started[key] = now

    def done(self, key: Hashable) -> None:
        started = self.started.pop(key, None)
        if started is not None:
            self.metrics.work_duration.labels(queue_name(key)).observe(time.monotonic() - started)

    def retry(self, key: Hashable) -> None:
        self.metrics.queue_retries.labels(queue_name(key)).inc()


def _job_type(job: dict[str, Any]) -> str | None:
    from aim_core.reconcile import labels as lbl

    labels = (job.get("metadata") or {}).get("labels") or {}
    if labels.get(lbl.CACHE_TYPE_LABEL) == "artifact" and labels.get(lbl.COMPONENT_LABEL) in (
        lbl.ARTIFACT_DOWNLOAD,
        lbl.ARTIFACT_CHECK_SIZE,
    ):
        return labels[lbl.COMPONENT_LABEL]
    if all(labels.get(k) == v for k, v in lbl.DISCOVERY_JOB_LABELS.items()):
        return "discovery"
    return None


def _job_result(job: dict[str, Any]) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("status") == "True":
            if c.get("type") in ("Complete", "SuccessCriteriaMet"):
                return "succeeded"
            if c.get("type") in ("Failed", "FailureTarget"):
                return "failed"
    return None
