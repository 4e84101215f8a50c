"""The template plan: model, runtime config, GPUs, discovery, caching, status (F31-F38). Pure.

:func:`plan_template` takes a template and what the controller observed and
returns a :class:`~aim_core.reconcile.plan.Plan`. What discovery should do is
decided first, in :mod:`aim_core.template.decision` (:func:`decide`, re-exported
here), the part the controller also needs before planning: whether a discovery Job
is wanted, so that only such templates take a slot under the discovery lock (F34).

Components, in the order the ``Ready`` condition looks at them:
``RuntimeConfig``, ``Model`` (``ClusterModel`` for cluster templates),
``GPU`` (only when the template requires one), ``DiscoveryJob`` and
``DiscoveryPods`` (only while discovery is under way or failing). Plus the
``Discovered`` condition, which is not a component.

Decisions where upstream leaves a choice:

* **Q1.** ``Discovered`` stays True ``DiscoveryComplete`` after a successful
  discovery (upstream overwrites it to False ``AwaitingDiscovery`` in the same
  pass, which reads as if discovery never finished); inline sources give True
  ``InlineModelSources`` as upstream.
* **Q10.** A namespaced template binds only to an AIMModel of its namespace, a
  cluster template only to an AIMClusterModel (upstream's asymmetry, kept); the
  message says so when only the other kind exists.
* **The model need not be Ready.** It only has to exist with an image and not
  be failing for a reason of its own: a model waits for its templates (F24),
  so waiting for the model here would deadlock them (the F25 guard).
* **Unusable output is a failed attempt** (reasons in
  :mod:`aim_core.template.discovery`), counted by the breaker like a failed
  Job, instead of upstream's silent Ready with no sources.
* **Jobs of an older spec** (the Job name hashes the spec) are deleted: their
  result would describe another profile.
"""

from __future__ import annotations

from typing import Any

from aim_core.model import ModelView
from aim_core.reconcile.conditions import Condition
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.quantities import canonical_sources
from aim_core.reconcile.resources import CONFIG_MAPS, JOBS, TEMPLATE_CACHES
from aim_core.reconcile.workloads import inspect_job, inspect_pods
from aim_core.template import discovery as disc
from aim_core.template.benchmarks import measure, trusted_namespaces
from aim_core.template.decision import Breaker, Decision, decide, model_health
from aim_core.template.hardware import GpuCheck, hardware_summary, resolved_hardware
from aim_core.template.observed import Observed, Slot
from aim_core.template.scope import Scope
from aim_core.template.view import TemplateView

__all__ = ["Decision", "decide", "plan_template"]

CONFIG = "RuntimeConfig"
JOB = "DiscoveryJob"
PODS = "DiscoveryPods"
GPU = "GPU"
DISCOVERED = "Discovered"
LIMIT_REQUEUE_SECONDS = 5.0
LOCK_REQUEUE_SECONDS = 2.0


# ---------------------------------------------------------------- plan


def plan_template(template: Obj, ob: Observed) -> Plan:
    plan = Plan()
    view = TemplateView.of(template)
    spec = view.spec
    trusted = trusted_namespaces(ob.config.spec, ob.namespace) if ob.scope is Scope.CLUSTER else None
    measured = measure(ob.benchmarks, trusted)
    if measured.entries:
        plan.status["benchmarks"] = measured.entries  # removed again when no run measures it (an owned status key)
    if measured.note:
        plan.status["benchmarksNote"] = measured.note
    decision = decide(template, ob, view)
    plan.labels = ob.config.view.labels
    if ob.read_error is not None:
        plan.issue(ob.read_error.category, ob.read_error.reason, ob.read_error.message)

    if decision.problems:
        plan.issue(Category.INVALID_SPEC, "InvalidSpec", "; ".join(decision.problems))
        plan.conditions.append(Condition.false(DISCOVERED, "AwaitingDiscovery", "discovery waits: the spec is invalid"))
        return plan
    plan.component(CONFIG, ob.config.health(missing_reason="ConfigNotFound"), blocking=True)
    if ob.config.reference is not None:
        plan.status["resolvedRuntimeConfig"] = ob.config.reference
    plan.component(ob.scope.model_component, model_health(view, ob), blocking=True)
    if ob.model is not None:
        model = ModelView.of(ob.model)
        cluster = ob.scope is Scope.CLUSTER or ob.model_is_cluster
        ref = {
            "name": model.name,
            "kind": "AIMClusterModel" if cluster else "AIMModel",
            "scope": "Cluster" if cluster else "Namespace",
        }
        if not cluster:
            ref["namespace"] = model.namespace
        if model.uid:
            ref["uid"] = model.uid
        plan.status["resolvedModel"] = ref
        image = disc.image_problem(model.image)
        if image:
            plan.issue(Category.INVALID_SPEC, "InvalidImageReference", image)

    if decision.gpu.health is not None:
        plan.component(GPU, decision.gpu.health, blocking=True)

    if decision.inline:
        profile = _profile_from_spec(spec)
        _results(plan, spec, profile, list(view.model_sources), decision.gpu)
        plan.status["discovery"] = None
        plan.status["discoveryJob"] = None
        plan.conditions.append(
            Condition.true(DISCOVERED, "InlineModelSources", "Model sources provided in-line in spec")
        )
    else:
        _plan_discovery(plan, template, view, ob, decision)

    if ob.scope is Scope.NAMESPACE:
        _plan_cache(plan, view, ob, decision)
    return plan


