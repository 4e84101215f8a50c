"""The pure parts of the benchmark kind: the tool's request, the Job's name and report, the plan's outcomes."""

from __future__ import annotations

import pytest

from aim_core.benchmark.job import (
    JOB_TTL_S,
    benchmark_label,
    build_job,
    deadline_basis,
    deadline_seconds,
    job_name,
    report_location,
    request_for,
)
from aim_core.benchmark.plan import Observed, Target, plan_benchmark
from aim_core.plugin.benchtools import BenchmarkCommand, BenchmarkReportError, BenchmarkResult, Percentiles


class FakeTool:
    name = "fake"
    image = "example.com/fake:1"

    def unsupported(self, request):
        return None

    def command(self, request):
        return BenchmarkCommand(command=["run", request.endpoint], env={"X": "1"})

    def parse(self, summary, request):
        if summary != "ok":
            raise BenchmarkReportError(f"cannot read {summary!r}")
        return [BenchmarkResult(scenario="D(1,1)", concurrency=1, ttft_ms=Percentiles(p50=5.0))]


def run(name="r", status=None, **spec):
    base = {"target": {"endpoint": "http://x:8000", "model": "m"}, "scenarios": ["D(1,1)"], "concurrency": [1]}
    obj = {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}, "spec": base | spec}
    if status:
        obj["status"] = status
    return obj


ENDPOINT = Target(True, "", "http://x:8000", "m", {"endpoint": "http://x:8000", "model": "m"})


def owned_by(uid: str, kind: str = "AIMBenchmark") -> dict:
    return {"ownerReferences": [{"kind": kind, "name": "r", "uid": uid, "controller": True}]}


def job_of(run_uid: str = "uid-r", *, uid: str = "job-uid", conditions=(), **extra) -> dict:
    return {
        "metadata": {"name": "r", "namespace": "ns", "uid": uid, **owned_by(run_uid)},
        "spec": {"backoffLimit": 0, "template": {"spec": {}}},
        "status": {"conditions": list(conditions), **extra},
    }


def pod_of(job_uid: str, message: str, name: str = "r-x", finished: str = "t") -> dict:
    return {
        "metadata": {"name": name, **owned_by(job_uid, "Job")},
        "status": {
            "containerStatuses": [
                {"name": "benchmark", "state": {"terminated": {"message": message, "finishedAt": finished}}}
            ]
        },
    }


def test_the_request_carries_the_spec_with_durations_in_seconds():
    req = request_for(run(maxDuration="1m30s", maxRequests=5, tokenizer="tok"), "http://x:8000/", "m")
    assert (req.endpoint, req.max_duration_s, req.max_requests, req.tokenizer) == ("http://x:8000", 90.0, 5, "tok")
    assert request_for(run(), "http://x", "m").tokenizer == "m"  # the model's name when unset


def test_a_long_run_name_gets_a_short_stable_job_name():
    long = "a" * 80
    assert len(job_name(long)) <= 63 and job_name(long) == job_name(long) != job_name("a" * 79 + "b")
    assert job_name("short") == "short"


@pytest.mark.parametrize(
    ("uri", "expected"),
    [("pvc://claim", ("claim", "")), ("pvc://claim/a/b/", ("claim", "a/b")), (None, None)],
)
def test_report_location(uri, expected):
    assert report_location(run(report={"uri": uri}) if uri else run()) == expected


def test_the_job_mounts_the_report_claim_and_adds_the_plugins_env():
    job = build_job(run(report={"uri": "pvc://c/p"}), image="i", command=BenchmarkCommand(["x"], env={"A": "b"}))
    pod = job["spec"]["template"]["spec"]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["AIM_BENCH_REPORT_DIR"] == "/report/p" and env["A"] == "b"
    assert pod["volumes"][0] == {"name": "report", "persistentVolumeClaim": {"claimName": "c"}}
    assert "nodeSelector" not in pod and "imagePullSecrets" not in pod  # an endpoint has no placement


