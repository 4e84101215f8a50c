"""What the tests under tests/ share: the repository's own packages importable, a small benchmark run."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = str(Path(__file__).resolve().parents[1])
if ROOT not in sys.path:  # benchmarks/ and tests/ are not installed packages
    sys.path.insert(0, ROOT)


@pytest.fixture
def small_benchmark(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """``run(bench, **config)``: ``bench.run_benchmark`` (``bench`` a module of benchmarks/) in ``tmp_path``,
    silent, with one node, a short settle and a deadline unless ``config`` says otherwise; its results."""

    def run(bench: ModuleType, **config: Any) -> dict[str, Any]:
        cfg = bench.Config(**{"nodes": 1, "settle_quiet": 0.5, "timeout": 180, **config})
        return bench.run_benchmark(cfg, tmp_path, say=lambda _: None)

    return run
