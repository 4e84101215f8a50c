"""aim_core.metrics: what each recorder adds to the families a scrape shows.

Each test activates a fresh :class:`Metrics` in its own context, reads the
text a scrape returns, and checks the samples a dashboard would plot.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from aim_core import hookimpl, metrics
from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import JOBS, RUNTIME_CONFIGS, SERVICES
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from aim_core.runtime.workqueue import WorkQueue
from aim_core.runtimeconfig.controller import RuntimeConfigController
from aim_core.template.discovery import JOB_LABELS


@pytest.fixture()
def m() -> metrics.Metrics:
    """Fresh metrics, current for this test (pytest-asyncio runs each test in a copy of this context)."""
    fresh = metrics.Metrics()
    token = metrics.activate(fresh)
    yield fresh
    metrics.deactivate(token)


def samples(m: metrics.Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by (sample name, sorted labels)."""
    found = {}
    for family in text_string_to_metric_families(m.exposition().decode()):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def value(m: metrics.Metrics, family: str, **labels: str) -> float | None:
    return samples(m).get((family, tuple(sorted(labels.items()))))


def test_two_metrics_do_not_share_samples():
    a, b = metrics.Metrics(), metrics.Metrics()
    a.reconciled("service", None, None, 0.01)
    assert value(a, "controller_runtime_reconcile_total", controller="service", result="success") == 1
    assert value(b, "controller_runtime_reconcile_total", controller="service", result="success") is None


def test_the_current_metrics_follow_the_context():
    a, b = metrics.Metrics(), metrics.Metrics()

    def record(target: metrics.Metrics) -> None:
        metrics.activate(target)
        metrics.leading("lease", True)

    contextvars.copy_context().run(record, a)
    contextvars.copy_context().run(record, b)
    assert value(a, "leader_election_master_status", name="lease") == 1
    assert value(b, "leader_election_master_status", name="lease") == 1
    assert metrics.current() is not a and metrics.current() is not b


