"""A template's status.benchmarks (issue 23): the latest headline numbers per scenario and load, from its runs."""

from __future__ import annotations

from typing import Any

from aim_core.template.benchmarks import MAX_ENTRIES, index_key, measure, summarize, trusted_namespaces


def run(
    name: str, finished: str, *results: dict[str, Any], status: str = "Succeeded", ns: str = "team", **target: Any
) -> dict:
    """A run whose spec asked for exactly the scenarios and load levels of its results."""
    rates = sorted({r["requestRate"] for r in results if "requestRate" in r})
    spec: dict[str, Any] = {"scenarios": sorted({r["scenario"] for r in results})}
    if rates:
        spec["requestRates"] = rates
    else:
        spec["concurrency"] = sorted({r["concurrency"] for r in results if "concurrency" in r})
    return {
        "kind": "AIMBenchmark",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
        "status": {
            "status": status,
            "completionTime": finished,
            "target": {"template": "tpl", "templateScope": "Namespace", "replicas": 1, **target},
            "results": list(results),
        },
    }


def result(scenario: str = "D(128,128)", concurrency: int | None = 8, tps: float = 100.0, **extra: Any) -> dict:
    out = {"scenario": scenario, "outputTokensPerSecond": tps, "ttftMs": {"p50": 40.0, "p90": 50.0, "p99": 60.0}}
    if concurrency is not None:
        out["concurrency"] = concurrency
    return {**out, **extra}


def test_the_latest_run_wins_per_scenario_and_load_and_older_loads_stay():
    old = run("old", "2026-11-27T10:00:00Z", result(concurrency=1, tps=10), result(concurrency=8, tps=80))
    new = run("new", "2026-11-27T12:00:00Z", result(concurrency=8, tps=90))

    entries = summarize([new, old])

    assert [(e["concurrency"], e["outputTokensPerSecond"], e["benchmark"]) for e in entries] == [
        (1, 10, "old"),
        (8, 90, "new"),
    ]
    assert entries[1] == {
        "scenario": "D(128,128)",
        "concurrency": 8,
        "outputTokensPerSecond": 90,
        "ttftMs": {"p50": 40.0, "p90": 50.0, "p99": 60.0},
        "replicas": 1,
        "benchmark": "new",
        "namespace": "team",
        "completionTime": "2026-11-27T12:00:00Z",
    }


def test_failed_and_running_runs_do_not_count():
    entries = summarize(
        [
            run("failed", "2026-11-27T12:00:00Z", result(tps=999), status="Failed"),
            run("running", "", result(tps=999), status="Running"),
            run("ok", "2026-11-27T09:00:00Z", result(tps=5)),
        ]
    )
    assert [e["benchmark"] for e in entries] == ["ok"]


def test_rate_mode_entries_keep_their_request_rate():
    entries = summarize([run("r", "2026-11-27T09:00:00Z", result(concurrency=None, requestRate=2.5))])
    assert entries[0]["requestRate"] == 2.5
    assert "concurrency" not in entries[0]


def test_the_status_stays_small():
    many = [result(f"D({i},{i})", concurrency=c) for i in range(1, 11) for c in (1, 8)]
    entries = summarize([run("a", "2026-11-27T01:00:00Z", *many), run("b", "2026-11-27T02:00:00Z", result("D(9,9)"))])
    assert len(entries) == MAX_ENTRIES == 20
    assert any(e["benchmark"] == "b" for e in entries)


def test_over_the_cap_the_newest_measurements_stay_and_the_note_says_what_was_left_out():
    # 20 old entries of scenarios sorting first, then a newer run of a scenario sorting last
    old = [result(f"D({i},1)", concurrency=c) for i in range(10, 20) for c in (1, 8)]
    newer = run("z", "2026-11-27T05:00:00Z", result("U(1,2)/(3,4)", concurrency=1))
    measured = measure([run("a", "2026-11-27T01:00:00Z", *old), newer])
    assert len(measured.entries) == MAX_ENTRIES
    assert any(e["scenario"] == "U(1,2)/(3,4)" for e in measured.entries)  # not cut for sorting last
    assert "left out 1 older measurements (at most 20 are kept)" in measured.note
    assert "from AIMBenchmarks team/a, team/z" in measured.note


def test_results_the_runs_spec_did_not_ask_for_do_not_count():
    steered = run("r", "2026-11-27T09:00:00Z", result(concurrency=8, tps=5))
    steered["status"]["results"].append(result("D(1,1)", concurrency=8, tps=1e9))  # not in spec.scenarios
    steered["status"]["results"].append(result(concurrency=64, tps=1e9))  # not in spec.concurrency
    assert [(e["scenario"], e["concurrency"]) for e in summarize([steered])] == [("D(128,128)", 8)]


def test_a_cluster_template_counts_only_trusted_namespaces_and_names_the_ignored_runs():
    ours = run("sweep-run", "2026-11-27T09:00:00Z", result(tps=5), ns="aim-system", templateScope="Cluster")
    theirs = run("steer", "2026-11-27T10:00:00Z", result(tps=1e9), ns="tenant", templateScope="Cluster")
    default = trusted_namespaces({}, "aim-system")  # unset: the operator's namespace only
    measured = measure([ours, theirs], default)
    assert [e["benchmark"] for e in measured.entries] == ["sweep-run"]
    assert "ignored 1 runs from namespaces the cluster runtime config does not trust (tenant/steer)" in measured.note
    assert "spec.benchmarks.trustedNamespaces" in measured.note
    listed = trusted_namespaces({"benchmarks": {"trustedNamespaces": ["tenant"]}}, "aim-system")
    assert [e["benchmark"] for e in measure([ours, theirs], listed).entries] == ["steer"]
    everyone = trusted_namespaces({"benchmarks": {"trustedNamespaces": ["*"]}}, "aim-system")
    assert measure([ours, theirs], everyone).entries[0]["benchmark"] == "steer"  # the latest


def test_the_index_names_the_template_and_its_scope():
    assert index_key(run("a", "t")) == [("Namespace", "team", "tpl")]
    assert index_key(run("a", "t", templateScope="Cluster")) == [("Cluster", None, "tpl")]
    assert index_key(run("a", "t", status="Running")) == []
    assert index_key(run("a", "t", template=None)) == []
