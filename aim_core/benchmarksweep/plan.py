"""The sweep plan: which templates, which one runs now, its service and run, the comparison (issue 23). Pure.

:func:`plan_sweep` takes a sweep and what the controller observed and returns a Plan:

1. **The templates, fixed at the start.** ``spec.templates`` in its order (namespaced first,
   then cluster; a name that is neither, or serves another model, is Skipped), else every
   Ready template of ``spec.model`` that a service did not derive, optimized ones only unless
   ``allowUnoptimized``, namespaced ones by name then cluster ones by name (a cluster template
   shadowed by a namespaced one of the same name is Skipped: a service naming it would get the
   namespaced one). At most 20. The list goes to ``status.templates`` and is read back from
   there afterwards, so templates appearing later do not change a sweep under way. None
   yet: Pending ``NoTemplatesReady`` until one is Ready.
2. **One at a time, or more within limits.** In order, a Waiting template starts while fewer
   than ``parallelism`` are active and, with ``gpuBudget``, the GPUs of the active services
   (replicas x the template's GPUs) plus its own fit the budget; one that can never fit is
   Skipped. Starting means: an AIMService ``<sweep>-<hash>-<n>`` pinned to the template
   (``spec.template.name``) and, once that service is the sweep's own, an AIMBenchmark of the
   same name against it, both owned by the sweep. The run waits for the service itself (its
   TargetNotReady). Children count only through the sweep's uid (controller owner
   reference): an object of a child's name that is not the sweep's (a user's) is never
   adopted, re-templated, read or deleted; the engine reports it as ``NameConflict`` and the
   entry waits (``deployTimeout`` bounds it).
3. **Finishing.** The run Succeeded or Failed, or the service Failed: the template's state
   says so, the service is deleted (its GPUs are free for the next one), the run is kept
   (its results stay, and they reach the template's ``status.benchmarks``). With
   ``deployTimeout``, a service not Ready (its run not started) that long after it was
   created fails its template too, and service and run are deleted.
4. **Status.** ``templates`` (state, service, run, message), ``comparison`` (one row per
   template x scenario x load level, from the runs; kept once written, even if a run is
   deleted later), ``status`` Pending -> Running -> Succeeded (at least one template
   measured) or Failed (none), ``startTime``, ``completionTime``; condition ``RunsReady``.
"""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.benchmarksweep.view import SweepView
from aim_core.reconcile.conditions import cap_message
from aim_core.reconcile.durations import parse_duration
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.labels import ORIGIN_DERIVED, ORIGIN_LABEL
from aim_core.reconcile.naming import sanitize_label_value
from aim_core.reconcile.obj import Obj, meta_of, status_of
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.resources import BENCHMARKS, SERVICES
from aim_core.template import TemplateView

SWEEP_LABEL = "aim.eai.amd.com/benchmarksweep"
COMPONENT = "Runs"
MAX_TEMPLATES = 20
FINAL = ("Succeeded", "Failed", "Skipped")
ACTIVE = ("Deploying", "Benchmarking")
NAMESPACE, CLUSTER = "Namespace", "Cluster"
ENTRY_MESSAGE = 1024  #: characters of one template's message (20 of them fit a condition message)


@attrs.frozen
class Observed:
    """What the sweep controller read: the model's templates and the sweep's own children.

    :ivar namespaced: AIMServiceTemplates of the sweep's namespace that serve ``spec.model``
        (or that ``spec.templates`` names), by name.
    :ivar cluster: AIMClusterServiceTemplates likewise, by name.
    :ivar services: AIMServices owned by the sweep, by name.
    :ivar benchmarks: AIMBenchmarks owned by the sweep, by name.
    :ivar now: the reconcile's time, RFC 3339.
    :ivar taken: children's names another object holds (``"AIMService <name>"`` -> who controls
        it): never adopted nor deleted; the engine reports each as ``NameConflict``.
    """

    namespaced: Mapping[str, Obj]
    cluster: Mapping[str, Obj]
    services: Mapping[str, Obj]
    benchmarks: Mapping[str, Obj]
    now: str
    taken: Mapping[str, str] = attrs.field(factory=dict)


