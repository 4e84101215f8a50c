"""The registry benchmark runs, and its request counts (not its times) meet the targets."""

import argparse

import pytest

from aim_testing.registry import find_registry_binary
from benchmarks.bench_registry import check, render, run


@pytest.mark.skipif(find_registry_binary() is None, reason="docker-registry is not installed")
async def test_registry_benchmark_request_counts():
    results = await run(argparse.Namespace(images=3, tags=250))
    assert check(results) == []
    rows = {r["scenario"]: r for r in results["metadata"]}
    assert rows["anonymous registry: cold, multi-arch index"]["registry_requests"] == 3
    assert rows["anonymous registry: cold, single image (host never seen)"]["registry_requests"] == 2
    assert rows["anonymous registry: warm, same tag again"]["requests"][0].startswith("HEAD ")
    known = rows["token flow, token service known (Docker Hub / GHCR plugins): cold index"]
    assert (known["registry_requests"], known["token_requests"]) == (3, 1)
    assert all(not r.endswith(" 401") for r in known["requests"])
    assert [r["registry_requests"] for r in results["listing"]] == [3, 1]
    assert "| scenario |" in render(results)
