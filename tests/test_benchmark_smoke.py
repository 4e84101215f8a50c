"""The service benchmark (benchmarks/bench_services.py) still runs: a tiny run, no timing assertions."""

from __future__ import annotations

from benchmarks.bench_services import Config, run_benchmark
from benchmarks.report import render


async def test_benchmark_runs_end_to_end_and_reports_numbers() -> None:
    results = await run_benchmark(
        Config(services=10, namespaces=2, nodes=1, plan_rounds=1, timeout=120), say=lambda _: None
    )

    assert results["latency"]["ms"]["count"] == 10
    assert results["first_reconcile"]["per_service"]["total"] > 0
    assert len(results["steady_state"]) == 2
    assert all(isinstance(p["operator"]["writes"], int) for p in results["steady_state"])
    assert results["plan_time"]["plan_us"]["count"] == 10
    assert {t["target"] for t in results["targets"]}
    assert "Targets" in render(results)