def child_name(sweep: str | SweepView, index: int) -> str:
    """``<sweep>-<hash>-<n>`` (n from 1): the sweep's name cut to 31 characters, then 8 hex characters of
    a hash of its uid (of namespace/name before it has one), so that two sweeps sharing a long prefix,
    or a sweep re-created under the same name, never name the same child; at most 43 characters."""
    view = sweep if isinstance(sweep, SweepView) else SweepView(name=sweep)
    owner = view.uid or f"{view.namespace}/{view.name}"
    digest = hashlib.sha256(owner.encode()).hexdigest()[:8]
    return f"{view.name[:31].rstrip('-.')}-{digest}-{index + 1}"


def _profile(t: TemplateView) -> Obj:
    return (t.profile or {}).get("metadata") or {}


def _facts(template: Obj, scope: str) -> dict[str, Any]:
    t = TemplateView.of(template)
    gpu = t.hardware.get("gpu") or {}
    prof = _profile(t)
    per_pod = gpu.get("requests") or prof.get("gpuCount")
    # GPUs per replica: a replica spanning several nodes holds requests GPUs on each of them
    nodes = t.nodes
    facts = {
        "template": t.name,
        "scope": scope,
        "gpuModel": gpu.get("model") or prof.get("gpu"),
        "gpuCount": per_pod * nodes if per_pod and nodes > 1 else per_pod,
        "precision": prof.get("precision") or t.precision,
        "metric": prof.get("metric") or t.metric,
    }
    return {k: v for k, v in facts.items() if v not in (None, "")}


def _usable(template: Obj, allow_unoptimized: bool) -> bool:
    t = TemplateView.of(template)
    derived = t.labels.get(ORIGIN_LABEL) == ORIGIN_DERIVED
    kind = _profile(t).get("type") or t.spec.get("type") or "unoptimized"
    return not derived and t.state == "Ready" and (allow_unoptimized or kind == "optimized")


def choose_templates(sweep: Obj | SweepView, ob: Observed) -> list[dict[str, Any]]:
    """The sweep's templates as ``status.templates`` entries (step 1 of the module docstring)."""
    view = SweepView.of(sweep)
    model = view.model
    entries: list[dict[str, Any]] = []
    if view.templates:
        for name in view.templates:
            found = ob.namespaced.get(name)
            scope = NAMESPACE if found is not None else CLUSTER
            found = found if found is not None else ob.cluster.get(name)
            if found is None:
                entries.append({"template": name, "state": "Skipped", "message": "no such template"})
            elif (serves := TemplateView.of(found).model_name) != model:
                entries.append(
                    {**_facts(found, scope), "state": "Skipped", "message": f"serves model {serves!r}, not {model!r}"}
                )
            else:
                entries.append({**_facts(found, scope), "state": "Waiting"})
    else:
        allow = view.allow_unoptimized
        for name in sorted(ob.namespaced):
            if _usable(ob.namespaced[name], allow):
                entries.append({**_facts(ob.namespaced[name], NAMESPACE), "state": "Waiting"})
        for name in sorted(ob.cluster):
            if not _usable(ob.cluster[name], allow):
                continue
            entry = {**_facts(ob.cluster[name], CLUSTER), "state": "Waiting"}
            if name in ob.namespaced:
                entry.update(state="Skipped", message="a namespaced template of the same name shadows it")
            entries.append(entry)
    for i, e in enumerate(entries[:MAX_TEMPLATES]):
        e["service"] = e["benchmark"] = child_name(view, i)
    return entries[:MAX_TEMPLATES]


def _condition_text(obj: Obj) -> str:
    for c in status_of(obj).get("conditions") or ():
        if c.get("type") == "Ready" and c.get("status") != "True":
            return ": ".join(x for x in (c.get("reason"), c.get("message")) if x)
    return ""


def _seconds_left(entry: Mapping[str, Any], timeout: str, now: str) -> float | None:
    """Seconds until a Deploying entry's deadline (negative: past it); None without a deadline."""
    if not timeout or not entry.get("startTime"):
        return None
    try:
        started = datetime.datetime.fromisoformat(str(entry["startTime"]).replace("Z", "+00:00"))
        current = datetime.datetime.fromisoformat(now.replace("Z", "+00:00"))
        return parse_duration(timeout) / 1e9 - (current - started).total_seconds()
    except ValueError:
        return None


def _entry_message(text: str) -> str:
    """One entry's message, capped so that twenty of them still fit a condition message."""
    return cap_message(text, ENTRY_MESSAGE)


