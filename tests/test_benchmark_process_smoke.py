"""The separate-process benchmark (benchmarks/bench_process.py) still runs: a tiny run, no timing assertions."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, ROOT)

from benchmarks.bench_process import Config, run_benchmark  # noqa: E402
from benchmarks.process_report import render  # noqa: E402


def test_separate_process_benchmark_runs_and_reports_numbers(tmp_path: Path) -> None:
    cfg = Config(
        services=10, namespaces=2, nodes=1, paced=2, quiet_seconds=1.0, rss_objects=30, settle_quiet=0.5, timeout=180
    )
    results = run_benchmark(cfg, tmp_path, say=lambda _: None)

    burst = results["burst"]
    assert burst["applied"] == 10
    assert burst["latency_ms"]["count"] == 10
    assert burst["operator_cpu_ms_per_service"] >= 0
    assert burst["requests_per_service"] > 0  # at least the InferenceService apply
    assert burst["by_request_per_service"]["apply inferenceservices"] > 0
    assert results["paced"]["latency_ms"]["count"] == 2
    assert results["quiet"]["writes_per_minute"] >= 0
    assert [m["aim_services"] for m in results["memory"]] == [12, 30, 30]  # the last after a restart
    assert results["memory"][-1]["restarted"]
    assert all(m["VmRSS"] > 0 for m in results["memory"])
    assert results["bare"]["applied"] == 10
    assert {t["target"] for t in results["targets"]}
    assert "Targets" in render(results)


def test_the_big_cluster_mode_runs_and_reports_peak_memory(tmp_path: Path) -> None:
    from benchmarks.process_report import render_big_cluster

    cfg = Config(
        services=4,
        namespaces=1,
        nodes=1,
        settle_quiet=0.5,
        timeout=180,
        unrelated_secrets=5,
        unrelated_secret_kib=10,
        unrelated_pods=10,
    )
    results = run_benchmark(cfg, tmp_path, say=lambda _: None)
    assert results["burst"]["applied"] == 4
    assert [m.get("restarted", False) for m in results["memory"]] == [False, True]
    assert all(m["VmHWM"] > 0 for m in results["memory"])
    assert results["targets"][0]["measured"] > 0
    assert "peak RSS in the big cluster" in render_big_cluster(results)
