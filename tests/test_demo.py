"""The first things a new user runs: the demo's screenful and the bench samples, as processes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tests.cliprocess import ROOT, cli

BENCH = "examples/bench/results.yaml"


def test_the_demo_is_a_screenful_that_fits_the_terminal_and_says_how_to_see_more():
    done = cli("render", "-f", "examples", "-o", "report", "--explain")  # what ./scripts/demo runs
    assert done.returncode == 0 and done.stderr == "", done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) < 150
    assert max(len(line) for line in lines) <= 100
    assert lines[0].startswith("Planned 21 objects from examples: 5 service(s).")
    assert lines[2].split() == ["SERVICE", "STATUS", "TEMPLATE"]
    # a long template name folds onto the next line in its column, never cut
    chat = lines.index(next(line for line in lines if line.startswith("ml-team/qwen-chat ")))
    column = lines[2].index("TEMPLATE")
    name = lines[chat][column:] + lines[chat + 1][column:]
    assert name == "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"
    assert lines[chat + 2] == "  why: auto-selected (optimized, MI300X, latency, fp8) over 1 other candidate"
    # nothing bundled fails by accident: every service starts, the only other object not Ready is the
    # MI325X template (the examples have no MI325X node), and what needs a registry is said to be unchecked
    assert "Failed" not in done.stdout and "Degraded" not in done.stdout
    statuses = {line.split()[1] for line in lines[3:] if line.startswith("ml-team/")}
    assert statuses == {"Starting"}
    assert "Not checked offline" in done.stdout
    assert (
        "model: spec.model.image amdenterpriseai/aim-qwen-qwen3-32b:0.8.5 -> AIMClusterModel qwen3-32b" in done.stdout
    )
    assert lines[-2:] == [
        "To see the objects the operator would apply and the status it would write:",
        "  aim-engine render -f examples -o yaml      (or ./scripts/demo -o yaml)",
    ]


def test_the_demo_script_installs_no_system_package_and_runs_the_report():
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert "apt" not in demo and "sudo" not in demo
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    demo_part = setup.split('if [ "$mode" = test ]; then', 1)
    assert len(demo_part) == 2 and "apt-get" in demo_part[1].split("\nfi\n", 1)[0]  # only in the test set-up
    assert setup.count("apt-get") == setup.split("\nfi\n", 1)[0].count("apt-get")


def test_the_bench_samples_show_compare_sweep_and_plot(tmp_path):
    show = cli("bench", "show", "qwen-chat-fp8", "-f", BENCH, "--plot")
    assert show.returncode == 0, show.stderr
    assert show.stdout.startswith("AIMBenchmark ml-team/qwen-chat-fp8: Succeeded; ")
    assert "TTFT p50 (ms)" in show.stdout and "output tokens/s" in show.stdout  # the plot's axes

    svg = tmp_path / "compare.svg"
    compare = cli("bench", "compare", "qwen-chat-fp8", "qwen-batch-fp16", "-f", str(ROOT / BENCH), "--svg", str(svg))
    assert compare.returncode == 0, compare.stderr
    assert "B vs A" in compare.stdout and "+" in compare.stdout
    assert ET.parse(svg).getroot().tag.endswith("svg")

    sweep = cli("bench", "sweep", "qwen3-32b", "-f", BENCH, "--plot", "--y", "ttftP90")
    assert sweep.returncode == 0, sweep.stderr
    assert sweep.stdout.startswith("AIMBenchmarkSweep ml-team/qwen3-32b: Succeeded; 2 of 2 templates done")

    missing = cli("bench", "show", "nope", "-f", BENCH)
    assert missing.returncode == 1
    assert missing.stderr == (f"aim-engine: AIMBenchmark nope not in {BENCH} (it has qwen-batch-fp16, qwen-chat-fp8)\n")