def _results(plan: Plan, spec: Obj, profile: Obj | None, sources: list[Any], check: GpuCheck) -> None:
    """Profile, sources and the hardware fields, for inline and discovered results alike."""
    if profile is not None:
        plan.status["profile"] = profile
    plan.status["modelSources"] = canonical_sources(sources)
    hardware = resolved_hardware(spec, profile, check)
    plan.status["resolvedHardware"] = hardware
    plan.status["hardwareSummary"] = hardware_summary(hardware)
    if check.affinity is not None:
        plan.status["resolvedNodeAffinity"] = check.affinity


def _profile_from_spec(spec: Obj) -> dict[str, Any]:
    gpu = (spec.get("hardware") or {}).get("gpu") or {}
    meta: dict[str, Any] = {}
    if gpu.get("model"):
        meta["gpu"] = gpu["model"]
    if gpu.get("requests") is not None:
        meta["gpuCount"] = gpu["requests"]
    for key in ("metric", "precision", "type"):
        if spec.get(key):
            meta[key] = spec[key]
    profile: dict[str, Any] = {"metadata": meta}
    custom = spec.get("customProfile") or {}
    if custom.get("engineArgs"):
        profile["engine_args"] = custom["engineArgs"]
    if custom.get("envVars"):
        profile["env_vars"] = custom["envVars"]
    return profile


def _hardware_only(plan: Plan, view: TemplateView, check: GpuCheck) -> None:
    """Before discovery has results: hardware from the spec; earlier results stay as they are."""
    hardware = resolved_hardware(view.spec, view.profile, check)
    plan.status["resolvedHardware"] = hardware
    plan.status["hardwareSummary"] = hardware_summary(hardware)
    if check.affinity is not None:
        plan.status["resolvedNodeAffinity"] = check.affinity


def _discovered(plan: Plan, status: str, reason: str, message: str) -> None:
    plan.conditions.append(Condition(DISCOVERED, status, reason, message))


def _plan_discovery(plan: Plan, template: Obj, view: TemplateView, ob: Observed, d: Decision) -> None:
    if d.breaker is None or d.desired_job is None:
        _hardware_only(plan, view, d.gpu)
        _discovered(plan, "False", "AwaitingDiscovery", f"discovery waits: {d.blocked or 'the model is not usable'}")
        return
    for stale in d.stale:
        plan.delete.append(Deletion(JOBS, ob.namespace, stale["metadata"]["name"]))
    if d.done:
        _results(plan, view.spec, view.profile, list(view.discovered_sources), d.gpu)
        plan.status["discovery"] = d.breaker.to_status()
        count = len(view.discovered_sources)
        _discovered(
            plan,
            "True",
            "DiscoveryComplete",
            f"discovery found a profile and {count} model source{'' if count == 1 else 's'}",
        )
        return
    _hardware_only(plan, view, d.gpu)
    if d.blocked and d.job is None:
        plan.status["discovery"] = d.breaker.to_status() if d.breaker.failed else None
        _discovered(plan, "False", "AwaitingDiscovery", f"discovery waits: {d.blocked}")
        return
    breaker = d.breaker
    job = d.job
    namespace = ob.namespace
    if job is not None:
        plan.status["discoveryJob"] = {"name": job["metadata"]["name"], "namespace": namespace}
        health = inspect_job(job)
        if disc.job_succeeded(job):
            collected = _collect(plan, view, ob, d, job, breaker)
            if collected is None:
                return  # results written
            breaker = collected
        elif disc.job_finished(job):
            if not breaker.counted(job):
                breaker = breaker.fail(ob.now, health.reason, health.message)
            plan.component(JOB, health)
            plan.component(PODS, inspect_pods(list(ob.pods), (), ob.logs))
        else:
            plan.component(JOB, health)
            plan.component(PODS, inspect_pods(list(ob.pods), (), ob.logs))
            plan.status["discovery"] = breaker.to_status()
            _discovered(
                plan, "False", "AwaitingDiscovery", f"discovery Job {namespace}/{job['metadata']['name']} is running"
            )
            return
    plan.status["discovery"] = breaker.to_status()
    retry = breaker.retry_at()
    wait = (retry - ob.now).total_seconds() if retry is not None else 0.0
    if breaker.failed and wait > 0:
        if job is None:
            plan.component(
                JOB,
                Health(
                    State.FAILED,
                    breaker.failure_reason or "JobFailed",
                    f"attempt {breaker.attempts} failed ({breaker.last_failure}); next attempt in "
                    f"{disc.describe_wait(wait)}",
                ),
            )
        plan.requeue(wait)
        _discovered(
            plan,
            "False",
            "AwaitingDiscovery",
            f"Waiting {disc.describe_wait(wait)} before retry (attempt {breaker.attempts} failed)",
        )
        return
    if job is not None:
        # The wait is over but the failed Job has not expired yet: remove it so the next one can start.
        plan.delete.append(Deletion(JOBS, namespace, job["metadata"]["name"]))
        plan.requeue(1.0)
        _discovered(plan, "False", "AwaitingDiscovery", f"retrying discovery (attempt {breaker.attempts} failed)")
        return
    _start_job(plan, template, ob, d)


