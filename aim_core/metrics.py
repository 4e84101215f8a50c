"""Prometheus metrics of the operator.

Every operator process (or every operator run inside one process, as in tests
and benchmarks) has a :class:`Metrics` of its own with a registry of its own,
never prometheus_client's global one, so two runs never collide. The running
one is found through a context variable that ``aim_core.operator.run`` sets;
code running outside an operator records into a process-wide default nobody
serves.

The hot paths (API client, work queue, engine, registry transport, plugin
hooks) call the module-level functions below, one line each. They cost a few
dictionary lookups and a histogram observation; labels never name an object,
only a controller, kind, verb, code, host, hook or plugin. What can be read
from state (queue depth, objects per ``status.status``, workers busy) is
computed at scrape time by collectors, not kept by hand.

Family names follow controller-runtime and client-go where one exists
(``controller_runtime_*``, ``workqueue_*``, ``rest_client_*``,
``leader_election_master_status``) so their dashboards work; ours start with
``aim_``. docs/metrics.md lists them all.
"""

from __future__ import annotations

import contextvars
import functools
import time
import urllib.parse
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from aim_core.resources import JOBS

__all__ = ["CONTENT_TYPE", "Metrics", "activate", "current"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# controller-runtime's buckets, so the same dashboards and alerts apply.
RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
                     0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30,
                     40, 50, 60)
QUEUE_BUCKETS = tuple(1e-8 * 10 ** i for i in range(12))  # 10ns .. 1000s, as client-go's workqueue
REST_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
HOOK_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0)

QUEUE_NAME = "aim-engine"  # label of keys that name no controller
UNSET = "None"  # the status label of objects that have no status.status yet


class Metrics:
    """The metric families of one operator, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        # controller-runtime: reconciles
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total", "Reconciles per controller and result "
            "(success, error, requeue_after).", ["controller", "result"], registry=r)
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total", "Reconciles that ended in an error or asked for a retry "
            "with backoff.", ["controller"], registry=r)
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds", "Time one reconcile took.", ["controller"],
            buckets=RECONCILE_BUCKETS, registry=r)
        # client-go workqueue
        self.queue_adds = Counter("workqueue_adds_total", "Keys added to the work queue.", ["name"], registry=r)
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds", "Time a key waits in the queue before a worker takes it.",
            ["name"], buckets=QUEUE_BUCKETS, registry=r)
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds", "Time a worker spends on one key.", ["name"],
            buckets=QUEUE_BUCKETS, registry=r)
        self.queue_retries = Counter("workqueue_retries_total", "Keys requeued with backoff after a failure.",
                                     ["name"], registry=r)
        # client-go rest client
        self.rest_requests = Counter(
            "rest_client_requests_total", "Requests to the API server by status code, method and host "
            "(code <error> when no answer came).", ["code", "method", "host"], registry=r)
        self.rest_latency = Histogram(
            "rest_client_request_duration_seconds", "Time from sending a request to the API server to its "
            "answer.", ["verb", "host"], buckets=REST_BUCKETS, registry=r)
        # client-go leader election
        self.leader = Gauge("leader_election_master_status", "1 while this replica holds the leader Lease, "
                            "else 0 (only with --leader-elect).", ["name"], registry=r)
        # ours
        self.registry_requests = Counter(
            "aim_registry_requests_total", "HTTP requests to image registries (and their token services) by "
            "registry host, method and status code (code <error> when no answer came).",
            ["host", "method", "code"], registry=r)
        self.registry_failures = Counter(
            "aim_registry_failures_total", "Registry operations that failed, by registry host and reason.",
            ["host", "reason"], registry=r)
        self.jobs_created = Counter(
            "aim_jobs_created_total", "Jobs the operator started (discovery, download, check-size) while this "
            "replica reconciled.", ["type"], registry=r)
        self.jobs_finished = Counter(
            "aim_jobs_finished_total", "Jobs of the operator that finished, by type and result "
            "(succeeded, failed).", ["type", "result"], registry=r)
        self.hook_calls = Counter("aim_plugin_hook_calls_total", "Plugin hook implementations called.",
                                  ["hook", "plugin"], registry=r)
        self.hook_errors = Counter("aim_plugin_hook_errors_total", "Plugin hook implementations that raised.",
                                   ["hook", "plugin"], registry=r)
        self.hook_time = Histogram("aim_plugin_hook_duration_seconds", "Time one plugin hook implementation took.",
                                   ["hook", "plugin"], buckets=HOOK_BUCKETS, registry=r)
        self.queue_stats: dict[int, QueueStats] = {}
        self.workers = _Workers(self)
        r.register(self.workers)
        r.register(_QueueCollector(self))
        self._objects: _ObjectsCollector | None = None
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
            self._objects = _ObjectsCollector(store, tuple(kinds))
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

    def reconciled(self, controller: str, requeue: Any, error: BaseException | None, seconds: float) -> None:
        children = self._reconcile_children.get(controller)
        if children is None:
            children = self._reconcile_children[controller] = (
                self.reconcile_total.labels(controller, "success"),
                self.reconcile_total.labels(controller, "error"),
                self.reconcile_total.labels(controller, "requeue_after"),
                self.reconcile_errors.labels(controller),
                self.reconcile_time.labels(controller),
            )
        success, error_total, requeue_after, errors, duration = children
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
                self.rest_requests.labels(str(code), method, host), self.rest_latency.labels(method, host))
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
        self.metrics.queue_adds.labels(_name(key)).inc()

    def start(self, key: Hashable) -> None:
        now = time.monotonic()
        added = self.added.pop(key, None)
        if added is not None:
            self.metrics.queue_latency.labels(_name(key)).observe(now - added)
        self.started[key] = now

    def done(self, key: Hashable) -> None:
        started = self.started.pop(key, None)
        if started is not None:
            self.metrics.work_duration.labels(_name(key)).observe(time.monotonic() - started)

    def retry(self, key: Hashable) -> None:
        self.metrics.queue_retries.labels(_name(key)).inc()


def _name(key: Hashable) -> str:
    """The queue label of a key: the controller it belongs to, as controller-runtime has a queue per controller."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return key[0]
    return QUEUE_NAME


