"""The real-API-server benchmark (benchmarks/bench_apiserver.py) still runs: 10 services, no timing assertions.

Every phase runs (paced, burst, steady, ready, steady again, bare client), the operator talking to
kube-apiserver directly over TLS; its requests are counted from the server's audit log.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, ROOT)

from aim_testing import apiserver as envtest  # noqa: E402
from benchmarks.bench_apiserver import PROCESSES, Config, render, run_benchmark  # noqa: E402


@pytest.mark.skipif(envtest.unavailable_reason() is not None, reason=envtest.unavailable_reason() or "")
def test_the_apiserver_benchmark_runs_and_reports_numbers(tmp_path: Path) -> None:
    cfg = Config(
        services=10, namespaces=2, nodes=1, paced=2, rate=10.0, quiet_seconds=2.0, settle_quiet=0.5, timeout=180
    )
    results = run_benchmark(cfg, tmp_path, say=lambda _: None)

    burst = results["burst"]
    assert burst["applied"] == 10  # every service's InferenceService seen on the driver's watch
    assert burst["latency_ms"]["count"] == 10
    assert burst["operator_cpu_ms_per_service"] > 0
    # counted from the server's audit log (the operator's own user), not by a proxy
    assert burst["by_request_per_service"]["apply inferenceservices"] == 1.0
    assert burst["by_request_per_service"]["patch aimservices/status"] >= 1.0
    assert burst["requests_per_service"] >= 3.0
    # the CPU split: every process measured (a short burst may cost the others less than one clock tick)
    assert set(burst["cpu_s"]) == set(PROCESSES)
    assert burst["cpu_s"]["kube-apiserver"] > 0 and burst["cpu_s"]["operator"] > 0
    assert burst["to_first_request_ms"]["count"] == 10  # each service's path found in the audit log
    assert burst["first_request_to_apply_ms"]["count"] == 10
    assert burst["memory_mb"]["VmRSS"] > 0
    assert results["paced"]["applied"] == 2
    assert results["paced"]["by_request_per_service"]["apply inferenceservices"] == 1.0
    assert results["steady"]["writes"] == 0  # nothing changed: the operator wrote nothing
    assert results["ready"]["running"] == 13  # warm-up, 2 paced, 10 burst: every service Running
    assert results["ready"]["writes_per_service"] >= 1.0  # each service's status took it in
    assert results["steady_ready"]["writes"] == 0
    assert [m["after"] for m in results["memory"]] == ["burst", "steady", "ready", "steady, Ready"]
    assert results["bare"]["applied"] == 10
    assert results["bare"]["cpu_s"]["kube-apiserver"] > 0
    assert results["burst"]["vs_bare"] > 0
    assert results["environment"]["kube_apiserver"].startswith("v1.")
    text = render(results)
    assert "Targets" in text and "steady, Ready" in text


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
