"""The sweep plan (issue 23): which templates, one at a time or within a GPU budget, the comparison table."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.benchmarksweep.plan import Observed, child_name, plan_sweep
from aim_core.benchmarksweep.view import SweepView

NS = "team"
NOW = "2026-11-27T20:00:00Z"
RUN = {"scenarios": ["D(128,128)"], "concurrency": [1, 8], "maxRequests": 50, "historyLimit": 3}


def tpl(name: str, *, gpus: int = 1, ready: bool = True, kind: str = "optimized", model: str = "m", **meta) -> dict:
    t = {
        "kind": "AIMServiceTemplate",
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": {"modelName": model, "hardware": {"gpu": {"model": "MI300X", "requests": gpus}}, "precision": "fp8"},
        "status": {"status": "Ready" if ready else "Progressing", "profile": {"metadata": {"type": kind}}},
    }
    return t


def sweep(**spec: Any) -> dict:
    return {
        "kind": "AIMBenchmarkSweep",
        "metadata": {"name": "llama", "namespace": NS, "uid": "u1"},
        "spec": {"model": "m", "benchmark": RUN, **spec},
    }


C1, C2 = (child_name(SweepView.of(sweep()), i) for i in (0, 1))  # the first two children of the sweep


def observed(*templates: dict, cluster: tuple = (), services=(), benchmarks=()) -> Observed:
    return Observed(
        namespaced={t["metadata"]["name"]: t for t in templates},
        cluster={t["metadata"]["name"]: t for t in cluster},
        services={s["metadata"]["name"]: s for s in services},
        benchmarks={b["metadata"]["name"]: b for b in benchmarks},
        now=NOW,
    )


def wanted(plan, kind: str) -> list[dict]:
    return [d.obj for d in plan.apply if d.obj["kind"] == kind]


def with_status(obj: dict, plan) -> dict:
    return {**obj, "status": dict(plan.status)}


def child(kind: str, name: str, state: str, results: list | None = None, reason: str = "") -> dict:
    status: dict[str, Any] = {"status": state}
    if results is not None:
        status["results"] = results
    if reason:
        status["conditions"] = [{"type": "Ready", "status": "False", "reason": reason, "message": "it broke"}]
    return {"kind": kind, "metadata": {"name": name, "namespace": NS}, "status": status}


def test_every_ready_optimized_template_in_name_order_and_only_the_first_runs():
    s = sweep()
    ob = observed(
        tpl("b"),
        tpl("a"),
        tpl("c", ready=False),
        tpl("d", kind="preview"),
        tpl("e", labels={"aim.eai.amd.com/origin": "derived"}),
    )

    plan = plan_sweep(s, ob)

    assert [(e["template"], e["state"]) for e in plan.status["templates"]] == [("a", "Deploying"), ("b", "Waiting")]
    svc = wanted(plan, "AIMService")
    assert [x["metadata"]["name"] for x in svc] == [C1]
    assert svc[0]["spec"] == {"model": {"name": "m"}, "template": {"name": "a"}, "replicas": 1}
    assert wanted(plan, "AIMBenchmark") == []  # the run follows once the service is the sweep's own
    ob = attrs.evolve(ob, services={C1: child("AIMService", C1, "Pending")})
    plan = plan_sweep(with_status(s, plan), ob)
    run = wanted(plan, "AIMBenchmark")[0]
    assert run["spec"] == {
        "scenarios": ["D(128,128)"],
        "concurrency": [1, 8],
        "maxRequests": 50,
        "target": {"serviceName": C1},
    }
    assert plan.status["status"] == "Running" and plan.status["startTime"] == NOW


def test_a_finished_run_frees_the_slot_deletes_its_service_and_fills_the_comparison():
    s = sweep()
    ob = observed(tpl("a"), tpl("b", gpus=2))
    s = with_status(s, plan_sweep(s, ob))
    results = [{"scenario": "D(128,128)", "concurrency": 8, "outputTokensPerSecond": 400.0}]
    ob = observed(
        tpl("a"),
        tpl("b", gpus=2),
        services=[child("AIMService", C1, "Running")],
        benchmarks=[child("AIMBenchmark", C1, "Succeeded", results)],
    )

    plan = plan_sweep(s, ob)

    assert [(e["template"], e["state"]) for e in plan.status["templates"]] == [("a", "Succeeded"), ("b", "Deploying")]
    assert [(d.resource.kind, d.name) for d in plan.delete] == [("AIMService", C1)]
    assert [x["metadata"]["name"] for x in wanted(plan, "AIMService")] == [C2]
    assert plan.status["comparison"] == [
        {
            "scenario": "D(128,128)",
            "concurrency": 8,
            "outputTokensPerSecond": 400.0,
            "template": "a",
            "scope": "Namespace",
            "gpuModel": "MI300X",
            "gpuCount": 1,
            "precision": "fp8",
            "benchmark": C1,
        }
    ]


def test_a_failed_service_fails_its_template_and_the_sweep_fails_when_nothing_was_measured():
    s = sweep(templates=["a"])
    s = with_status(s, plan_sweep(s, observed(tpl("a"))))
    ob = observed(
        tpl("a"),
        services=[child("AIMService", C1, "Failed", reason="TemplateNotFound")],
        benchmarks=[child("AIMBenchmark", C1, "Pending")],
    )

    plan = plan_sweep(s, ob)

    entry = plan.status["templates"][0]
    assert entry["state"] == "Failed"
    assert entry["message"] == f"AIMService {C1} Failed: TemplateNotFound: it broke"
    assert {(d.resource.kind, d.name) for d in plan.delete} == {("AIMService", C1), ("AIMBenchmark", C1)}
    assert plan.status["status"] == "Failed" and plan.status["completionTime"] == NOW
    assert plan.components["Runs"].reason == "SweepFailed"


def test_gpu_budget_runs_what_fits_and_skips_what_never_can():
    s = sweep(parallelism=3, gpuBudget=4)
    plan = plan_sweep(s, observed(tpl("a", gpus=2), tpl("b", gpus=2), tpl("c", gpus=1), tpl("d", gpus=8)))

    states = {e["template"]: e["state"] for e in plan.status["templates"]}
    assert states == {"a": "Deploying", "b": "Deploying", "c": "Waiting", "d": "Skipped"}
    assert plan.status["templates"][3]["message"] == "needs 8 GPUs, over the sweep's gpuBudget of 4"


def test_named_templates_keep_their_order_and_unknown_ones_are_skipped():
    s = sweep(templates=["z", "nope", "other"])
    plan = plan_sweep(s, observed(tpl("z"), tpl("other", model="x")))

    assert [(e["template"], e["state"], e.get("message", "")) for e in plan.status["templates"]] == [
        ("z", "Deploying", ""),
        ("nope", "Skipped", "no such template"),
        ("other", "Skipped", "serves model 'x', not 'm'"),
    ]


def test_no_ready_template_waits():
    plan = plan_sweep(sweep(), observed(tpl("a", ready=False)))

    assert plan.status == {"status": "Pending"}
    assert plan.components["Runs"].reason == "NoTemplatesReady"
    assert plan.apply == []


def test_a_cluster_template_shadowed_by_a_namespaced_one_is_skipped():
    c = {**tpl("a"), "kind": "AIMClusterServiceTemplate", "metadata": {"name": "a"}}
    plan = plan_sweep(sweep(), observed(tpl("a"), cluster=(c,)))
    assert [(e["scope"], e["state"]) for e in plan.status["templates"]] == [
        ("Namespace", "Deploying"),
        ("Cluster", "Skipped"),
    ]


def test_child_names_fit_and_are_unique_per_sweep():
    long = "x" * 100
    one = SweepView(name=long, namespace=NS, uid="uid-1")
    name = child_name(one, 19)
    assert len(name) <= 43 and name.startswith("x" * 31 + "-") and name.endswith("-20")
    # a sweep sharing the first 40 characters, or the same name re-created (a new uid), names other children
    assert child_name(SweepView(name=long[:40] + "y", namespace=NS, uid="uid-2"), 19) != name
    assert child_name(SweepView(name=long, namespace=NS, uid="uid-3"), 19) != name
    # without a uid (rendered offline), the namespace and name decide
    assert child_name(SweepView(name="s", namespace="a"), 0) != child_name(SweepView(name="s", namespace="b"), 0)
    plan = plan_sweep(sweep(), observed(tpl("a"), tpl("b")))
    assert [e["service"] for e in plan.status["templates"]] == [C1, C2] and C1.startswith("llama-")


def test_a_sweep_whose_templates_all_failed_keeps_its_condition_message_writable():
    names = [f"tpl-{i:02d}-" + "n" * 200 for i in range(20)]
    s = sweep(templates=names)
    s = with_status(s, plan_sweep(s, observed(*(tpl(n) for n in names))))
    huge = "E" * 5000  # each service failed with a long message (a tool's log, a webhook's answer)
    entries = s["status"]["templates"]
    failed = [
        {
            **child("AIMService", e["service"], "Failed", reason="Boom"),
            "status": {
                "status": "Failed",
                "conditions": [{"type": "Ready", "status": "False", "reason": "Boom", "message": huge}],
            },
        }
        for e in entries
    ]
    for _ in range(20):  # parallelism 1: one template after another fails
        plan = plan_sweep(s, observed(*(tpl(n) for n in names), services=failed))
        s = with_status(s, plan)
    assert s["status"]["status"] == "Failed"
    assert len(s["status"]["templates"]) == len(names)
    for e in s["status"]["templates"]:  # every entry keeps its own detail, capped
        assert e["state"] == "Failed" and e["message"].startswith(f"AIMService {e['service']} Failed: Boom: EEE")
        assert len(e["message"]) <= 1024
    message = plan.components["Runs"].message
    assert all(n in message for n in names)
    from aim_core.reconcile.conditions import MAX_MESSAGE, merge_conditions

    (cond,) = merge_conditions(
        [], [{"type": "RunsReady", "status": "False", "reason": "SweepFailed", "message": message * 3}], NOW
    )
    assert len(cond["message"]) <= MAX_MESSAGE and cond["message"].startswith("no template was measured")


def test_a_childs_name_held_by_another_object_is_never_taken_over_read_or_deleted():
    s = sweep(deployTimeout="30m")
    s = with_status(s, plan_sweep(s, observed(tpl("a"), tpl("b"))))
    # a user's AIMService holds the child's name: observe leaves it out of services and says who holds it
    ob = attrs.evolve(observed(tpl("a"), tpl("b")), taken={f"AIMService {C1}": "no owner (not created for this sweep)"})
    plan = plan_sweep(s, ob)
    entry = plan.status["templates"][0]
    assert entry["state"] == "Deploying" and "NameConflict" in entry["message"] and C1 in entry["message"]
    assert wanted(plan, "AIMBenchmark") == [] and plan.delete == []  # no run against the user's service
    past = attrs.evolve(ob, now="2026-11-27T20:30:01Z")
    plan = plan_sweep(s, past)
    entry = plan.status["templates"][0]
    assert (
        entry["state"] == "Failed" and "deployTimeout 30m" in entry["message"] and "already exists" in entry["message"]
    )
    assert plan.delete == [] and plan.status["templates"][1]["state"] == "Deploying"


def test_a_lost_start_time_is_taken_from_the_childs_creation():
    s = sweep(deployTimeout="30m")
    first = plan_sweep(s, observed(tpl("a"), tpl("b")))
    s = with_status(s, first)
    for e in s["status"]["templates"]:  # the status write that recorded the start was lost
        e.pop("startTime", None)
        e["state"] = "Waiting"
    pending = {**child("AIMService", C1, "Pending", reason="ModelNotReady")}
    pending["metadata"]["creationTimestamp"] = "2026-11-27T19:00:00Z"
    plan = plan_sweep(s, observed(tpl("a"), tpl("b"), services=[pending]))
    entry = plan.status["templates"][0]
    assert entry["state"] == "Failed" and "not Ready within deployTimeout 30m" in entry["message"]
    assert entry["startTime"] == "2026-11-27T19:00:00Z"
    assert plan.status["templates"][1]["state"] == "Deploying"


def test_a_service_not_ready_within_the_deploy_timeout_fails_its_template_and_the_next_starts():
    s = sweep(deployTimeout="30m")
    first = plan_sweep(s, observed(tpl("a"), tpl("b")))
    assert first.status["templates"][0]["startTime"] == NOW
    assert first.requeue_after == 1800.0
    s = with_status(s, first)
    pending = child("AIMService", C1, "Pending", reason="ModelNotReady")
    run = child("AIMBenchmark", C1, "Pending")

    later = attrs.evolve(observed(tpl("a"), tpl("b"), services=[pending], benchmarks=[run]), now="2026-11-27T20:20:00Z")
    plan = plan_sweep(s, later)
    assert [e["state"] for e in plan.status["templates"]] == ["Deploying", "Waiting"]
    assert plan.requeue_after == 600.0

    past = attrs.evolve(later, now="2026-11-27T20:30:01Z")
    plan = plan_sweep(s, past)
    entry = plan.status["templates"][0]
    assert entry["state"] == "Failed"
    assert entry["message"] == f"AIMService {C1} not Ready within deployTimeout 30m (ModelNotReady: it broke)"
    assert {(d.resource.kind, d.name) for d in plan.delete} == {("AIMService", C1), ("AIMBenchmark", C1)}
    assert plan.status["templates"][1]["state"] == "Deploying"


def test_a_deploy_timeout_longer_than_go_holds_is_invalid_spec_naming_the_field():
    plan = plan_sweep(sweep(deployTimeout="9999999h"), observed(tpl("a")))
    runs = plan.components["Runs"]
    assert plan.status["status"] == "Failed" and runs.reason == "InvalidSpec"
    assert runs.message.startswith("spec.deployTimeout: ") and plan.apply == []
