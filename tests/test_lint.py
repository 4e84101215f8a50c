"""ruff (lint and format) and mypy (strict on the plan modules and typed views) pass; both are configured in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_finds_nothing():
    result = run(str(BIN / "ruff"), "check", "--no-cache", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_code_is_formatted_by_ruff():
    result = run(str(BIN / "ruff"), "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_finds_nothing_in_the_plans_and_views():
    result = run(str(BIN / "mypy"), "--no-incremental", "--cache-dir", "/dev/null")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
