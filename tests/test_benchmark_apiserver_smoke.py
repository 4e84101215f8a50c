"""The real-API-server benchmark (benchmarks/bench_apiserver.py) still runs: 10 services, no timing assertions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, ROOT)

from aim_testing import apiserver as envtest  # noqa: E402
from benchmarks.bench_apiserver import Config, render, run_benchmark  # noqa: E402


@pytest.mark.skipif(envtest.unavailable_reason() is not None, reason=envtest.unavailable_reason() or "")
def test_the_apiserver_benchmark_runs_and_reports_numbers(tmp_path: Path) -> None:
    cfg = Config(services=10, namespaces=2, nodes=1, settle_quiet=0.5, timeout=180)
    results = run_benchmark(cfg, tmp_path, say=lambda _: None)

    burst = results["burst"]
    assert burst["applied"] == 10  # every service's InferenceService seen on the driver's watch
    assert burst["latency_ms"]["count"] == 10
    assert burst["operator_cpu_ms_per_service"] > 0
    assert burst["by_request_per_service"]["apply inferenceservices"] == 1.0  # counted by the recording proxy
    assert burst["memory_mb"]["VmRSS"] > 0
    assert results["bare"]["applied"] == 10
    assert results["burst"]["vs_bare"] > 0
    assert results["environment"]["kube_apiserver"].startswith("v1.")
    assert "Targets" in render(results)