class _Kube:
    """Writes succeed, or fail with ``error``."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error

    async def _write(self, ref: Any, namespace: Any, name: Any = None, body: Any = None, **_: Any) -> Any:
        if self.error is not None:
            raise self.error
        return None

    patch = create = apply = delete = _write


def _engine(kube: _Kube) -> Engine:
    engine = Engine(
        Context(store=Store(), kube=kube, plugins=None, operator_namespace="aim-system"), [RuntimeConfigController()]
    )
    engine.store.upsert(
        RUNTIME_CONFIGS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "default", "namespace": "team", "generation": 1, "resourceVersion": "1"},
            "spec": {},
        },
    )
    return engine


async def test_reconciles_are_counted_per_controller_and_result(m):
    ok = _engine(_Kube())
    await ok.handle(("runtime-config", "team", "default"))
    failing = _engine(_Kube(ApiError(500, "InternalError", "boom")))
    await failing.handle(("runtime-config", "team", "default"))
    assert value(m, "controller_runtime_reconcile_total", controller="runtime-config", result="success") == 1
    assert value(m, "controller_runtime_reconcile_total", controller="runtime-config", result="error") == 1
    assert value(m, "controller_runtime_reconcile_errors_total", controller="runtime-config") == 1
    assert value(m, "controller_runtime_reconcile_time_seconds_count", controller="runtime-config") == 2
    assert value(m, "workqueue_retries_total", name="runtime-config") == 1  # the failure backs off


async def test_queue_depth_latency_and_workers(m):
    queue = WorkQueue()
    release = asyncio.Event()
    started = asyncio.Event()

    async def handle(key):
        started.set()
        await release.wait()

    metrics.engine_started(["service", "model"], 2)
    for name in ("a", "b", "c"):
        queue.add(("service", "ns", name))
    queue.add(("service", "ns", "a"))  # de-duplicated: not another add
    assert value(m, "workqueue_adds_total", name="service") == 3
    assert value(m, "workqueue_depth", name="service") == 3
    task = asyncio.create_task(queue.run(handle, workers=2))
    await started.wait()
    await asyncio.sleep(0.01)
    assert value(m, "workqueue_depth", name="service") == 1  # two taken by the two workers
    assert value(m, "controller_runtime_active_workers", controller="service") == 2
    assert value(m, "controller_runtime_active_workers", controller="model") == 0
    assert value(m, "controller_runtime_max_concurrent_reconciles", controller="model") == 2
    assert value(m, "workqueue_longest_running_processor_seconds", name="service") > 0
    assert value(m, "workqueue_unfinished_work_seconds", name="service") > 0
    release.set()
    await queue.idle()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert value(m, "workqueue_depth", name="service") == 0
    assert value(m, "controller_runtime_active_workers", controller="service") == 0
    assert value(m, "workqueue_queue_duration_seconds_count", name="service") == 3
    assert value(m, "workqueue_work_duration_seconds_count", name="service") == 3


def _service(name: str, status: str | None) -> dict[str, Any]:
    obj = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {},
    }
    if status:
        obj["status"] = {"status": status}
    return obj


def test_objects_per_status_are_read_from_the_store_at_scrape_time(m):
    store = Store()
    m.watch_store(store, [SERVICES])
    for name, status in (("a", "Running"), ("b", "Running"), ("c", "Failed"), ("d", None)):
        store.upsert(SERVICES, _service(name, status))
    assert value(m, "aim_objects", kind="AIMService", status="Running") == 2
    assert value(m, "aim_objects", kind="AIMService", status="Failed") == 1
    assert value(m, "aim_objects", kind="AIMService", status=metrics.UNSET) == 1
    store.upsert(SERVICES, _service("c", "Running"))
    store.delete(SERVICES, "ns", "a")
    assert value(m, "aim_objects", kind="AIMService", status="Running") == 2
    assert value(m, "aim_objects", kind="AIMService", status="Failed") is None


def _job(name: str, labels: dict[str, str], condition: str | None = None) -> dict[str, Any]:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "ns", "labels": labels}}
    if condition:
        job["status"] = {"conditions": [{"type": condition, "status": "True"}]}
    return job


def test_jobs_created_and_finished_by_type_and_result(m):
    store = Store()
    m.watch_store(store, [SERVICES])
    store.replace_all(JOBS, [_job("old", JOB_LABELS)])  # the initial listing: not created by us now
    download = {"aim.eai.amd.com/cache.type": "artifact", "aim.eai.amd.com/component": "download"}
    store.upsert(JOBS, _job("d1", download))
    store.upsert(JOBS, _job("x1", JOB_LABELS))
    store.upsert(JOBS, _job("other", {"app": "somebody-elses"}))
    store.upsert(JOBS, _job("d1", download, "Complete"))
    store.upsert(JOBS, _job("d1", download, "Complete"))  # no change, no second count
    store.upsert(JOBS, _job("x1", JOB_LABELS, "Failed"))
    store.upsert(JOBS, _job("old", JOB_LABELS, "Complete"))
    assert value(m, "aim_jobs_created_total", type="download") == 1
    assert value(m, "aim_jobs_created_total", type="discovery") == 1
    assert value(m, "aim_jobs_finished_total", type="download", result="succeeded") == 1
    assert value(m, "aim_jobs_finished_total", type="discovery", result="failed") == 1
    assert value(m, "aim_jobs_finished_total", type="discovery", result="succeeded") == 1


def test_a_standby_replica_counts_no_created_jobs(m):
    store = Store()
    m.watch_store(store, [SERVICES])
    store.replace_all(JOBS, [])
    metrics.leading("3be10d2f.eai.amd.com", False)
    store.upsert(JOBS, _job("x1", JOB_LABELS))
    assert value(m, "aim_jobs_created_total", type="discovery") is None
    assert value(m, "leader_election_master_status", name="3be10d2f.eai.amd.com") == 0


class _Vendors:
    @hookimpl
    def aim_gpu_vendors(self):
        return []

    @hookimpl
    def aim_registry_client(self, registry):
        raise RuntimeError("broken plugin")


def test_plugin_hook_calls_are_counted_and_timed_per_hook_and_plugin(m):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(_Vendors(), name="acme")
    pm.hook.aim_gpu_vendors()
    pm.hook.aim_gpu_vendors()
    with pytest.raises(RuntimeError):
        pm.hook.aim_registry_client(registry="example.com")
    assert value(m, "aim_plugin_hook_calls_total", hook="aim_gpu_vendors", plugin="acme") == 2
    assert value(m, "aim_plugin_hook_duration_seconds_count", hook="aim_gpu_vendors", plugin="acme") == 2
    assert value(m, "aim_plugin_hook_errors_total", hook="aim_registry_client", plugin="acme") == 1
    assert value(m, "aim_plugin_hook_errors_total", hook="aim_gpu_vendors", plugin="acme") is None


def test_api_requests_are_counted_by_code_method_and_host(m):
    import time

    metrics.api_request("PATCH", "https://10.0.0.1:6443", 200, time.monotonic())
    metrics.api_request("PATCH", "https://10.0.0.1:6443", 200, time.monotonic())
    metrics.api_request("GET", "https://10.0.0.1:6443", "<error>", time.monotonic())
    assert value(m, "rest_client_requests_total", code="200", method="PATCH", host="10.0.0.1:6443") == 2
    assert value(m, "rest_client_requests_total", code="<error>", method="GET", host="10.0.0.1:6443") == 1
    assert value(m, "rest_client_request_duration_seconds_count", verb="PATCH", host="10.0.0.1:6443") == 2


async def test_api_requests_that_get_no_answer_count_as_error(m):
    from aim_core.kube import Credentials, Kube
    from aim_core.reconcile.errors import NetworkError

    kube = Kube(Credentials(server="http://127.0.0.1:1"), timeout=2)
    try:
        with pytest.raises(NetworkError):
            await kube.get(SERVICES, "ns", "x")
    finally:
        await kube.aclose()
    assert value(m, "rest_client_requests_total", code="<error>", method="GET", host="127.0.0.1:1") == 1


def test_every_family_has_a_row_in_docs_metrics():
    import re
    from pathlib import Path

    m = metrics.Metrics()
    m.watch_store(Store(), [SERVICES])  # the scrape-time families that need a store
    documented = set(
        re.findall(
            r"^\| `([a-z_]+)` \|",
            (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text(),
            flags=re.MULTILINE,
        )
    )
    assert len(m.family_names()) >= 23
    assert m.family_names() - documented == set()
