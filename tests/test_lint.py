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


VIEWS = {
    "aim_core.service.view": "ServiceView",
    "aim_core.model.view": "ModelView",
    "aim_core.template.view": "TemplateView",
    "aim_core.templatecache.view": "CacheView",
    "aim_core.artifact.view": "ArtifactView",
    "aim_core.modelsource.view": "SourceView",
    "aim_core.runtimeconfig.view": "RuntimeConfigView",
    "aim_core.benchmark.view": "BenchmarkView",
    "aim_core.benchmarksweep.view": "SweepView",
}


def test_every_kind_has_a_typed_view():
    kinds = {p.parent.name for p in ROOT.glob("aim_core/*/controller.py") if p.parent.name != "runtime"}
    assert {"service", "benchmark", "benchmarksweep"} <= kinds
    assert {module.split(".")[1] for module in VIEWS} == kinds
    assert all((ROOT / "aim_core" / kind / "view.py").is_file() for kind in kinds)


def test_a_misspelt_field_of_a_view_is_a_type_error(tmp_path):
    """What a view is for: reading a field that does not exist fails the type check (a raw map would give {})."""
    lines = [f"from {module} import {name}" for module, name in VIEWS.items()]
    lines += [f"x{i}: str = {name}.of({{}}).nmae" for i, name in enumerate(VIEWS.values())]
    probe = tmp_path / "probe.py"
    probe.write_text("\n".join(lines) + "\n")
    result = run(
        str(BIN / "mypy"),
        "--strict",
        "--follow-imports=silent",
        "--no-incremental",
        "--cache-dir",
        "/dev/null",
        str(probe),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    for name in VIEWS.values():
        assert f'"{name}" has no attribute "nmae"' in result.stdout, result.stdout
