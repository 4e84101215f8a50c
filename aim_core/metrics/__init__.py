"""Prometheus metrics of the operator.

Every operator process (or every operator run inside one process, as in tests
and benchmarks) has a :class:`Metrics` of its own with a registry of its own,
never prometheus_client's global one, so two runs never collide. The running
one is found through a context variable that ``aim_core.operator.run`` sets;
code running outside an operator records into a process-wide default nobody
serves.

Three modules, re-exported here so that callers write ``from aim_core import
metrics`` and ``metrics.api_request(...)``:

* :mod:`~aim_core.metrics.recorders`: what the hot paths (API client, work
  queue, engine, registry transport, plugin hooks) call, one line each; labels
  never name an object, only a controller, kind, verb, code, host, hook or plugin;
* :mod:`~aim_core.metrics.families`: :class:`Metrics`, the families and their
  registry;
* :mod:`~aim_core.metrics.collectors`: what is read from state at scrape time
  (queue depth, objects per ``status.status``, workers busy), not kept by hand.

Family names follow controller-runtime and client-go where one exists
(``controller_runtime_*``, ``workqueue_*``, ``rest_client_*``,
``leader_election_master_status``) so their dashboards work; ours start with
``aim_``. docs/metrics.md lists them all.
"""

from aim_core.metrics.collectors import QUEUE_NAME, UNSET
from aim_core.metrics.families import (
    CONTENT_TYPE,
    HOOK_BUCKETS,
    QUEUE_BUCKETS,
    RECONCILE_BUCKETS,
    REST_BUCKETS,
    Metrics,
    QueueStats,
)
from aim_core.metrics.recorders import (
    activate,
    api_errors,
    api_request,
    current,
    deactivate,
    engine_started,
    event_coalesced,
    event_dropped,
    event_queue_depth,
    event_sent,
    hook_called,
    leading,
    queue_added,
    queue_done,
    queue_retried,
    queue_started,
    reconciled,
    registry_errors,
    registry_failure,
    registry_response,
    timed_hook,
    timed_reconcile,
)

__all__ = [
    "CONTENT_TYPE",
    "HOOK_BUCKETS",
    "QUEUE_BUCKETS",
    "QUEUE_NAME",
    "RECONCILE_BUCKETS",
    "REST_BUCKETS",
    "UNSET",
    "Metrics",
    "QueueStats",
    "activate",
    "api_errors",
    "api_request",
    "current",
    "deactivate",
    "engine_started",
    "event_coalesced",
    "event_dropped",
    "event_queue_depth",
    "event_sent",
    "hook_called",
    "leading",
    "queue_added",
    "queue_done",
    "queue_retried",
    "queue_started",
    "reconciled",
    "registry_errors",
    "registry_failure",
    "registry_response",
    "timed_hook",
    "timed_reconcile",
]