def test_waiting_for_the_target_creates_nothing():
    plan = plan_benchmark(run(), Observed(target=Target(False, "AIMService s is Starting"), tool=FakeTool()))
    assert plan.apply == [] and plan.status["status"] == "Pending"
    assert plan.components["Target"].reason == "TargetNotReady"


def test_a_finished_run_is_carried_over_whatever_its_job_says():
    done = {"status": "Succeeded", "results": [{"scenario": "D(1,1)"}], "completionTime": "t"}
    failed_job = job_of(conditions=[{"type": "Failed", "status": "True"}])
    failed_job["spec"]["ttlSecondsAfterFinished"] = 60
    plan = plan_benchmark(run(status=done), Observed(target=ENDPOINT, tool=FakeTool(), job=failed_job))
    assert plan.apply == [] and plan.delete == []
    assert plan.status["status"] == "Succeeded" and plan.status["results"] == [{"scenario": "D(1,1)"}]


def _completed(message: str) -> Observed:
    job = job_of(conditions=[{"type": "Complete", "status": "True"}], completionTime="t1")
    return Observed(target=ENDPOINT, tool=FakeTool(), job=job, pods=[pod_of("job-uid", message)])


def test_a_completed_job_with_a_readable_summary_succeeds():
    plan = plan_benchmark(run(), _completed("ok"))
    assert plan.status["status"] == "Succeeded" and plan.status["completionTime"] == "t1"
    assert plan.status["results"] == [{"scenario": "D(1,1)", "concurrency": 1, "ttftMs": {"p50": 5.0}}]


def test_a_completed_job_without_a_readable_summary_is_report_unparsable():
    plan = plan_benchmark(run(), _completed("hf_secrettokenvalue123 nothing here"))
    assert plan.status["status"] == "Failed" and "results" not in plan.status
    job = plan.components["Job"]
    assert job.reason == "ReportUnparsable" and "hf_secrettokenvalue123" not in job.message


def test_an_s3_report_is_uploaded_by_the_tool_from_an_empty_dir():
    obj = run(report={"uri": "s3://bucket/team"})
    assert request_for(obj, "http://x", "m").report_uri == "s3://bucket/team"
    job = build_job(obj, image="i", command=BenchmarkCommand(["x"]))
    assert job["spec"]["template"]["spec"]["volumes"][0] == {"name": "report", "emptyDir": {}}
    plan = plan_benchmark(obj, _completed("ok"))
    assert plan.status["report"] == {"uri": "s3://bucket/team/r/"}


def test_the_deadline_is_derived_from_the_runs_and_their_bound_or_taken_from_spec_timeout():
    two_by_three = {"scenarios": ["D(1,1)", "D(2,2)"], "concurrency": [1, 2, 4]}
    # 6 runs x (90s rounded up to 2m, plus 1m) plus 15m
    assert deadline_seconds(run(maxDuration="90s", **two_by_three)) == 6 * 180 + 900
    assert deadline_seconds(run(maxDuration="2m", **two_by_three)) == 6 * 180 + 900
    assert deadline_seconds(run(maxRequests=10, requestRates=[1.0], concurrency=None)) == 86400 + 60 + 900
    assert deadline_seconds(run(maxDuration="90s", timeout="2h", **two_by_three)) == 7200
    assert "6 concurrency levels" not in deadline_basis(run(maxDuration="90s", **two_by_three))
    assert deadline_basis(run(maxDuration="90s", **two_by_three)).startswith("derived: 2 scenarios x 3 concurrency")


def test_the_job_carries_the_deadline_and_a_run_stopped_at_it_says_what_to_change():
    obj = run(maxDuration="30s")
    plan = plan_benchmark(obj, Observed(target=ENDPOINT, tool=FakeTool()))
    (job,) = [d.obj for d in plan.apply]
    assert job["spec"]["activeDeadlineSeconds"] == 1 * (60 + 60) + 900
    job = {
        "metadata": {"name": "r", "uid": "job-uid", **owned_by("uid-r")},
        "spec": job["spec"],
        "status": {
            "conditions": [
                {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "lastTransitionTime": "t2"}
            ]
        },
    }
    plan = plan_benchmark(obj, Observed(target=ENDPOINT, tool=FakeTool(), job=job))
    failed = plan.components["Job"]
    assert plan.status["status"] == "Failed" and failed.reason == "DeadlineExceeded"
    assert "deadline of 1020s" in failed.message and "spec.timeout" in failed.message
    assert "1 scenarios x 1 concurrency levels x (1m for maxDuration 30s" in failed.message