def _advance(entry: dict[str, Any], ob: Observed, timeout: str = "") -> None:
    """Move an entry that is not final on, from what its service and run show."""
    run = ob.benchmarks.get(entry.get("benchmark", ""))
    svc = ob.services.get(entry.get("service", ""))
    run_state = status_of(run).get("status") if run is not None else None
    if run_state in ("Succeeded", "Failed"):
        entry["state"] = run_state
        if run_state == "Failed":
            why = f"AIMBenchmark {entry['benchmark']} Failed: {_condition_text(run or {})}".rstrip(": ")
            entry["message"] = _entry_message(why)
    elif svc is not None and status_of(svc).get("status") == "Failed":
        entry["state"] = "Failed"
        entry["message"] = _entry_message(f"AIMService {entry['service']} Failed: {_condition_text(svc)}".rstrip(": "))
    elif entry["state"] in ACTIVE or run is not None or svc is not None:
        entry["state"] = "Benchmarking" if run_state == "Running" else "Deploying"
        held = [f"{what} already exists and belongs to {who}" for what, who in _taken(entry, ob)]
        if held:
            entry["message"] = _entry_message(
                f"waiting: {'; '.join(held)} (NameConflict: the sweep does not take it over; rename or delete it)"
            )
        else:
            entry.pop("message", None)
        if not entry.get("startTime"):
            # the write of the start time was lost (the children exist, the status does not say so):
            # the deadline counts from when the first child was created
            created = sorted(str(meta_of(c).get("creationTimestamp") or "") for c in (svc, run) if c is not None)
            if created := [c for c in created if c]:
                entry["startTime"] = created[0]
        left = _seconds_left(entry, timeout, ob.now)
        if entry["state"] == "Deploying" and left is not None and left <= 0:
            why = _condition_text(svc) if svc is not None else "; ".join(held)
            entry["state"] = "Failed"
            entry["message"] = _entry_message(
                f"AIMService {entry['service']} not Ready within deployTimeout {timeout}" + (f" ({why})" if why else "")
            )


def _taken(entry: Mapping[str, Any], ob: Observed) -> list[tuple[str, str]]:
    names = (f"AIMService {entry.get('service')}", f"AIMBenchmark {entry.get('benchmark')}")
    return [(n, ob.taken[n]) for n in names if n in ob.taken]


def _gpus(entry: Mapping[str, Any], replicas: int) -> int:
    return int(entry.get("gpuCount") or 0) * replicas


def _start(entries: list[dict[str, Any]], sweep: SweepView, now: str) -> None:
    """Start Waiting entries in order within ``parallelism`` and ``gpuBudget`` (step 2)."""
    parallelism, budget, replicas = sweep.parallelism, sweep.gpu_budget, sweep.replicas
    active = [e for e in entries if e["state"] in ACTIVE]
    blocked = False  # in order: once one has to wait, the later ones wait too
    for e in entries:
        if e["state"] != "Waiting":
            continue
        need = _gpus(e, replicas)
        if budget is not None and need > budget:
            e.update(state="Skipped", message=f"needs {need} GPUs, over the sweep's gpuBudget of {budget}")
            continue
        used = sum(_gpus(a, replicas) for a in active)
        blocked = blocked or len(active) >= parallelism or (budget is not None and used + need > budget)
        if not blocked:
            e.update(state="Deploying", startTime=now)
            active.append(e)


def _service(sweep: SweepView, entry: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {
            "name": entry["service"],
            "namespace": sweep.namespace or None,
            "labels": {SWEEP_LABEL: sanitize_label_value(sweep.name)},
        },
        "spec": {"model": {"name": sweep.model}, "template": {"name": entry["template"]}, "replicas": sweep.replicas},
    }
    if sweep.runtime_config_name:
        body["spec"]["runtimeConfigName"] = sweep.runtime_config_name
    return body


def _benchmark(sweep: SweepView, entry: Mapping[str, Any]) -> dict[str, Any]:
    run_spec = dict(sweep.benchmark)
    run_spec.pop("historyLimit", None)  # the sweep keeps its runs; history limits prune unowned runs only
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMBenchmark",
        "metadata": {
            "name": entry["benchmark"],
            "namespace": sweep.namespace or None,
            "labels": {SWEEP_LABEL: sanitize_label_value(sweep.name)},
        },
        "spec": {**run_spec, "target": {"serviceName": entry["service"]}},
    }


