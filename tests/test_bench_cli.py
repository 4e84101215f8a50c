"""``aim-engine bench``: a run's table, two runs compared, a sweep's comparison, plots (issue 23)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_core import cli
from aim_core.cli.benchview import Series, format_table, svg_plot, text_plot

TARGET = {"template": "llama-fp8", "gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}


def result(concurrency: int, tps: float, ttft: float, **extra: Any) -> dict[str, Any]:
    return {
        "scenario": "D(128,128)",
        "concurrency": concurrency,
        "completedRequests": 100,
        "failedRequests": 0,
        "requestsPerSecond": tps / 128,
        "outputTokensPerSecond": tps,
        "ttftMs": {"p50": ttft, "p90": ttft * 1.5, "p99": ttft * 2},
        "interTokenLatencyMs": {"p50": 12.0, "p99": 20.0},
        "e2eLatencyMs": {"p50": 1600.0, "p99": 2100.0},
        **extra,
    }


def bench(name: str, template: str, *results: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMBenchmark",
        "metadata": {"name": name, "namespace": "team"},
        "status": {
            "status": "Succeeded",
            "completionTime": "2026-11-27T20:05:00Z",
            "target": {**TARGET, "template": template, "replicas": 1},
            "results": list(results),
        },
    }


A = bench("run-a", "llama-fp8", result(1, 80.0, 40.0), result(8, 400.0, 45.0), result(32, 1000.0, 120.0))
B = bench("run-b", "llama-fp16", result(1, 60.0, 50.0), result(8, 500.0, 60.0), result(32, 1300.0, 140.0))
SWEEP = {
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "kind": "AIMBenchmarkSweep",
    "metadata": {"name": "llama", "namespace": "team"},
    "status": {
        "status": "Succeeded",
        "templates": [
            {"template": "llama-fp8", "state": "Succeeded", "benchmark": "llama-1"},
            {"template": "llama-fp16", "state": "Succeeded", "benchmark": "llama-2"},
            {"template": "llama-mi210", "state": "Failed", "message": "JobFailed: the tool exited 1"},
        ],
        "comparison": [
            {**r, "template": t, "gpuModel": "MI300X", "gpuCount": 1, "benchmark": b}
            for t, b, o in (("llama-fp8", "llama-1", A), ("llama-fp16", "llama-2", B))
            for r in o["status"]["results"]
        ],
    },
}


@pytest.fixture
def objects(tmp_path: Path) -> str:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all([A, B, SWEEP]))
    return str(path)


def test_show_prints_one_row_per_scenario_and_load(objects: str, capsys) -> None:
    assert cli.main(["bench", "show", "run-a", "-f", objects]) == 0
    out = capsys.readouterr().out.splitlines()

    assert out[0] == (
        "AIMBenchmark team/run-a: Succeeded; llama-fp8 (1 x MI300X, fp8, latency), 1 replica; "
        "finished 2026-11-27T20:05:00Z"
    )
    assert out[1].split() == ["Scenario", "Load", "OK", "Failed", "Req/s", "Out", "tok/s", "TTFT", "p50"] + [
        "TTFT",
        "p90",
        "TTFT",
        "p99",
        "ITL",
        "p50",
        "ITL",
        "p99",
        "E2E",
        "p50",
        "E2E",
        "p99",
    ]
    rows = [line.split() for line in out[3:]]
    assert [r[1] for r in rows] == ["c=1", "c=8", "c=32"]  # numeric load order, not text order
    assert rows[1][:9] == ["D(128,128)", "c=8", "100", "0", "3.1", "400", "45", "67.5", "90"]


def test_compare_shows_the_change_of_the_second_run(objects: str, capsys) -> None:
    assert cli.main(["bench", "compare", "run-a", "run-b", "-f", objects]) == 0
    out = capsys.readouterr().out

    assert "A = AIMBenchmark team/run-a" in out and "B = AIMBenchmark team/run-b" in out
    row = next(line.split() for line in out.splitlines() if "c=8" in line and "output tokens/s" in line)
    assert row[-3:] == ["400", "500", "+25.0%"]
    row = next(line.split() for line in out.splitlines() if "c=32" in line and "TTFT p50" in line)
    assert row[-3:] == ["120", "140", "+16.7%"]


def test_sweep_prints_the_comparison_and_the_failures(objects: str, capsys) -> None:
    assert cli.main(["bench", "sweep", "llama", "-f", objects, "--plot"]) == 0
    out = capsys.readouterr().out

    assert out.startswith("AIMBenchmarkSweep team/llama: Succeeded; 3 of 3 templates done\n")
    c8 = [line.split() for line in out.splitlines() if " c=8 " in line]
    assert [(r[0], r[3], r[6]) for r in c8] == [("llama-fp16", "MI300X", "500"), ("llama-fp8", "MI300X", "400")]
    assert "llama-mi210: Failed: JobFailed: the tool exited 1" in out
    assert "  o llama-fp16 (c=1, c=8, c=32)" in out and "  x llama-fp8 (c=1, c=8, c=32)" in out


def test_json_output_is_the_status(objects: str, capsys) -> None:
    import json

    assert cli.main(["bench", "show", "run-b", "-f", objects, "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == B["status"]


def test_a_missing_object_is_an_error(objects: str, capsys) -> None:
    assert cli.main(["bench", "show", "nope", "-f", objects]) == 1
    assert "AIMBenchmark nope not in" in capsys.readouterr().err


def test_svg_file_has_a_curve_per_run(objects: str, tmp_path: Path, capsys) -> None:
    svg = tmp_path / "plot.svg"
    assert cli.main(["bench", "compare", "run-a", "run-b", "-f", objects, "--svg", str(svg)]) == 0

    root = ET.fromstring(svg.read_text())
    ns = "{http://www.w3.org/2000/svg}"
    lines = root.findall(f"{ns}polyline")
    assert len(lines) == 2
    assert [len(pl.get("points", "").split()) for pl in lines] == [3, 3]
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert {"run-a", "run-b", "output tokens/s", "TTFT p50 (ms)"} <= set(texts)


def test_text_plot_puts_the_extremes_in_the_corners() -> None:
    plot = text_plot([Series("s", ((0.0, 0.0, "c=1"), (100.0, 50.0, "c=8")))], "x", "y", width=20, height=5)
    grid = [line.split("|", 1)[1] for line in plot.splitlines() if "|" in line]

    assert grid[0].endswith("o") and len(grid[0]) > 15  # highest point: top right
    assert grid[-1].startswith("o")  # lowest point: bottom left
    assert "  o s (c=1, c=8)" in plot


def test_plots_of_nothing_say_so() -> None:
    assert text_plot([Series("s", ())], "x", "y").startswith("(nothing to plot")
    assert "nothing to plot" in svg_plot([], "x", "y")


def test_format_table_right_aligns_numbers() -> None:
    text = format_table(["Name", "Value"], [["a", "1"], ["bb", "100.5"]])
    assert text.splitlines() == ["Name  Value", "----  -----", "a         1", "bb    100.5"]