def test_a_timeout_the_schema_let_through_is_invalid_spec():
    plan = plan_benchmark(run(maxDuration="30s", timeout="soon"), Observed(target=ENDPOINT, tool=FakeTool()))
    assert plan.components["Job"].reason == "InvalidSpec" and "spec.timeout" in plan.components["Job"].message
    assert plan.apply == []


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"maxDuration": "99999999999h"}, "spec.maxDuration"),
        ({"maxDuration": "30s", "timeout": "2562048h"}, "spec.timeout"),
        ({"maxDuration": "2562048h", "timeout": "1h"}, "spec.maxDuration"),
    ],
)
def test_a_duration_longer_than_go_holds_is_invalid_spec_naming_its_field(spec, field):
    plan = plan_benchmark(run(**spec), Observed(target=ENDPOINT, tool=FakeTool()))
    job = plan.components["Job"]
    assert plan.status["status"] == "Failed" and job.reason == "InvalidSpec"
    assert job.message.startswith(f"{field}: ") and "2562047h" in job.message
    assert plan.apply == []


def test_the_longest_go_duration_is_accepted():
    assert deadline_seconds(run(timeout="2562047h")) == 2562047 * 3600


def test_a_rerun_under_the_same_name_waits_out_the_old_runs_job_and_never_adopts_it():
    old_job = job_of("uid-of-the-deleted-run", conditions=[{"type": "Complete", "status": "True"}])
    old_pod = pod_of("job-uid", "ok")
    plan = plan_benchmark(run(), Observed(target=ENDPOINT, tool=FakeTool(), job=old_job, pods=[old_pod]))
    assert plan.status["status"] == "Pending" and "results" not in plan.status
    job = plan.components["Job"]
    assert job.reason == "WaitingForOldJob" and "uid-of-the-deleted-run" in job.message
    assert plan.apply == [] and plan.delete == [] and plan.requeue_after
    # once it is gone, the run creates its own
    plan = plan_benchmark(run(), Observed(target=ENDPOINT, tool=FakeTool()))
    assert [d.obj["kind"] for d in plan.apply] == ["Job"] and plan.status["status"] == "Running"


def test_only_pods_of_the_runs_own_job_are_read():
    job = job_of(conditions=[{"type": "Complete", "status": "True"}], completionTime="t1")
    stranger = pod_of("some-other-job", "ok", name="fake", finished="t9")  # carries the run's label, not its Job
    labelled = {**stranger, "metadata": {"name": "fake2", "labels": {"controller-uid": "other"}}}
    plan = plan_benchmark(run(), Observed(target=ENDPOINT, tool=FakeTool(), job=job, pods=[stranger, labelled]))
    assert plan.status["status"] == "Failed" and plan.components["Job"].reason == "ReportUnparsable"
    mine = {**stranger, "metadata": {"name": "p", "labels": {"controller-uid": "job-uid"}}}
    plan = plan_benchmark(run(), Observed(target=ENDPOINT, tool=FakeTool(), job=job, pods=[stranger, mine]))
    assert plan.status["status"] == "Succeeded"


def test_long_run_names_get_distinct_label_values():
    a, b = "x" * 70 + "a", "x" * 70 + "b"
    assert benchmark_label(a) != benchmark_label(b) and len(benchmark_label(a)) <= 63
    assert benchmark_label("run-1") == "run-1"


def test_a_running_run_whose_job_disappeared_fails_job_lost_and_creates_nothing():
    status = {"status": "Running", "startTime": "t0", "jobName": "r", "target": {"endpoint": "http://x:8000"}}
    not_ready = Target(False, "AIMService s is Starting")
    plan = plan_benchmark(run(status=status), Observed(target=not_ready, tool=FakeTool()))
    assert plan.status["status"] == "Failed" and plan.components["Job"].reason == "JobLost"
    assert "Job r" in plan.components["Job"].message and plan.apply == []


