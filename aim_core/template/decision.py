"""What a template's discovery should do now: the breaker of failed attempts and the decision (F31-F36). Pure.

:func:`decide` reads a template and what the controller observed and says whether
discovery is inline, blocked (and why), done, backing off after a failure, and which
Job it wants. The controller calls it before planning, so that only templates that
want a Job take a slot under the discovery lock (F34); :func:`~aim_core.template.plan.plan_template`
turns the same decision into a plan. :class:`Breaker` is ``status.discovery`` as read,
counting failed attempts of the current spec.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.api.spec_errors import spec_problems
from aim_core.model import ModelView, model_health_for_template
from aim_core.reconcile.health import Category, Health
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.template import discovery as disc
from aim_core.template.hardware import GpuCheck, check_gpu
from aim_core.template.observed import Observed
from aim_core.template.scope import Scope
from aim_core.template.view import TemplateView

__all__ = ["Breaker", "Decision", "Obj", "decide", "model_health", "spec_of", "status_of"]


def created_at(obj: Obj, key: str = "creationTimestamp") -> datetime.datetime | None:
    return disc.parse_time(meta_of(obj).get(key))


# ---------------------------------------------------------------- model


def model_health(template: Obj | TemplateView, ob: Observed) -> Health:
    """The ``Model``/``ClusterModel`` component (F31, Q10, F25)."""
    scope = ob.scope
    name = TemplateView.of(template).model_name
    where = f"{ob.namespace}/" if scope is Scope.NAMESPACE else ""
    what = f"{scope.model_kind} {where}{name}"
    if ob.model is None:
        message = f"{what} not found: create it or fix spec.modelName"
        if ob.other_scope_model:
            other = "AIMClusterModel" if scope is Scope.NAMESPACE else "AIMModel"
            message += f"; an {other} of that name exists, but an {scope.kind} uses only {scope.model_kind}s" + (
                " of its own namespace" if scope is Scope.NAMESPACE else ""
            )
        return Health.error(Category.MISSING_UPSTREAM, "ReferenceNotFound", message, upstream=True)
    if ob.model_is_cluster:
        what = f"AIMClusterModel {name}"
    return model_health_for_template(
        ob.model, what, found_reason=f"{scope.model_component}Found", failed_reason=f"{scope.model_component}Failed"
    )


# ---------------------------------------------------------------- discovery state


@attrs.frozen
class Breaker:
    """``status.discovery`` as read, reset when the spec hash changed (F36)."""

    spec_hash: str
    attempts: int = 0
    last_attempt: datetime.datetime | None = None
    last_failure: str = ""

    @classmethod
    def read(cls, raw: Obj, spec_hash: str) -> Breaker:
        """The breaker ``status.discovery`` (``raw``) records, or a fresh one when it is for another spec."""
        if raw.get("specHash") != spec_hash:
            return cls(spec_hash)
        attempts = raw.get("attempts")
        return cls(
            spec_hash,
            attempts if isinstance(attempts, int) and attempts > 0 else 0,
            disc.parse_time(raw.get("lastAttemptTime")),
            raw.get("lastFailureReason") or "",
        )

    @property
    def failed(self) -> bool:
        return self.attempts > 0 and bool(self.last_failure)

    def retry_at(self) -> datetime.datetime | None:
        if not self.failed or self.last_attempt is None:
            return None
        return self.last_attempt + datetime.timedelta(seconds=disc.backoff_seconds(self.attempts))

    def counted(self, job: Obj) -> bool:
        """Whether the failure of ``job`` is already counted (it began before the last recorded failure)."""
        created = created_at(job)
        return self.last_attempt is not None and created is not None and created <= self.last_attempt

    def fail(self, now: datetime.datetime, reason: str, message: str) -> Breaker:
        return Breaker(self.spec_hash, self.attempts + 1, now, f"{reason}: {message}"[:1024])

    def succeeded(self) -> Breaker:
        return Breaker(self.spec_hash, self.attempts, self.last_attempt, "")

    @property
    def failure_reason(self) -> str:
        return self.last_failure.split(":", 1)[0] if self.last_failure else ""

    def to_status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"specHash": self.spec_hash, "attempts": self.attempts}
        if self.last_attempt is not None:
            out["lastAttemptTime"] = disc.format_time(self.last_attempt)
        if self.last_failure:  # left out once cleared: the status diff then removes it
            out["lastFailureReason"] = self.last_failure
        return out


# ---------------------------------------------------------------- decision


@attrs.frozen
class Decision:
    """Everything :func:`plan_template` derives before writing the plan."""

    inline: bool
    gpu: GpuCheck
    blocked: str  # why discovery cannot run now (model missing, GPU absent, ...); "" when it can
    done: bool  # results for the current spec are in status
    breaker: Breaker | None
    job: Obj | None  # the Job of the current spec, newest first
    stale: tuple[Obj, ...]  # Jobs of an older spec
    desired_job: dict[str, Any] | None
    backing_off: bool = False  # a failed attempt's wait is not over
    problems: tuple[str, ...] = ()  # spec problems the schema would have caught

    @property
    def wants_job(self) -> bool:
        """A new discovery Job should be created now (the controller then asks for a slot)."""
        return not (
            self.inline
            or self.blocked
            or self.done
            or self.desired_job is None
            or self.job is not None
            or self.backing_off
        )


def path_problems(spec: Obj) -> tuple[str, ...]:
    """User strings of the spec that become paths: ``modelSources[].modelId`` is the cache mount path under
    ``/workspace/cache`` and ``AIM_MODEL_ID``, so ``.``/``..``/empty segments, a leading ``/`` or control
    characters are refused (issue 18); so are ``..`` segments in a ``sourceUri``."""
    problems: list[str] = []
    for i, source in enumerate(spec.get("modelSources") or ()):
        if not isinstance(source, Mapping):
            continue
        where = f"spec.modelSources[{i}]"
        model_id = source.get("modelId")
        if isinstance(model_id, str) and model_id:
            segments = model_id.split("/")
            if (
                model_id.startswith("/")
                or any(s in ("", ".", "..") for s in segments)
                or any(ord(c) < 0x20 or c in "\x7f\\" for c in model_id)
            ):
                problems.append(
                    f"{where}.modelId {model_id!r} has '.', '..' or empty path segments (it becomes the "
                    "mount path under /workspace/cache and AIM_MODEL_ID); use org/name"
                )
        uri = source.get("sourceUri")
        if isinstance(uri, str) and ".." in uri.split("://", 1)[-1].split("?", 1)[0].split("/"):
            problems.append(f"{where}.sourceUri {uri!r} has '..' path segments; name the repository directly")
    return tuple(problems)


def decide(template: Obj, ob: Observed, view: TemplateView | None = None) -> Decision:
    """What discovery does for ``template`` (``view``: its view, when the caller has built it)."""
    view = view or TemplateView.of(template)
    spec = view.spec
    problems = tuple(spec_problems(dict(template))) or path_problems(spec)
    if problems:  # a spec the schema would have refused: nothing below may trust its shape
        return Decision(False, GpuCheck(None), "the spec is invalid", False, None, None, (), None, problems=problems)
    inline = bool(view.model_sources)
    check = check_gpu(spec, ob.inventory, ob.counts)
    blocked = _blocked(view, ob, check)
    breaker = None
    job = None
    stale: tuple[Obj, ...] = ()
    desired = None
    done = False
    if not inline and ob.model is not None and not disc.image_problem(ModelView.of(ob.model).image):
        namespaced = ob.scope is Scope.NAMESPACE
        desired = disc.build_job(template, ob.model, ob.namespace, namespaced=namespaced)
        name = desired["metadata"]["name"]
        breaker = Breaker.read(view.discovery, disc.spec_hash(template, ob.model))
        mine = sorted(
            ob.jobs, key=lambda j: created_at(j) or datetime.datetime.min.replace(tzinfo=datetime.UTC), reverse=True
        )
        job = next((j for j in mine if j["metadata"]["name"] == name), None)
        stale = tuple(j for j in mine if j["metadata"]["name"] != name)
        recorded = view.discovery.get("specHash")
        results = bool(view.profile or view.discovered_sources)
        # Results written by hand (upstream's tests write a Ready status with model sources, issue 18) are
        # kept as discovery's: no record of ours says they belong to another spec.
        inline_before = any(
            c.get("type") == "Discovered" and c.get("reason") == "InlineModelSources" for c in view.conditions
        )
        by_hand = recorded is None and results and view.state == "Ready" and not inline_before
        done = by_hand or (recorded == breaker.spec_hash and not breaker.last_failure and results)
    retry = breaker.retry_at() if breaker is not None else None
    backing_off = retry is not None and retry > ob.now
    return Decision(inline, check, blocked, done, breaker, job, stale, desired, backing_off, problems)


def _blocked(view: TemplateView, ob: Observed, check: GpuCheck) -> str:
    if ob.config.issue is not None:
        return (
            "the runtime config is missing"
            if ob.config.issue.category is Category.MISSING_UPSTREAM
            else ("the runtime config cannot be used")
        )
    health = model_health(view, ob)
    if not health.ready:
        return f"{ob.scope.model_kind} {view.model_name!r} is not usable"
    problem = disc.image_problem(ModelView.of(ob.model).image)
    if problem:
        return problem
    if not check.available:
        return check.health.message if check.health is not None else "GPUs are not available"
    return ""
