"""What an AIMBenchmark reconcile decides. Pure.

Lifecycle (``status.status``):

* ``Pending`` -- the target service is missing or not Ready (``TargetReady`` False,
  reason ``TargetNotReady``); nothing is created;
* ``Running`` -- the target was Ready: its snapshot is in ``status.target`` (taken once)
  and the Job exists; a target that flaps afterwards does not stop the run;
* ``Succeeded`` -- the Job completed and the plugin read the summary from the pod's
  termination message: ``status.results``;
* ``Failed`` -- ``JobFailed`` (the tool's last log lines, redacted), ``ReportUnparsable``,
  ``ToolNotFound`` or ``UnsupportedByTool``.

A finished run (Succeeded, Failed) is immutable: its status is never planned again, only
carried over. When it is finished, older finished runs of the same target beyond the newest
run's ``historyLimit`` are deleted (runs with an owner, e.g. a sweep's, are never pruned).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.benchmark import BENCHMARK_FINISHED
from aim_core.benchmark.job import CONTAINER, build_job, deadline_basis, deadline_seconds, request_for
from aim_core.benchmark.view import BenchmarkView
from aim_core.plugin.benchtools import BenchmarkReportError, BenchmarkResult, BenchmarkTool, Percentiles
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


@attrs.frozen
class Observed:
    target: Target
    tool: BenchmarkTool | None
    tool_error: str = ""  # why no tool was found
    job: Obj | None = None
    pods: Sequence[Obj] = ()
    same_target: Sequence[Obj] = ()  # other AIMBenchmarks of the same target and namespace


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
    job = observed.job
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
    endpoint, model = snapshot.get("endpoint") or target.endpoint, snapshot.get("model") or target.model
    if not endpoint or not model:
        return _fail(plan, status, "InvalidSpec", "no endpoint or model to benchmark; set spec.target.model")
    try:
        request = request_for(run, endpoint, model)
    except ValueError as exc:
        return _fail(plan, status, "InvalidSpec", f"spec.maxDuration: {exc}")
    if why := tool.unsupported(request):
        return _fail(plan, status, "UnsupportedByTool", why)
    try:
        deadline = deadline_seconds(run)
    except ValueError as exc:
        return _fail(plan, status, "InvalidSpec", f"spec.timeout: {exc}")
    if job is None:
        image = run.image or tool.image
        command = tool.command(request)
        plan.want(JOBS, build_job(run, image=image, command=command, service=target.service, deadline_s=deadline))
        plan.component(JOB, Health.progressing("JobCreated", "creating the benchmark Job"))
        plan.status["status"] = "Running"
        return plan
    job_status = job.get("status") or {}
    plan.status["jobName"] = meta_of(job)["name"]
    plan.status["startTime"] = run.start_time or job_status.get("startTime") or meta_of(job).get("creationTimestamp")
    if report := _report_uri(run):
        plan.status["report"] = {"uri": report}
    true = {c.get("type"): c for c in job_status.get("conditions") or () if c.get("status") == "True"}
    terminated = _terminated(observed.pods)
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
        return _fail(plan, status, "ReportUnparsable", "the benchmark pod and its termination message are gone")
    try:
        results = list(tool.parse(terminated.get("message") or "", request))
    except BenchmarkReportError as exc:
        return _fail(plan, status, "ReportUnparsable", redact(str(exc)))
    plan.status["results"] = [result_status(r) for r in results]
    plan.status["status"] = "Succeeded"
    plan.component(JOB, Health.ok("Succeeded", f"{len(results)} results from {tool.name}"))
    return plan


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