def test_results_the_spec_did_not_ask_for_are_dropped():
    class Chatty(FakeTool):
        def parse(self, summary, request):
            return [
                BenchmarkResult(scenario="D(1,1)", concurrency=1),
                BenchmarkResult(scenario="D(1,1)", concurrency=64),
                BenchmarkResult(scenario="D(9,9)", concurrency=1),
            ]

    job = job_of(conditions=[{"type": "Complete", "status": "True"}])
    plan = plan_benchmark(run(), Observed(target=ENDPOINT, tool=Chatty(), job=job, pods=[pod_of("job-uid", "x")]))
    assert plan.status["results"] == [{"scenario": "D(1,1)", "concurrency": 1}]
    assert "2 results for scenarios or load levels the spec did not ask for ignored" in plan.components["Job"].message


def test_a_finished_runs_job_gets_a_time_to_live_once_and_only_its_own():
    done = {"status": "Succeeded", "results": [], "completionTime": "t"}
    job = job_of(conditions=[{"type": "Complete", "status": "True"}])
    plan = plan_benchmark(run(status=done), Observed(target=ENDPOINT, tool=FakeTool(), job=job))
    (applied,) = [d.obj for d in plan.apply]
    assert applied["spec"]["ttlSecondsAfterFinished"] == JOB_TTL_S
    assert applied["spec"]["template"] == job["spec"]["template"]  # the rest as it is (immutable)
    job["spec"]["ttlSecondsAfterFinished"] = JOB_TTL_S
    assert plan_benchmark(run(status=done), Observed(target=ENDPOINT, tool=FakeTool(), job=job)).apply == []
    other = job_of("another-run", conditions=[{"type": "Complete", "status": "True"}])
    assert plan_benchmark(run(status=done), Observed(target=ENDPOINT, tool=FakeTool(), job=other)).apply == []


def test_a_service_whose_served_model_name_is_unknown_fails_saying_what_to_set():
    target = Target(True, "", "http://svc", None, {"endpoint": "http://svc"}, model_problem="set spec.target.model")
    plan = plan_benchmark(run(target={"serviceName": "s"}), Observed(target=target, tool=FakeTool()))
    job = plan.components["Job"]
    assert plan.status["status"] == "Failed" and job.reason == "ModelNameUnknown"
    assert "spec.target.model" in job.message and plan.apply == []


def test_the_job_takes_the_services_resolved_placement_and_pull_secrets():
    target = Target(
        True,
        "",
        "http://svc",
        "m",
        {"endpoint": "http://svc", "model": "m"},
        placement={"nodeSelector": {"pool": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}]},
        pull_secrets=({"name": "from-template"},),
    )
    obj = run(target={"serviceName": "s"}, imagePullSecrets=[{"name": "own"}, {"name": "from-template"}])
    plan = plan_benchmark(obj, Observed(target=target, tool=FakeTool()))
    pod = plan.apply[0].obj["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "a"} and pod["tolerations"] == [{"key": "k", "operator": "Exists"}]
    assert pod["imagePullSecrets"] == [{"name": "from-template"}, {"name": "own"}]


def test_a_completed_job_whose_pod_is_not_seen_yet_is_waited_for_then_reported_gone():
    import datetime

    done = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
    job = job_of(conditions=[{"type": "Complete", "status": "True"}], completionTime="2026-11-29T08:00:00Z")
    soon = Observed(target=ENDPOINT, tool=FakeTool(), job=job, now=done + datetime.timedelta(seconds=5))
    plan = plan_benchmark(run(), soon)  # the pod's termination comes on another watch, maybe later
    assert plan.status["status"] == "Running" and plan.components["Job"].reason == "WaitingForPod"
    assert plan.requeue_after
    late = Observed(target=ENDPOINT, tool=FakeTool(), job=job, now=done + datetime.timedelta(seconds=40))
    plan = plan_benchmark(run(), late)
    assert plan.status["status"] == "Failed" and plan.components["Job"].reason == "ReportUnparsable"
