"""Measured ranking (issue 23): automatic selection that prefers the template that measured best, when asked."""

from __future__ import annotations

from typing import Any

import pytest

from aim_core.service.measured import Preference, choose_scenario, measurement
from aim_core.service.selection import Verdict, select_template
from tests.service.builders import QWEN, cluster_config, qwen_model, qwen_template, run, service, template
from tests.service.test_templates import NS, gpus


def measured(t: dict[str, Any], *entries: dict[str, Any]) -> dict[str, Any]:
    t.setdefault("status", {})["benchmarks"] = list(entries)
    return t


def entry(tps: float, ttft: float, *, concurrency: int = 8, scenario: str = "D(128,128)", run: str = "r") -> dict:
    return {
        "scenario": scenario,
        "concurrency": concurrency,
        "outputTokensPerSecond": tps,
        "ttftMs": {"p50": ttft, "p99": ttft * 2},
        "benchmark": run,
        "namespace": NS,
        "completionTime": "2026-11-27T20:00:00Z",
    }


def tpl(name: str, precision: str = "fp16", gpu: str = "MI300X") -> dict[str, Any]:
    """Ready, optimized, MI300X, latency; fp8 ranks before fp16 in the usual order."""
    return template(name, "m").optimized().gpu(gpu).metric("latency").precision(precision).status("Ready")


def select(*templates: dict[str, Any], prefer: Preference | None = None, cluster: tuple[str, ...] = ("MI300X",)):
    namespaced = [t for t in templates if t["kind"] == "AIMServiceTemplate"]
    return select_template("m", namespaced, [], gpus(*cluster), namespace=NS, prefer=prefer)


TPS8 = Preference("outputTokensPerSecond", 8)


def test_without_a_preference_measurements_change_nothing():
    fp8 = measured(tpl("fp8", "fp8"), entry(100, 90))
    fp16 = measured(tpl("fp16"), entry(500, 20))

    result = select(fp8, fp16)

    assert result.chosen.name == "fp8"  # the usual order: fp8 before fp16
    assert result.measured_note == ""
    assert "measured" not in result.health.message


def test_the_best_throughput_wins_over_the_usual_order_and_explain_says_which_run():
    fp8 = measured(tpl("fp8", "fp8"), entry(100, 90, run="run-fp8"))
    fp16 = measured(tpl("fp16"), entry(500, 20, run="run-fp16"))

    result = select(fp8, fp16, prefer=TPS8)

    assert result.chosen.name == "fp16"
    assert "measured outputTokensPerSecond 500 tokens/s at concurrency 8 in D(128,128)" in result.health.message
    assert f"AIMBenchmark {NS}/run-fp16" in result.health.message
    explain = "\n".join(result.explain())
    assert "measured ranking: outputTokensPerSecond at concurrency 8 in scenario D(128,128)" in explain
    assert "2 of 2 candidates measured" in explain
    loser = next(c for c in result.candidates if c.name == "fp8")
    assert loser.verdict is Verdict.OUTRANKED
    assert (
        "measured outputTokensPerSecond at concurrency 8 in D(128,128): 500 tokens/s before 100 tokens/s" in loser.why
    )


def test_a_latency_ranks_lower_first():
    fp8 = measured(tpl("fp8", "fp8"), entry(100, 90))
    fp16 = measured(tpl("fp16"), entry(500, 20))

    assert select(fp8, fp16, prefer=Preference("ttftP50", 8)).chosen.name == "fp16"
    assert select(fp8, fp16, prefer=Preference("ttftP99", 8)).chosen.name == "fp16"
    assert select(fp8, fp16, prefer=Preference("requestsPerSecond", 8)).chosen.name == "fp8"  # nobody has it


def test_measured_candidates_rank_before_unmeasured_ones():
    fp8 = tpl("fp8", "fp8")  # best by the usual order, never measured
    fp16 = measured(tpl("fp16"), entry(50, 90))

    result = select(fp8, fp16, prefer=TPS8)

    assert result.chosen.name == "fp16"
    loser = next(c for c in result.candidates if c.name == "fp8")
    assert "50 tokens/s before not measured" in loser.why
    assert "1 of 2 candidates measured" in result.measured_note


