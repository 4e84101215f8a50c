"""The metrics and probe servers on their own: addresses, the older --liveness URL, readiness messages."""

from __future__ import annotations

import socket

import httpx
import pytest

from aim_core import metrics
from aim_core.operator.probes import Endpoints, Readiness, crd_problem, parse_bind_address
from aim_core.reconcile.resources import SERVICES


def test_bind_addresses_read_as_controller_runtime_reads_them():
    assert parse_bind_address(":8080") == (None, 8080)
    assert parse_bind_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_bind_address("[::1]:9090") == ("::1", 9090)
    assert parse_bind_address("0") is None and parse_bind_address("") is None
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_bind_address("localhost")


def _crd(versions, conditions=None):
    crd = {"spec": {"versions": [{"name": v, "served": served} for v, served in versions]}}
    if conditions is not None:
        crd["status"] = {"conditions": conditions}
    return crd


def test_crd_problems_say_what_is_wrong():
    established = [{"type": "Established", "status": "True"}]
    assert crd_problem(SERVICES, None) == "CRD aimservices.aim.eai.amd.com is not installed"
    assert crd_problem(SERVICES, _crd([("v1alpha1", True)], established)) is None
    assert "does not serve v1alpha1 (served: v1)" in crd_problem(
        SERVICES, _crd([("v1", True), ("v1alpha1", False)], established)
    )
    assert crd_problem(SERVICES, _crd([("v1alpha1", True)])).endswith("is not Established yet")
    failing = [{"type": "Established", "status": "False", "reason": "NotAccepted", "message": "names conflict"}]
    assert crd_problem(SERVICES, _crd([("v1alpha1", True)], failing)).endswith(
        "is not Established: NotAccepted names conflict"
    )


def test_readiness_lists_every_missing_piece():
    readiness = Readiness()
    assert readiness.problems() == [
        "plugins are not loaded yet",
        "CRDs of aim.eai.amd.com not read yet",
        "the initial listing of watched resources has not finished",
    ]
    readiness.plugin_error = "plugin 'acme' failed to load: ImportError: no module named acme"
    assert readiness.problems()[0].startswith("plugins failed to load: plugin 'acme'")
    readiness = Readiness(plugins_loaded=True, crd_problems=[], synced=lambda: True)
    assert readiness.problems() == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_the_older_liveness_url_keeps_working_and_one_address_serves_all():
    port = _free_port()
    ready = Readiness(plugins_loaded=True, crd_problems=[], synced=lambda: True)
    endpoints = Endpoints(
        metrics.Metrics(),
        ready,
        metrics_address=f"127.0.0.1:{port}",
        probe_address=":8081",
        liveness_url=f"http://127.0.0.1:{port}/alive",
    )
    await endpoints.start()
    try:
        assert endpoints.addresses == {"probes": ("127.0.0.1", port), "metrics": ("127.0.0.1", port)}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
            assert (await client.get("/alive")).text == "ok\n"
            assert (await client.get("/healthz")).status_code == 200
            assert (await client.get("/readyz")).status_code == 200
            scraped = await client.get("/metrics")
            assert scraped.status_code == 200 and "controller_runtime_reconcile_total" in scraped.text
    finally:
        await endpoints.stop()


async def test_zero_turns_both_off():
    endpoints = Endpoints(metrics.Metrics(), Readiness(), metrics_address="0", probe_address="0")
    await endpoints.start()
    assert endpoints.addresses == {}
    await endpoints.stop()
