"""The template benchmark (benchmarks/bench_templates.py) runs small: request counts only, never times."""

from __future__ import annotations

from benchmarks.bench_templates import Config, run_benchmark


async def test_template_reconciles_read_no_nodes_and_steady_state_writes_nothing() -> None:
    results = await run_benchmark(Config(templates=12, nodes=2, rounds=1, timeout=120), say=lambda *_: None)

    assert results["first_pass"]["states"] == {"Ready": 9, "NotAvailable": 3}
    assert results["first_pass"]["node_requests"] <= 2  # kopf's and the engine's start-up listings; none per template
    assert results["steady_state"]["reconciles"] >= 12
    assert results["steady_state"]["node_requests"] == 0 and results["steady_state"]["writes"] == 0
    assert results["node_change_other_label"]["reconciles"] == 0
    assert results["node_change_gpu_label"]["reconciles"] == 12
    assert results["node_change_gpu_label"]["node_requests"] == 0
    assert results["cpu_no_io"]["requests_per_pass"] == {}
    assert all(t["met"] for t in results["targets"])