class _QueueCollector(Collector):
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Any]:
        now = time.monotonic()
        depth = GaugeMetricFamily("workqueue_depth", "Keys waiting in the work queue.", labels=["name"])
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds", "Seconds of work in progress not yet finished (summed over the "
            "keys being worked on); a large value means stuck workers.", labels=["name"])
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds", "How long the longest-running worker has been on its "
            "key.", labels=["name"])
        waiting: dict[str, int] = {name: 0 for name in self.metrics.workers.controllers}
        busy: dict[str, list[float]] = {name: [] for name in self.metrics.workers.controllers}
        for stats in list(self.metrics.queue_stats.values()):
            for key in list(stats.added):
                name = _name(key)
                waiting[name] = waiting.get(name, 0) + 1
            for key, started in list(stats.started.items()):
                busy.setdefault(_name(key), []).append(now - started)
        for name in sorted(waiting.keys() | busy.keys()):
            depth.add_metric([name], waiting.get(name, 0))
            runs = busy.get(name) or []
            unfinished.add_metric([name], sum(runs))
            longest.add_metric([name], max(runs, default=0.0))
        yield depth
        yield unfinished
        yield longest


class _Workers(Collector):
    """``max_concurrent_reconciles`` and ``active_workers`` per controller (all controllers share the workers)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.controllers: tuple[str, ...] = ()
        self.count = 0

    def collect(self) -> Iterator[Any]:
        limit = GaugeMetricFamily(
            "controller_runtime_max_concurrent_reconciles", "Workers reconciling at most at once (shared by all "
            "controllers of the operator).", labels=["controller"])
        active = GaugeMetricFamily("controller_runtime_active_workers", "Workers reconciling right now.",
                                   labels=["controller"])
        running: dict[str, int] = {}
        for stats in list(self.metrics.queue_stats.values()):
            for key in list(stats.started):
                running[_name(key)] = running.get(_name(key), 0) + 1
        for name in self.controllers:
            limit.add_metric([name], self.count)
            active.add_metric([name], running.get(name, 0))
        yield limit
        yield active


class _ObjectsCollector(Collector):
    def __init__(self, store: Any, kinds: tuple[Any, ...]) -> None:
        self.store = store
        self.kinds = kinds

    def collect(self) -> Iterator[Any]:
        family = GaugeMetricFamily("aim_objects", "AIM objects in the operator's cache per kind and status.status "
                                   f"({UNSET}: no status yet).", labels=["kind", "status"])
        for ref in self.kinds:
            counts: dict[str, int] = {}
            for obj in self.store.list(ref):
                status = (obj.get("status") or {}).get("status") or UNSET
                counts[status] = counts.get(status, 0) + 1
            for status, n in sorted(counts.items()):
                family.add_metric([ref.kind, str(status)], n)
        yield family


def _job_type(job: dict[str, Any]) -> str | None:
    from aim_core.artifact.children import COMPONENT_CHECK_SIZE, COMPONENT_DOWNLOAD
    from aim_core.reconcile.labels import CACHE_TYPE_LABEL, COMPONENT_LABEL
    from aim_core.template.discovery import is_discovery_job

    labels = (job.get("metadata") or {}).get("labels") or {}
    if labels.get(CACHE_TYPE_LABEL) == "artifact" and labels.get(COMPONENT_LABEL) in (COMPONENT_DOWNLOAD,
                                                                                        COMPONENT_CHECK_SIZE):
        return labels[COMPONENT_LABEL]
    if is_discovery_job(job):
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


# ---------------------------------------------------------------------------
# The running operator's metrics, and one-line recorders for the hot paths
# ---------------------------------------------------------------------------

_default: Metrics | None = None
_current: contextvars.ContextVar[Metrics | None] = contextvars.ContextVar("aim_metrics", default=None)


def current() -> Metrics:
    """The metrics of the operator this code runs in (a process-wide default outside one)."""
    metrics = _current.get()
    if metrics is not None:
        return metrics
    global _default
    if _default is None:
        _default = Metrics()
    return _default


def activate(metrics: Metrics) -> contextvars.Token[Metrics | None]:
    """Make ``metrics`` the current ones for this task and every task it starts from now on."""
    return _current.set(metrics)


def reconciled(controller: str, requeue: Any, error: BaseException | None, started: float) -> None:
    """A reconcile of ``controller`` ended: ``requeue`` as returned (``"backoff"``: retry), or ``error``."""
    current().reconciled(controller, requeue, error, time.monotonic() - started)


def timed_reconcile(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``Engine.reconcile(self, controller, namespace, name)``: count and time each reconcile."""

    @functools.wraps(fn)
    async def wrapper(self: Any, controller: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = await fn(self, controller, *args, **kwargs)
        except BaseException as exc:
            reconciled(controller.name, None, exc, started)
            raise
        reconciled(controller.name, result, None, started)
        return result

    return wrapper


def api_request(method: str, server: str, code: Any, started: float) -> None:
    """A request to the API server ``server`` (its URL) got an answer with status ``code``."""
    current().api_request(method, _host(server), code, time.monotonic() - started)


@functools.lru_cache(maxsize=64)
def _host(server: str) -> str:
    return urllib.parse.urlsplit(server).netloc or server


def api_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``Kube._request(self, verb, method, ...)``: count requests that got no answer as code ``<error>``."""
    from aim_core.reconcile.errors import NetworkError

    @functools.wraps(fn)
    async def wrapper(self: Any, verb: str, method: str, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return await fn(self, verb, method, *args, **kwargs)
        except NetworkError:
            api_request(method, self.credentials.server, "<error>", started)
            raise

    return wrapper


def queue_added(queue: Any, key: Hashable) -> None:
    current().queue(queue).add(key)


def queue_started(queue: Any, key: Hashable) -> None:
    current().queue(queue).start(key)


def queue_done(queue: Any, key: Hashable) -> None:
    current().queue(queue).done(key)


def queue_retried(queue: Any, key: Hashable) -> None:
    current().queue(queue).retry(key)


def engine_started(controllers: Iterable[str], workers: int) -> None:
    """The engine runs ``workers`` workers for ``controllers``."""
    w = current().workers
    w.controllers, w.count = tuple(sorted(controllers)), workers


def leading(name: str, holding: bool) -> None:
    """Whether this replica holds the leader Lease ``name``."""
    current().leading(name, holding)


def registry_response(host: str, method: str, code: Any) -> None:
    """A registry (or its token service) answered a request with ``code``, or not at all (``"<error>"``)."""
    current().registry_requests.labels(host, method, str(code)).inc()


def registry_failure(host: str, reason: str) -> None:
    """A registry operation failed with a RegistryError of ``reason``."""
    current().registry_failures.labels(host, reason or "Unknown").inc()


def hook_called(hook: str, plugin: str, seconds: float, failed: bool) -> None:
    metrics = current()
    metrics.hook_calls.labels(hook, plugin).inc()
    metrics.hook_time.labels(hook, plugin).observe(seconds)
    if failed:
        metrics.hook_errors.labels(hook, plugin).inc()


def registry_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a registry transport's request method: count the RegistryErrors it ends in, by host and reason."""

    @functools.wraps(fn)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(self, *args, **kwargs)
        except Exception as exc:
            registry_failure(str(getattr(exc, "registry", None) or self.registry),
                             str(getattr(exc, "reason", None) or type(exc).__name__))
            raise

    return wrapper


def timed_hook(hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a plugin's hook implementation), counting and timing each call."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            hook_called(hook, plugin, time.monotonic() - started, True)
            raise
        hook_called(hook, plugin, time.monotonic() - started, False)
        return result

    wrapper.__aim_timed__ = True  # type: ignore[attr-defined]
    return wrapper
