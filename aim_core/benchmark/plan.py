"""What an AIMBenchmark reconcile decides. Pure.

Lifecycle (``status.status``):

* ``Pending`` -- the target service is missing or not Ready (``TargetReady`` False,
  reason ``TargetNotReady``); nothing is created;
* ``Running`` -- the target was Ready: its snapshot is in ``status.target`` (taken once)
  and the Job exists; a target that flaps afterwards does not stop the run;
* ``Succeeded`` -- the Job completed and the plugin read the summary from the pod's
  termination message: ``status.results``;
* ``Failed`` -- ``JobFailed`` (the tool's last log lines, redacted), ``DeadlineExceeded``,
  ``ReportUnparsable``, ``ToolNotFound``, ``UnsupportedByTool``, ``InvalidSpec`` (naming the
  field), ``ModelNameUnknown`` (the service's served model name cannot be known: set
  ``spec.target.model``) or ``JobLost`` (the run's Job disappeared before its results were
  read: the run is not started again).

The Job and its pods belong to the run through its uid only: a Job of the same name that the
run does not control (an earlier run of the same name, still being deleted) is waited out
(``JobReady`` False ``WaitingForOldJob``), never adopted; only pods of the run's own Job (its
uid in their owner reference or the Job controller's label) are read. Only the results for the
scenarios and load levels of the spec are kept.

When a run finishes (its final status is written), its finished Job gets
``ttlSecondsAfterFinished`` (:data:`~aim_core.benchmark.job.JOB_TTL_S`): Kubernetes
removes it and its pod an hour after the Job finished.

A finished run (Succeeded, Failed) is immutable: its status is never planned again, only
carried over. When it is finished, older finished runs of the same target beyond the newest
run's ``historyLimit`` are deleted (runs with an owner, e.g. a sweep's, are never pruned).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.benchmark import BENCHMARK_FINISHED
from aim_core.benchmark.job import (
    CONTAINER,
    JOB_TTL_S,
    SpecFieldError,
    build_job,
    controlled_by,
    deadline_basis,
    deadline_seconds,
    job_name,
    pods_of_job,
    request_for,
)
from aim_core.benchmark.view import BenchmarkView
from aim_core.plugin.benchtools import BenchmarkReportError, BenchmarkResult, BenchmarkTool, Percentiles
from aim_core.reconcile.conditions import parse_time
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.obj import Obj, meta_of
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.redaction import redact
from aim_core.reconcile.resources import BENCHMARKS, JOBS

TARGET = "Target"  # -> condition TargetReady
JOB = "Job"  # -> condition JobReady
LOG_LINES = 20  # last lines of a failed tool's log kept in the condition message


@attrs.frozen
class Target:
    """The target as observe found it: the service (None for an endpoint) and what it runs."""

    ready: bool
    reason: str  # why not ready
    endpoint: str | None = None
    model: str | None = None
    snapshot: Mapping[str, Any] = attrs.field(factory=dict)  # status.target
    service: Obj | None = None
    model_problem: str = ""  # why the served model name is unknown (no model)
    placement: Mapping[str, Any] = attrs.field(factory=dict)  # nodeSelector, tolerations, affinity of the service
    pull_secrets: tuple[Mapping[str, Any], ...] = ()  # the service's effective pull secrets


POD_GRACE = datetime.timedelta(seconds=30)  # how long a completed Job's pod may take to be seen


@attrs.frozen
class Observed:
    target: Target
    tool: BenchmarkTool | None
    tool_error: str = ""  # why no tool was found
    job: Obj | None = None
    pods: Sequence[Obj] = ()
    same_target: Sequence[Obj] = ()  # other AIMBenchmarks of the same target and namespace
    now: datetime.datetime | None = None  # the controller's clock; None: no wait for a pod still on its way


def plan_benchmark(obj: Obj | BenchmarkView, observed: Observed) -> Plan:
    run = BenchmarkView.of(obj)
    plan = _plan(run, observed)
    if plan.status.get("status") in BENCHMARK_FINISHED:  # finished before, or just now
        done = attrs.evolve(
            run,
            state=str(plan.status["status"]),
            completion_time=str(plan.status.get("completionTime") or run.completion_time),
        )
        _prune(plan, done, [BenchmarkView.of(r) for r in observed.same_target])
        _expire(plan, run, observed.job)
    return plan


def _plan(run: BenchmarkView, observed: Observed) -> Plan:
    plan = Plan()
    status = run.status
    if run.state in BENCHMARK_FINISHED:
        _carry_over(plan, status)
        return plan
    tool = observed.tool
    if tool is None:
        return _fail(plan, status, reason="ToolNotFound", message=observed.tool_error)
    plan.status["tool"] = tool.name
    job, other_job = observed.job, None
    if job is not None and not controlled_by(job, run.uid):
        job, other_job = None, job  # not this run's (an earlier run of the same name): never adopted
    started = job is not None or bool(run.start_time)
    target = observed.target
    if not started and not target.ready:
        plan.component(TARGET, Health(State.PENDING, "TargetNotReady", target.reason, upstream=True))
        plan.component(JOB, Health(State.PENDING, "WaitingForTarget", "the Job starts once the target is Ready"))
        plan.status["status"] = "Pending"
        return plan
    snapshot = dict(run.snapshot or target.snapshot)
    plan.status["target"] = snapshot
    plan.component(TARGET, Health.ok("Ready", f"benchmarking {snapshot.get('endpoint')}", upstream=True))
    if job is None and run.start_time:
        name = str(status.get("jobName") or job_name(run.name))
        return _fail(
            plan,
            status,
            "JobLost",
            f"Job {name} of this run is gone (deleted, removed by a TTL policy or collected while the operator "
            "was down) before its results were read; the run is not started again: create a new AIMBenchmark "
            "to re-run",
        )
    endpoint, model = snapshot.get("endpoint") or target.endpoint, snapshot.get("model") or target.model
    if not endpoint:
        return _fail(plan, status, "InvalidSpec", "no endpoint to benchmark; set spec.target")
    if not model:
        model_message = target.model_problem or "the name of the served model is unknown; set spec.target.model"
        return _fail(plan, status, "ModelNameUnknown", model_message)
    try:
        request = request_for(run, endpoint, model)
        deadline = deadline_seconds(run)
    except SpecFieldError as exc:
        return _fail(plan, status, "InvalidSpec", str(exc))
    if why := tool.unsupported(request):
        return _fail(plan, status, "UnsupportedByTool", why)
    if other_job is not None:
        owners = ", ".join(
            f"{r.get('kind')} {r.get('name')} (uid {r.get('uid')})"
            for r in meta_of(other_job).get("ownerReferences") or ()
        )
        plan.component(
            JOB,
            Health.progressing(
                "WaitingForOldJob",
                f"Job {meta_of(other_job)['name']} exists but is not this run's (owned by {owners or 'nobody'}); "
                "waiting until it is deleted (the garbage collector removes an earlier run's Job once that run "
                "is gone; delete the Job yourself if it has no owner)",
            ),
        )
        plan.status["status"] = "Pending"
        plan.requeue(30.0)
        return plan
    if job is None:
        image = run.image or tool.image
        command = tool.command(request)
        plan.want(
            JOBS,
            build_job(
                run,
                image=image,
                command=command,
                placement=target.placement,
                pull_secrets=target.pull_secrets,
                deadline_s=deadline,
            ),
        )
        plan.component(JOB, Health.progressing("JobCreated", "creating the benchmark Job"))
        plan.status["status"] = "Running"
        return plan
    job_status = job.get("status") or {}
    plan.status["jobName"] = meta_of(job)["name"]
    plan.status["startTime"] = run.start_time or job_status.get("startTime") or meta_of(job).get("creationTimestamp")
    if report := _report_uri(run):
        plan.status["report"] = {"uri": report}
    true = {c.get("type"): c for c in job_status.get("conditions") or () if c.get("status") == "True"}
    terminated = _terminated(pods_of_job(observed.pods, job))
    if "Failed" in true or "FailureTarget" in true:
        cond = true.get("Failed") or true.get("FailureTarget") or {}
        plan.status["completionTime"] = cond.get("lastTransitionTime") or job_status.get("completionTime")
        tail = _tail((terminated or {}).get("message") or "")
        if cond.get("reason") == "DeadlineExceeded":
            reason, why = "DeadlineExceeded", _deadline_message(run, job, deadline)
        else:
            reason = "JobFailed"
            why = f"Job {meta_of(job)['name']} failed ({cond.get('reason') or 'Failed'}: {cond.get('message') or ''})"
        return _fail(plan, status, reason, f"{why}; last log lines:\n{tail}" if tail else why)
    if "Complete" not in true and "SuccessCriteriaMet" not in true:
        active = job_status.get("active", 0)
        plan.component(
            JOB, Health.progressing("JobRunning", f"Job {meta_of(job)['name']} is running ({active} active)")
        )
        plan.status["status"] = "Running"
        return plan
    plan.status["completionTime"] = job_status.get("completionTime") or (true.get("Complete") or {}).get(
        "lastTransitionTime"
    )
    if terminated is None:
        completed = parse_time(str(plan.status.get("completionTime") or ""))
        if observed.now is not None and completed is not None and observed.now - completed < POD_GRACE:
            # the Job's completion and its pod's termination come on separate watches, in either order
            plan.component(
                JOB,
                Health.progressing(
                    "WaitingForPod", f"Job {meta_of(job)['name']} completed; waiting for its pod's termination message"
                ),
            )
            plan.status["status"] = "Running"
            plan.requeue(POD_GRACE.total_seconds())
            return plan
        return _fail(plan, status, "ReportUnparsable", "the benchmark pod and its termination message are gone")
    try:
        parsed = list(tool.parse(terminated.get("message") or "", request))
    except BenchmarkReportError as exc:
        return _fail(plan, status, "ReportUnparsable", redact(str(exc)))
    results = [r for r in parsed if _requested(run, r)]
    plan.status["results"] = [result_status(r) for r in results]
    plan.status["status"] = "Succeeded"
    note = f"; {len(parsed) - len(results)} results for scenarios or load levels the spec did not ask for ignored"
    plan.component(
        JOB, Health.ok("Succeeded", f"{len(results)} results from {tool.name}" + (note if results != parsed else ""))
    )
    return plan


def _requested(run: BenchmarkView, result: BenchmarkResult) -> bool:
    """Whether ``result`` measures a scenario and load level of the spec (a tool or image cannot add others)."""
    if result.scenario not in run.scenarios:
        return False
    if run.concurrency:
        return result.concurrency is not None and any(_same(result.concurrency, c) for c in run.concurrency)
    return result.request_rate is not None and any(_same(result.request_rate, r) for r in run.request_rates)


def _same(value: Any, wanted: Any) -> bool:
    try:
        return abs(float(value) - float(wanted)) < 1e-9
    except (TypeError, ValueError):
        return False


def _expire(plan: Plan, run: BenchmarkView, job: Obj | None) -> None:
    """A finished run's own Job, once finished, gets a time to live: nothing more is read from it.

    Set in the reconcile that writes the run's final status (the hour leaves ample time to
    read the pod again should that write fail), and by a later one for a run finished
    before. The Job is applied as it is, with ``ttlSecondsAfterFinished`` added: its other
    fields are immutable, and the same values change nothing.
    """
    if job is None or not controlled_by(job, run.uid):
        return
    spec = job.get("spec") or {}
    done = {c.get("type") for c in (job.get("status") or {}).get("conditions") or () if c.get("status") == "True"}
    if spec.get("ttlSecondsAfterFinished") is not None or not done & {"Complete", "Failed"}:
        return
    meta = meta_of(job)
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace"),
            "labels": dict(meta.get("labels") or {}),
        },
        "spec": {**spec, "ttlSecondsAfterFinished": JOB_TTL_S},
    }
    plan.want(JOBS, body)
    plan.notes.append(f"Job {meta['name']}: removed {JOB_TTL_S}s after it finished (ttlSecondsAfterFinished)")


def _deadline_message(run: BenchmarkView, job: Obj, derived: int) -> str:
    """A run stopped at its deadline: which deadline, where it came from, what to change."""
    set_on_job = (job.get("spec") or {}).get("activeDeadlineSeconds")
    seconds = set_on_job if isinstance(set_on_job, int) else derived
    return (
        f"Job {meta_of(job)['name']} was stopped at its deadline of {seconds}s (activeDeadlineSeconds; "
        f"{deadline_basis(run)}): the tool hung or its runs take longer than that; set spec.timeout to a longer "
        "deadline (e.g. 2h), or bound each run with spec.maxDuration or fewer spec.maxRequests, in a new run"
    )


def result_status(result: BenchmarkResult) -> dict[str, Any]:
    """A result as ``status.results[]`` (wire names, unset fields left out)."""
    out: dict[str, Any] = {"scenario": result.scenario}
    for key, value in (
        ("concurrency", result.concurrency),
        ("requestRate", result.request_rate),
        ("completedRequests", result.completed_requests),
        ("failedRequests", result.failed_requests),
        ("requestsPerSecond", result.requests_per_second),
        ("outputTokensPerSecond", result.output_tokens_per_second),
        ("ttftMs", _percentiles(result.ttft_ms)),
        ("interTokenLatencyMs", _percentiles(result.inter_token_latency_ms)),
        ("e2eLatencyMs", _percentiles(result.e2e_latency_ms)),
    ):
        if value is not None:
            out[key] = value
    return out


def _percentiles(p: Percentiles | None) -> dict[str, float] | None:
    if p is None:
        return None
    out = {k: float(v) for k, v in (("p50", p.p50), ("p90", p.p90), ("p99", p.p99)) if v is not None}
    return out or None


def _fail(plan: Plan, status: Mapping[str, Any], reason: str, message: str) -> Plan:
    plan.status["status"] = "Failed"
    if TARGET not in plan.components:
        plan.component(TARGET, Health.ok("Ready", "", upstream=True) if status.get("target") else _unknown_target())
    plan.component(JOB, Health(State.FAILED, reason, redact(message)))
    return plan


def _unknown_target() -> Health:
    return Health(State.PENDING, "TargetNotReady", "the run failed before it looked at its target", upstream=True)


def _carry_over(plan: Plan, status: Mapping[str, Any]) -> None:
    """A finished run's status as it is; its conditions re-derived from themselves."""
    plan.status.update({k: v for k, v in status.items() if k not in ("conditions", "observedGeneration")})
    conds = {c.get("type"): c for c in status.get("conditions") or ()}
    failed = status.get("status") == "Failed"
    for name in (TARGET, JOB):
        cond = conds.get(f"{name}Ready")
        if cond is None:
            health = Health(State.FAILED, "Failed", "") if failed and name == JOB else Health.ok("Ready")
        elif cond.get("status") == "True":
            health = Health.ok(cond.get("reason") or "Ready", cond.get("message") or "")
        else:
            state = State.FAILED if name == JOB else State.PENDING
            health = Health(state, cond.get("reason") or "", cond.get("message") or "", upstream=name == TARGET)
        plan.component(name, health)


