"""/metrics, /healthz and /readyz of the real operator reconciling against the API emulator."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from aim_core.operator import probes
from aim_core.operator import run as operator_run
from aim_core.operator.settings import Settings
from aim_core.reconcile.resources import AIM_RESOURCES
from aim_core.runtime.leader import LEASE_NAME
from aim_testing.fixtures import aim_crds
from tests.wire.conftest import Operator, eventually
from tests.wire.serving import serve
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, create  # noqa: F401 - fixture

LOOPBACK = "127.0.0.1:0"

# Every family docs/metrics.md promises; a scrape must show each (labelled ones at least declared).
FAMILIES = {
    "controller_runtime_reconcile_total",
    "controller_runtime_reconcile_errors_total",
    "controller_runtime_reconcile_time_seconds",
    "controller_runtime_max_concurrent_reconciles",
    "controller_runtime_active_workers",
    "workqueue_depth",
    "workqueue_adds_total",
    "workqueue_queue_duration_seconds",
    "workqueue_work_duration_seconds",
    "workqueue_retries_total",
    "workqueue_unfinished_work_seconds",
    "workqueue_longest_running_processor_seconds",
    "rest_client_requests_total",
    "rest_client_request_duration_seconds",
    "leader_election_master_status",
    "aim_objects",
    "aim_registry_requests_total",
    "aim_registry_failures_total",
    "aim_jobs_created_total",
    "aim_jobs_finished_total",
    "aim_plugin_hook_calls_total",
    "aim_plugin_hook_errors_total",
    "aim_plugin_hook_duration_seconds",
}


@pytest.fixture()
def operator_settings() -> Settings:
    return Settings(
        operator_namespace="aim-system",
        workers=4,
        leader_election=True,
        metrics_bind_address=LOOPBACK,
        health_probe_bind_address=LOOPBACK,
    )


async def scrape(op: Operator) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Samples by name, then by sorted labels; every declared family is a key, even without samples."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(op.url("metrics", "/metrics"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(response.text):
        found.setdefault(family.name + ("_total" if family.type == "counter" else ""), {})
        for s in family.samples:
            found.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return found


def total(samples: dict[tuple[tuple[str, str], ...], float], **labels: str) -> float:
    return sum(v for k, v in samples.items() if set(labels.items()) <= set(k))


def condition(obj, type_):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def test_a_scrape_while_services_reconcile_shows_every_family(kube, api, cluster, operator):  # noqa: F811
    first = await scrape(operator)
    assert FAMILIES <= first.keys(), FAMILIES - first.keys()
    before = total(first["controller_runtime_reconcile_total"], controller="service")

    for name in ("qwen-chat",):
        await create(api, kube, cluster[name])

    def isvc():
        found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert len(found) == 1
        return found[0]

    obj = await eventually(isvc)
    await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])
    serve(kube, obj)
    await eventually(lambda: kube.get(SVC, NS, "qwen-chat")["status"]["status"] == "Running")
    await operator.settle()

    after = await scrape(operator)
    assert total(after["controller_runtime_reconcile_total"], controller="service") > before
    assert total(after["controller_runtime_reconcile_total"], controller="service", result="success") > 0
    assert total(after["controller_runtime_reconcile_time_seconds_count"], controller="service") > 0
    assert after["aim_objects"][(("kind", "AIMService"), ("status", "Running"))] == 1
    assert total(after["aim_objects"], kind="AIMModel") >= 1  # the seeded, paused models are counted too
    api_host = kube.url.split("://", 1)[1]
    assert total(after["rest_client_requests_total"], method="PATCH", code="200", host=api_host) > 0
    assert total(after["rest_client_request_duration_seconds_count"], verb="PATCH", host=api_host) > 0
    assert total(after["workqueue_adds_total"], name="service") > 0
    assert total(after["workqueue_work_duration_seconds_count"], name="service") > 0
    assert after["workqueue_depth"][(("name", "service"),)] == 0  # settled
    assert after["controller_runtime_max_concurrent_reconciles"][(("controller", "service"),)] == 4
    assert after["controller_runtime_active_workers"][(("controller", "service"),)] == 0
    assert after["leader_election_master_status"][(("name", LEASE_NAME),)] == 1
    assert total(after["aim_plugin_hook_calls_total"], hook="aim_runtime_builders") > 0
    assert total(after["aim_plugin_hook_duration_seconds_count"], hook="aim_runtime_builders") > 0


async def test_every_controller_has_its_reconcile_series_from_the_start(kube, operator):
    """As controller-runtime: a series per controller and result at 0 before the first reconcile, so
    dashboards and alerts on ``rate(controller_runtime_reconcile_total{result="error"}[5m])`` have data."""
    found = await scrape(operator)
    controllers = set(operator.runtime.engine.controllers)
    assert {"service", "model", "artifact"} <= controllers
    for controller in controllers:
        for result in ("success", "error", "requeue_after"):
            key = (("controller", controller), ("result", result))
            assert key in found["controller_runtime_reconcile_total"], (controller, result)
        assert (("controller", controller),) in found["controller_runtime_reconcile_errors_total"]
    idle = [c for c in controllers if total(found["controller_runtime_reconcile_total"], controller=c) == 0]
    assert idle  # nothing to reconcile for most of them yet: the series are there at 0


async def get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.get(url)


def _crd(ref, established: bool | None):
    crd = next(c for c in aim_crds() if c["spec"]["names"]["plural"] == ref.plural)
    crd = {**crd, "metadata": {**crd["metadata"]}}
    if established is not None:
        crd["status"] = {
            "conditions": [
                {
                    "type": "Established",
                    "status": "True" if established else "False",
                    "reason": "InitialNamesAccepted" if established else "Installing",
                }
            ]
        }
    return crd


async def test_readyz_turns_200_once_plugins_are_loaded_and_the_crds_established(kube, monkeypatch):
    monkeypatch.setattr(probes, "CRD_POLL_UNREADY", 0.1)
    loading = threading.Event()
    real = operator_run.get_plugin_manager

    def slow_plugins():
        loading.wait(20)
        return real()

    monkeypatch.setattr(operator_run, "get_plugin_manager", slow_plugins)
    op = Operator()
    op.start(
        Settings(operator_namespace="aim-system", metrics_bind_address="0", health_probe_bind_address=LOOPBACK),
        kube.url,
    )
    try:
        await eventually(lambda: op.endpoints is not None and "probes" in op.endpoints.addresses)
        assert "metrics" not in op.endpoints.addresses  # "0" turns it off
        assert (await get(op.url("probes", "/healthz"))).status_code == 200
        response = await get(op.url("probes", "/readyz"))
        assert response.status_code == 503
        assert "plugins are not loaded yet" in response.text

        loading.set()
        await eventually(lambda: op.runtime is not None and op.runtime.ready.is_set(), timeout=20)

        async def readyz(expect_status: int, text: str) -> None:
            deadline = time.monotonic() + 10
            while True:
                response = await get(op.url("probes", "/readyz"))
                if response.status_code == expect_status and text in response.text:
                    return
                assert time.monotonic() < deadline, response.text
                await asyncio.sleep(0.05)

        await readyz(503, "CRD aimservices.aim.eai.amd.com is not installed")
        for ref in AIM_RESOURCES:
            kube.put_object(_crd(ref, None))
        await readyz(503, "CRD aimservices.aim.eai.amd.com is not Established yet")
        for ref in AIM_RESOURCES[1:]:
            kube.put_object(_crd(ref, True))
        kube.put_object(_crd(AIM_RESOURCES[0], False))
        await readyz(503, "is not Established: Installing")
        response = await get(op.url("probes", "/readyz"))
        assert response.text.count("- ") == 1  # only the one CRD still missing
        assert "plugins" not in response.text and "listing" not in response.text
        kube.put_object(_crd(AIM_RESOURCES[0], True))
        await readyz(200, "ok")
        assert (await get(op.url("probes", "/healthz"))).status_code == 200
    finally:
        loading.set()
        op.stop.set()
        while op.thread.is_alive():
            await asyncio.sleep(0.05)
    assert op.error is None, op.error