def test_no_measurement_at_the_asked_load_falls_back_to_the_usual_order_and_says_so():
    fp8 = measured(tpl("fp8", "fp8"), entry(100, 90, concurrency=1))
    fp16 = measured(tpl("fp16"), entry(500, 20, concurrency=1))

    result = select(fp8, fp16, prefer=TPS8)

    assert result.chosen.name == "fp8"
    assert result.measured_note == (
        "no candidate has a measurement of outputTokensPerSecond at concurrency 8 "
        "(spec.template.preferMeasured); the usual order decided"
    )
    assert "measured" not in result.health.message
    assert any("the usual order decided" in line for line in result.explain())


def test_filters_still_apply_first():
    fp8 = measured(tpl("fp8", "fp8"), entry(100, 90))
    gone = measured(tpl("mi355x", "fp16", gpu="MI355X"), entry(9000, 1))  # its GPU is not in the cluster

    assert select(fp8, gone, prefer=TPS8).chosen.name == "fp8"


def test_scenario_defaults_to_the_one_measured_for_most_candidates():
    a = measured(tpl("a", "fp8"), entry(100, 9, scenario="D(128,128)"), entry(900, 9, scenario="D(1024,128)"))
    b = measured(tpl("b"), entry(300, 9, scenario="D(128,128)"))

    assert choose_scenario([a, b], TPS8) == "D(128,128)"
    assert select(a, b, prefer=TPS8).chosen.name == "b"
    assert select(a, b, prefer=Preference("outputTokensPerSecond", 8, "D(1024,128)")).chosen.name == "a"


def test_equal_measurements_fall_through_to_the_usual_keys():
    fp8 = measured(tpl("fp8", "fp8"), entry(300, 9))
    fp16 = measured(tpl("fp16"), entry(300, 9))

    assert select(fp8, fp16, prefer=TPS8).chosen.name == "fp8"


def test_measurement_reads_the_entry_of_the_load_and_scenario():
    t = measured(tpl("a"), entry(100, 9, concurrency=1), entry(400, 9, concurrency=8, run="x"))

    m = measurement(t, TPS8, "D(128,128)")

    assert (m.value, m.benchmark, m.namespace) == (400, "x", NS)
    assert measurement(t, TPS8, "D(1,1)") is None


@pytest.mark.parametrize(
    ("spec", "config", "expected"),
    [
        ({}, {}, None),
        ({"preferMeasured": {"by": "ttftP50", "concurrency": 4}}, {}, Preference("ttftP50", 4)),
        (
            {},
            {"templateSelection": {"preferMeasured": {"by": "outputTokensPerSecond", "concurrency": 2}}},
            Preference("outputTokensPerSecond", 2, "", "the runtime config's templateSelection.preferMeasured"),
        ),
        (
            {"preferMeasured": {"by": "ttftP50", "concurrency": 4, "scenario": "D(1,1)"}},
            {"templateSelection": {"preferMeasured": {"by": "outputTokensPerSecond", "concurrency": 2}}},
            Preference("ttftP50", 4, "D(1,1)"),
        ),
        ({"preferMeasured": {"by": "nonsense", "concurrency": 4}}, {}, None),
        ({"preferMeasured": {"by": "ttftP50", "concurrency": 0}}, {}, None),
    ],
)
def test_the_preference_comes_from_the_service_then_the_runtime_config(spec, config, expected):
    svc = {"metadata": {"name": "s", "namespace": NS}, "spec": {"template": spec}}
    assert Preference.read(svc, config) == expected


# ---------------------------------------------------------------- through the service plan


def test_the_service_plan_follows_the_runtime_config_default_and_the_service_overrides_it():
    fp8 = measured(qwen_template("a-fp8"), entry(100, 9))  # fp8 is the usual winner
    fp16 = measured(qwen_template("b-fp16").precision("fp16"), entry(600, 30))
    config = cluster_config()
    config["spec"]["templateSelection"] = {"preferMeasured": {"by": "outputTokensPerSecond", "concurrency": 8}}

    plan, status = run(service("chat").model_name(QWEN), qwen_model(), fp8, fp16, config)
    assert status["resolvedTemplate"]["name"] == "b-fp16"
    assert any("measured ranking: outputTokensPerSecond at concurrency 8" in n for n in plan.notes)

    own = service("chat").model_name(QWEN)
    own["spec"]["template"] = {"preferMeasured": {"by": "ttftP50", "concurrency": 8}}
    _, status = run(own, qwen_model(), fp8, fp16, config)
    assert status["resolvedTemplate"]["name"] == "a-fp8"

    _, status = run(service("chat").model_name(QWEN), qwen_model(), fp8, fp16)  # not asked: the usual order
    assert status["resolvedTemplate"]["name"] == "a-fp8"
