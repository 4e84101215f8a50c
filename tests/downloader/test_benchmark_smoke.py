"""The downloader benchmark (benchmarks/bench_downloader.py) still runs: a tiny run, no timing assertions."""

from __future__ import annotations

from benchmarks.bench_downloader import render, run_benchmark


async def test_the_downloader_benchmark_runs_and_reports_ratios_and_patch_counts() -> None:
    results = await run_benchmark(size_mb=2, files=2, interval=0.2, say=lambda _: None)

    for kind in ("hf", "s3"):
        assert results[kind]["bytes"] == 2 * (1 << 20) + len(b'{"model_type": "llama"}')
        assert results[kind]["ratio_transfer"] > 0
        assert results[kind]["progress_patches"]["count"] >= 2  # at least the first and the final one
    assert "ratio" in render(results)
