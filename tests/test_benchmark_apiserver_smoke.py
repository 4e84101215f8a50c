"""The real-API-server benchmark (benchmarks/bench_apiserver.py) runs, and its invariants hold at small N.

Every phase but the bare client's runs (existing services, start, burst, steady, ready, steady
again, restart), the operator talking to kube-apiserver directly over TLS; its requests are
counted from the server's audit log. No timing is asserted (speed targets are benchmarks').
"""

from __future__ import annotations

import pytest

from aim_testing import apiserver as envtest
from benchmarks import bench_apiserver
from benchmarks.bench_apiserver import PROCESSES, render


@pytest.mark.skipif(envtest.unavailable_reason() is not None, reason=envtest.unavailable_reason() or "")
def test_the_apiserver_benchmark_runs_and_holds_its_invariants(small_benchmark) -> None:
    """Every phase with a few services; what must hold at any size: nothing written when nothing changes
    (steady, and a restart over Running services), at most 4 requests per new service, one status write
    and one Event per service going Ready. No timing is asserted."""
    results = small_benchmark(
        bench_apiserver,
        services=8,
        namespaces=2,
        paced=0,
        quiet_seconds=0.5,
        bare=False,  # the wall ratio is no invariant: benchmarks/README.md has it
        existing=6,
    )

    burst = results["burst"]
    assert burst["applied"] == 8  # every service's InferenceService seen on the driver's watch
    assert burst["latency_ms"]["count"] == 8
    window = burst["window"]  # first create sent -> last InferenceService seen, and the operator's CPU over it
    assert 0 < window["seconds"] <= burst["seconds"] and window["operator_cpu_s"] > 0
    # counted from the server's audit log (the operator's own user), not by a proxy
    assert burst["by_request_per_service"]["apply inferenceservices"] == 1.0
    assert burst["by_request_per_service"]["patch aimservices/status"] == 1.0
    assert 3.0 <= burst["requests_per_service"] <= 4.0
    assert set(burst["cpu_s"]) == set(PROCESSES)
    assert burst["to_first_request_ms"]["count"] == 8  # each service's path found in the audit log
    assert burst["memory_mb"]["VmRSS"] > 0
    assert results["existing"]["services"] == 6
    # the operator started over the existing Running services: every one reconciled, nothing written
    start = results["start"]
    assert start["writes"] == 0 and start["writes_to_watched"] == 0, start["by_request"]
    # beyond the listings, at most one request per service (and the start-up GETs of the CRDs, one each)
    assert start["requests_beyond_listings"] - start["crd_checks"] <= start["services"], start["by_request"]
    assert results["steady"]["writes"] == 0  # nothing changed: the operator wrote nothing
    ready = results["ready"]
    assert ready["running"] == 8
    assert ready["status_patches_per_service"] == 1.0 and ready["events_per_service"] == 1.0, ready["by_request"]
    assert results["steady_ready"]["writes"] == 0
    restart = results["restart"]  # every service Running: a restart reads and writes nothing per service
    assert restart["writes"] == 0, restart["by_request"]
    assert restart["requests_beyond_listings"] - restart["crd_checks"] <= restart["services"], restart["by_request"]
    assert restart["services"] == 8 + 6 + 2  # the burst, the existing ones, one template service per namespace
    assert results["environment"]["kube_apiserver"].startswith("v1.")
    text = render(results)
    assert "Targets" in text and "restart" in text


@pytest.mark.skipif(envtest.unavailable_reason() is not None, reason=envtest.unavailable_reason() or "")
def test_the_audit_log_records_the_audited_user_only() -> None:
    """ControlPlane(audit=True): the audited user's requests, classified as the proxy classifies them."""
    import ssl

    import httpx

    plane = envtest.ControlPlane(envtest.assets(), audit=True).start()
    try:
        assert plane.audit_file is not None
        verify = ssl.create_default_context(cafile=str(plane.ca_file))
        headers = {"Authorization": f"Bearer {envtest.AUDITED_TOKEN}", "User-Agent": "aim-engine/test"}
        with httpx.Client(base_url=plane.url, verify=verify, headers=headers) as client:
            assert client.get("/api").status_code == 200
            assert client.post("/api/v1/namespaces", json={"metadata": {"name": "audited"}}).status_code == 201
            cm = "/api/v1/namespaces/audited/configmaps/cm"
            applied = client.patch(
                cm,
                params={"fieldManager": "aim-engine", "force": "true"},
                content=b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}',
                headers={"Content-Type": "application/apply-patch+yaml"},
            )
            assert applied.status_code == 201
            patched = client.patch(
                cm, json={"data": {"a": "b"}}, headers={"Content-Type": "application/merge-patch+json"}
            )
            assert patched.status_code == 200
            assert client.get("/api/v1/namespaces/audited/configmaps/missing").status_code == 404
        plane.client.get("/api/v1/namespaces")  # the admin: not recorded
        log = envtest.AuditLog(plane.audit_file)
        log.poll()
        seen = [(c.verb, c.resource, c.namespace, c.name, c.user_agent) for c in log.calls]
        assert seen == [
            ("discovery", None, None, None, "aim-engine/test"),
            ("create", "v1/namespaces", None, "audited", "aim-engine/test"),  # the name from the body
            ("apply", "v1/configmaps", "audited", "cm", "aim-engine/test"),
            ("patch", "v1/configmaps", "audited", "cm", "aim-engine/test"),
            ("get", "v1/configmaps", "audited", "missing", "aim-engine/test"),
        ]
        assert log.codes == [200, 201, 201, 200, 404]
        assert log.calls[2].field_manager == "aim-engine"
    finally:
        plane.stop()
