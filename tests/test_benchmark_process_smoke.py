"""The separate-process benchmark (benchmarks/bench_process.py) still runs: a tiny run, no timing assertions."""

from __future__ import annotations

from benchmarks import bench_process
from benchmarks.process_report import render


def test_separate_process_benchmark_runs_and_reports_numbers(small_benchmark) -> None:
    results = small_benchmark(bench_process, services=10, namespaces=2, paced=2, quiet_seconds=1.0, rss_objects=30)

    burst = results["burst"]
    assert burst["applied"] == 10
    assert burst["latency_ms"]["count"] == 10
    assert burst["operator_cpu_ms_per_service"] > 0  # the operator did work for them
    assert burst["requests_per_service"] > 0  # at least the InferenceService apply
    assert burst["by_request_per_service"]["apply inferenceservices"] > 0
    assert results["paced"]["latency_ms"]["count"] == 2
    assert results["quiet"]["writes_per_minute"] == 0  # nothing changed: the operator wrote nothing
    assert [m["aim_services"] for m in results["memory"]] == [12, 30, 30]  # the last after a restart
    assert results["memory"][-1]["restarted"]
    assert all(m["VmRSS"] > 0 for m in results["memory"])
    assert results["bare"]["applied"] == 10
    assert {t["target"] for t in results["targets"]}
    assert "Targets" in render(results)


def test_the_big_cluster_mode_runs_and_reports_peak_memory(small_benchmark) -> None:
    from benchmarks.process_report import render_big_cluster

    results = small_benchmark(
        bench_process, services=4, namespaces=1, unrelated_secrets=5, unrelated_secret_kib=10, unrelated_pods=10
    )
    assert results["burst"]["applied"] == 4
    assert [m.get("restarted", False) for m in results["memory"]] == [False, True]
    assert all(m["VmHWM"] > 0 for m in results["memory"])
    assert results["targets"][0]["measured"] > 0
    assert "peak RSS in the big cluster" in render_big_cluster(results)