_ROW_FACTS = ("template", "scope", "gpuModel", "gpuCount", "precision", "metric")


def _rows(entries: list[dict[str, Any]], ob: Observed, old: Sequence[Obj]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for e in entries:
        run = ob.benchmarks.get(e.get("benchmark", ""))
        if e["state"] == "Succeeded" and run is not None:
            facts = {k: e[k] for k in _ROW_FACTS if k in e}
            for r in status_of(run).get("results") or ():
                rows.append({**r, **facts, "benchmark": e["benchmark"]})
        else:
            rows += [dict(r) for r in old if r.get("template") == e["template"] and r.get("scope") == e.get("scope")]
    return rows


def plan_sweep(sweep: Obj | SweepView, ob: Observed) -> Plan:
    plan = Plan()
    view = SweepView.of(sweep)
    ns = view.namespace or None
    entries = [dict(e) for e in view.entries] or choose_templates(view, ob)
    if not entries:
        what = f"templates {', '.join(view.templates)}" if view.templates else "templates"
        plan.component(
            COMPONENT,
            Health(
                State.PENDING,
                "NoTemplatesReady",
                f"no Ready {what} of model {view.model!r} to benchmark yet; waiting for one",
                upstream=True,
            ),
        )
        plan.status["status"] = "Pending"
        return plan
    timeout = view.deploy_timeout
    if timeout:
        try:
            parse_duration(timeout)
        except ValueError as exc:  # the schema bounds each group; the exact bound is Go's
            plan.component(COMPONENT, Health(State.FAILED, "InvalidSpec", f"spec.deployTimeout: {exc}"))
            plan.status["status"] = "Failed"
            return plan
    for e in entries:
        if e["state"] not in FINAL:
            _advance(e, ob, timeout)
    _start(entries, view, ob.now)
    for e in entries:
        if e["state"] in ACTIVE:
            plan.want(SERVICES, _service(view, e))
            if e["service"] in ob.services:  # the run only against the sweep's own service
                plan.want(BENCHMARKS, _benchmark(view, e))
            left = _seconds_left(e, timeout, ob.now) if e["state"] == "Deploying" else None
            if left is not None:
                plan.requeue(max(left, 1.0))  # look again at the deadline
        elif e["state"] in FINAL and e.get("service") in ob.services:
            plan.delete.append(Deletion(SERVICES, ns, e["service"]))
        if e["state"] == "Failed" and e.get("benchmark") in ob.benchmarks and not _finished(ob, e):
            plan.delete.append(Deletion(BENCHMARKS, ns, e["benchmark"]))
    plan.status["templates"] = entries
    plan.status["comparison"] = _rows(entries, ob, view.comparison)
    started = any(e["state"] not in ("Waiting", "Skipped") for e in entries)
    if started:
        plan.status["startTime"] = view.start_time or ob.now
    _summarize(plan, entries, view, ob.now)
    return plan


def _finished(ob: Observed, e: Mapping[str, Any]) -> bool:
    return status_of(ob.benchmarks[e["benchmark"]]).get("status") in ("Succeeded", "Failed")


def _summarize(plan: Plan, entries: list[dict[str, Any]], sweep: SweepView, now: str) -> None:
    count = {s: sum(e["state"] == s for e in entries) for s in ("Succeeded", "Failed", "Skipped")}
    done = sum(count.values())
    active = [e["template"] for e in entries if e["state"] in ACTIVE]
    tally = f"{count['Succeeded']} measured, {count['Failed']} failed, {count['Skipped']} skipped"
    if done < len(entries):
        plan.status["status"] = "Running" if active else "Pending"
        plan.component(
            COMPONENT,
            Health.progressing(
                "SweepRunning", f"{done} of {len(entries)} templates done ({tally}); now: {', '.join(active)}"
            ),
        )
        return
    plan.status["completionTime"] = sweep.completion_time or now
    if count["Succeeded"]:
        plan.status["status"] = "Succeeded"
        plan.component(COMPONENT, Health.ok("SweepComplete", f"{len(entries)} templates: {tally}"))
    else:
        plan.status["status"] = "Failed"
        failures = "; ".join(f"{e['template']}: {e.get('message', e['state'])}" for e in entries)
        plan.component(COMPONENT, Health(State.FAILED, "SweepFailed", f"no template was measured: {failures}"))