def _collect(plan: Plan, view: TemplateView, ob: Observed, d: Decision, job: Obj, breaker: Breaker) -> Breaker | None:
    """A succeeded Job: read its output into status, or count an unusable output as a failure."""
    name = job["metadata"]["name"]
    if ob.output is None:
        plan.component(JOB, Health.ok("Ready", f"Job {name} completed"))
        plan.component(PODS, Health.progressing("NoPods", f"waiting to read the output of Job {name}'s pod"))
        plan.status["discovery"] = breaker.to_status()
        _discovered(plan, "False", "AwaitingDiscovery", f"discovery Job {name} completed; reading its output")
        return None
    parsed = disc.parse_output(ob.output)
    if isinstance(parsed, disc.OutputProblem):
        if not breaker.counted(job):
            breaker = breaker.fail(ob.now, parsed.reason, parsed.message)
        plan.component(JOB, Health(State.FAILED, parsed.reason, f"Job {name}: {parsed.message}"))
        return breaker
    _results(plan, view.spec, parsed.profile, parsed.sources, d.gpu)
    plan.status["discovery"] = breaker.succeeded().to_status()
    count = len(parsed.sources)
    _discovered(
        plan,
        "True",
        "DiscoveryComplete",
        f"discovery found a profile and {count} model source{'' if count == 1 else 's'}",
    )
    return None


def _start_job(plan: Plan, template: Obj, ob: Observed, d: Decision) -> None:
    desired = d.desired_job
    assert desired is not None
    name = desired["metadata"]["name"]
    if ob.slot is Slot.GRANTED:
        config_map = disc.profile_config_map(template, ob.namespace)
        if config_map is not None:
            plan.want(CONFIG_MAPS, config_map)
        plan.want(JOBS, desired)
        plan.status["discoveryJob"] = {"name": name, "namespace": ob.namespace}
        plan.component(JOB, inspect_job(desired))
        plan.component(PODS, inspect_pods([], (), {}))
        # Say what the next reconcile will read back, so that it has nothing to write.
        _discovered(plan, "False", "AwaitingDiscovery", f"discovery Job {ob.namespace}/{name} is running")
        return
    if ob.slot is Slot.LOCK_BUSY:
        message = f"waiting for the discovery lock: {ob.slot_detail or 'another operator replica holds it'}"
        plan.requeue(LOCK_REQUEUE_SECONDS)
    elif ob.slot is Slot.NOT_ASKED:
        message = "waiting for a discovery slot"
        plan.requeue(LOCK_REQUEUE_SECONDS)
    else:
        message = ob.slot_detail or (
            f"{disc.MAX_ACTIVE_JOBS} discovery Jobs are running cluster-wide; this one starts when one of them finishes"
        )
        plan.requeue(LIMIT_REQUEUE_SECONDS)
    plan.component(JOB, Health(State.PENDING, "JobNotCreated", message))
    _discovered(plan, "False", "AwaitingDiscovery", message)


# ---------------------------------------------------------------- caching


def _plan_cache(plan: Plan, view: TemplateView, ob: Observed, d: Decision) -> None:
    """F37: a Shared AIMTemplateCache named like the template once its sources are known."""
    if ob.cache is not None:
        meta = ob.cache["metadata"]
        plan.status["resolvedCache"] = {
            "kind": "AIMTemplateCache",
            "name": meta["name"],
            "namespace": meta.get("namespace", ""),
            "scope": "Namespace",
            **({"uid": meta["uid"]} if meta.get("uid") else {}),
        }
    discovered = any(isinstance(c, Condition) and c.type == DISCOVERED and c.is_true for c in plan.conditions)
    if not view.caching_enabled or not d.gpu.available or not discovered or not plan.status.get("modelSources"):
        return
    uid = view.uid or None
    if ob.cache is not None and not any(r.get("uid") == uid for r in ob.cache["metadata"].get("ownerReferences") or ()):
        return  # a cache of that name that the template did not make: leave it alone
    cache_spec: dict[str, Any] = {
        "templateName": view.name,
        "templateScope": "Namespace",
        "mode": "Shared",
    }
    if view.caching_env:
        cache_spec["env"] = view.caching_env
    if view.runtime_config_name:
        cache_spec["runtimeConfigName"] = view.runtime_config_name
    plan.want(
        TEMPLATE_CACHES,
        {
            "metadata": {"name": view.name, "namespace": view.namespace or None},
            "spec": cache_spec,
        },
    )