def _prune(plan: Plan, run: BenchmarkView, runs: Sequence[BenchmarkView]) -> None:
    """Delete the oldest finished, unowned runs of this target beyond the newest run's history limit."""
    finished = [
        r
        for r in [run, *(r for r in runs if r.name != run.name)]
        if r.state in BENCHMARK_FINISHED and not r.owned and not r.deleting
    ]
    finished.sort(key=lambda r: (r.completion_time, r.created, r.name), reverse=True)  # newest first
    if not finished:
        return
    limit = finished[0].history_limit
    for old in finished[limit:]:
        plan.delete.append(Deletion(BENCHMARKS, old.namespace or None, old.name))
        plan.notes.append(f"history limit {limit}: deleting finished run {old.name}")


def _terminated(pods: Sequence[Obj]) -> Mapping[str, Any] | None:
    """The ``benchmark`` container's terminated state in the newest pod that has one."""
    found = []
    for pod in pods:
        for cs in (pod.get("status") or {}).get("containerStatuses") or ():
            term = (cs.get("state") or {}).get("terminated")
            if cs.get("name") == CONTAINER and term is not None:
                found.append((term.get("finishedAt") or "", meta_of(pod).get("creationTimestamp") or "", term))
    return max(found, key=lambda f: (f[0], f[1]))[2] if found else None


def _tail(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return redact("\n".join(lines[-LOG_LINES:]))


def _report_uri(run: BenchmarkView) -> str | None:
    uri = run.report_uri.rstrip("/")
    return f"{uri}/{run.name}/" if uri else None
