"""The model-source benchmark (benchmarks/bench_modelsources.py) still runs: small, no timing assertions."""

from __future__ import annotations

from benchmarks.bench_modelsources import bench_filtering, catalog, render


def test_the_catalog_has_the_asked_size_and_a_mix_of_tags():
    repos = catalog(2000, 20)

    tags = [t for ts in repos.values() for t in ts]
    assert len(tags) == 2000 and len(repos) == 20
    assert {"latest"} <= set(tags)
    assert any(t.startswith("v") for t in tags) and any("-rc" in t for t in tags)


def test_filtering_reports_matches_and_numbers():
    results = bench_filtering(2000, 20, rounds=2)

    assert 0 < results["matched"] < 2000
    assert results["filter_ms"]["count"] == 2
    assert "Filtering: 2000 tags" in render({"filtering": results})
