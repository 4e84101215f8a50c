"""Workload inspection: what pods, Jobs and PVCs say about a component (F12).

Pure functions over objects as read from the API server (JSON-like dicts),
the Events that concern them and, for pods whose container failed, the tail
of their logs. They are shared by inference pods, discovery and download Jobs
and artifact PVCs, and return a :class:`~aim_core.reconcile.health.Health`.

Pods are looked at in this order, across all pods, and the first finding wins:

1. image pulls that fail (auth -> ``ImagePullAuthFailure``, not found ->
   ``ImageNotFound``, anything else -> ``ImagePullBackOff``);
2. failed containers or pods (``PodOOMKilled``; a non-zero exit whose log
   tail matches a known pattern -> ``SourceNotFound`` / ``AuthError`` /
   ``StorageFull``; otherwise ``PodDeadlineExceeded``, ``PodEvicted`` or
   ``PodFailed``), each message ending in ``Log excerpt: ...`` when logs
   were given;
3. at least one pod Ready (or finished) -> ``PodsReady``;
4. a running pod that is not ready -> Starting ``PodsStarting``;
5. pending pods: the newest scheduling, mount, sandbox or pull Event decides
   (Pending with the Event's reason, or Progressing ``Pulling``); with none,
   Pending ``PodsPending``.

One Ready pod is enough for ``PodsReady``: a Deployment that is scaling out
keeps serving while its new pods start, and the service should not flip to
Starting or Pending meanwhile. Pods being deleted are ignored.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence

from aim_core.reconcile.failures import LOG_TAIL_LINES, classify_log, classify_pull_error, clip_line
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.obj import Obj

__all__ = [
    "LOG_TAIL_LINES",
    "classify_log",
    "classify_pull_error",
    "event_time",
    "inspect_job",
    "inspect_pods",
    "inspect_pvc",
]

_FALLBACK_EXCERPT_LINES = 3  # lines quoted when no pattern matched

# ---------------------------------------------------------------------------
# Pods
# ---------------------------------------------------------------------------

_PULL_WAITING = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
_PENDING_EVENTS = frozenset({"FailedScheduling", "FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox"})
_PULL_REASONS = {
    Category.AUTH: "ImagePullAuthFailure",
    Category.MISSING_UPSTREAM: "ImageNotFound",
    Category.INFRASTRUCTURE: "ImagePullBackOff",
}


def inspect_pods(pods: Sequence[Obj], events: Sequence[Obj] = (), logs: Mapping[str, str] | None = None) -> Health:
    """Health of a component from its pods, their Events and failed containers' logs.

    :param pods: the component's pods as read.
    :param events: Events in the pods' namespace; those about other objects are ignored.
    :param logs: log text by pod name, read for pods with a failed container.
    """
    current = [p for p in pods if not _meta(p).get("deletionTimestamp")]
    if not current:
        return Health.progressing("NoPods", "No pods exist yet")
    logs = logs or {}
    for pod in current:
        if (found := _pull_failure(pod, events)) is not None:
            return found
    for pod in current:
        if (found := _failure(pod, logs.get(_name(pod)))) is not None:
            return found

    ready = [p for p in current if _pod_ready(p) or _status(p).get("phase") == "Succeeded"]
    if ready:
        return Health.ok("PodsReady", f"{len(ready)} of {len(current)} pods ready")

    running = [p for p in current if _status(p).get("phase") == "Running"]
    if running:
        return Health(State.STARTING, "PodsStarting", f"Pod {_name(running[0])} is running but not ready yet")

    return _pending(current, events)


def _pull_failure(pod: Obj, events: Sequence[Obj]) -> Health | None:
    for cs in _container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") not in _PULL_WAITING:
            continue
        # "Back-off pulling image" says nothing about the cause; the kubelet's
        # "Failed" Event for the pod carries the registry's answer.
        details = [waiting.get("message", "")]
        failed = _latest(e for e in _events_for(events, "Pod", pod) if e.get("reason") in ("Failed", "ErrImagePull"))
        if failed is not None:
            details.append(failed.get("message", ""))
        detail = "; ".join(d for d in details if d) or waiting["reason"]
        category = classify_pull_error(detail)
        image = cs.get("image", "")
        return Health.error(
            category,
            _PULL_REASONS[category],
            clip_line(f"Pod {_name(pod)}: container {cs.get('name')} cannot pull image {image}: {detail}"),
        )
    return None


def _failure(pod: Obj, log: str | None) -> Health | None:
    status = _status(pod)
    terminated = _failed_termination(pod)
    if terminated is None and status.get("phase") != "Failed":
        return None
    name = _name(pod)
    excerpt = ""
    if terminated is not None:
        container, term = terminated
        if term.get("reason") == "OOMKilled":
            return Health.error(
                Category.RESOURCE_EXHAUSTION,
                "PodOOMKilled",
                f"Pod {name}: container {container} was killed for running out of memory (OOMKilled); "
                "raise its memory limit",
            )
        what = f"Pod {name}: container {container} exited with code {term.get('exitCode')}"
        if term.get("reason"):
            what += f" ({term['reason']})"
        if log:
            hit = classify_log(log)
            if hit is not None:
                category, reason, line = hit
                return Health.error(category, reason, f"{what}. Log excerpt: {line}")
            tail = [line.strip() for line in log.splitlines() if line.strip()][-_FALLBACK_EXCERPT_LINES:]
            if tail:
                excerpt = ". Log excerpt: " + clip_line(" | ".join(tail))
    else:
        what = f"Pod {name} failed"
    pod_reason = status.get("reason", "")
    pod_message = status.get("message", "")
    suffix = f": {pod_message}" if pod_message else ""
    if pod_reason == "DeadlineExceeded":
        return Health.error(Category.INVALID_SPEC, "PodDeadlineExceeded", f"{what}; deadline exceeded{suffix}{excerpt}")
    if pod_reason == "Evicted":
        return Health.error(Category.INFRASTRUCTURE, "PodEvicted", f"{what}; evicted{suffix}{excerpt}")
    return Health.error(Category.UNKNOWN, "PodFailed", f"{what}{suffix}{excerpt}", state=State.FAILED)


def _failed_termination(pod: Obj) -> tuple[str, Obj] | None:
    """The first container that ended badly: terminated non-zero now, or crash-looping after doing so."""
    for cs in _container_statuses(pod):
        state = cs.get("state") or {}
        term = state.get("terminated")
        if term and (term.get("exitCode") != 0 or term.get("reason") == "OOMKilled"):
            return cs.get("name", ""), term
        last = (cs.get("lastState") or {}).get("terminated")
        crashing = ((state.get("waiting") or {}).get("reason")) == "CrashLoopBackOff"
        if crashing and last and (last.get("exitCode") != 0 or last.get("reason") == "OOMKilled"):
            return cs.get("name", ""), last
    return None


def _pending(pods: Sequence[Obj], events: Sequence[Obj]) -> Health:
    candidates: list[Obj] = []
    for pod in pods:
        scheduled = _condition(pod, "PodScheduled") == "True"
        for event in _events_for(events, "Pod", pod):
            reason = event.get("reason")
            if reason == "Pulling" or (reason in _PENDING_EVENTS and not (scheduled and reason == "FailedScheduling")):
                candidates.append(event)
    event = _latest(candidates)
    if event is None:
        return Health(State.PENDING, "PodsPending", f"Pod {_name(pods[0])} is pending")
    message = clip_line(event.get("message", ""))
    if event.get("reason") == "Pulling":
        return Health.progressing("Pulling", message)
    return Health(State.PENDING, event["reason"], message)


def pod_failed(pod: Obj) -> bool:
    """Whether a pod failed, or a container of it exited non-zero (OOMKilled is reported on its own)."""
    status = _status(pod)
    if status.get("phase") == "Failed":
        return True
    for cs in status.get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated") or (cs.get("lastState") or {}).get("terminated")
        if terminated and terminated.get("exitCode", 0) != 0 and terminated.get("reason") != "OOMKilled":
            return True
    return False


def _container_statuses(pod: Obj) -> Iterable[Obj]:
    status = _status(pod)
    yield from status.get("initContainerStatuses") or ()
    yield from status.get("containerStatuses") or ()


def _pod_ready(pod: Obj) -> bool:
    return _condition(pod, "Ready") == "True"


# ---------------------------------------------------------------------------
# Jobs and PVCs
# ---------------------------------------------------------------------------


def inspect_job(job: Obj) -> Health:
    """Health of a batch/v1 Job from its conditions.

    Complete -> Ready; Failed -> ``JobBackoffLimitExceeded`` or
    ``JobDeadlineExceeded`` (invalid spec), ``JobEvicted`` (infrastructure)
    or ``JobFailed``; otherwise Progressing ``JobRunning``. A Job that does
    not exist is the caller's to report.
    """
    true = {c.get("type"): c for c in _status(job).get("conditions") or () if c.get("status") == "True"}
    name = _name(job)
    if "Complete" in true or "SuccessCriteriaMet" in true:
        return Health.ok("Ready", f"Job {name} completed")
    failed = true.get("Failed") or true.get("FailureTarget")
    if failed is not None:
        reason = failed.get("reason", "")
        message = failed.get("message", "") or reason or "failed"
        text = f"Job {name} failed: {message}"
        if reason == "BackoffLimitExceeded":
            return Health.error(Category.INVALID_SPEC, "JobBackoffLimitExceeded", text)
        if reason == "DeadlineExceeded":
            return Health.error(Category.INVALID_SPEC, "JobDeadlineExceeded", text)
        if "evict" in f"{reason} {message}".lower():
            return Health.error(Category.INFRASTRUCTURE, "JobEvicted", text)
        return Health.error(Category.UNKNOWN, "JobFailed", text, state=State.FAILED)
    status = _status(job)
    return Health.progressing(
        "JobRunning", f"Job {name} is running ({status.get('active', 0)} active, {status.get('failed', 0)} failed)"
    )


def inspect_pvc(pvc: Obj, events: Sequence[Obj] = ()) -> Health:
    """Health of a PersistentVolumeClaim: Bound -> Ready; Lost -> ``PvcLost``;
    a provisioning failure Event -> ``PvcProvisioningFailed``; else ``PvcPending``.
    """
    name = _name(pvc)
    phase = _status(pvc).get("phase", "Pending")
    if phase == "Bound":
        return Health.ok("Ready", f"PVC {name} is bound")
    if phase == "Lost":
        return Health.error(Category.INFRASTRUCTURE, "PvcLost", f"PVC {name} lost its volume")
    latest = _latest(
        e
        for e in _events_for(events, "PersistentVolumeClaim", pvc)
        if e.get("reason") in ("ProvisioningFailed", "ProvisioningSucceeded", "Provisioning", "WaitForFirstConsumer")
    )
    if latest is not None and latest.get("reason") == "ProvisioningFailed":
        return Health.error(
            Category.INFRASTRUCTURE,
            "PvcProvisioningFailed",
            clip_line(f"PVC {name}: {latest.get('message', '')}"),
            state=State.FAILED,  # usually a storage class that does not exist: it does not heal by itself
        )
    detail = f": {latest['message']}" if latest is not None and latest.get("message") else ""
    return Health.progressing("PvcPending", clip_line(f"PVC {name} is {phase.lower()}{detail}"))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _name(obj: Obj) -> str:
    return _meta(obj).get("name", "")


def _condition(obj: Obj, type_: str) -> str | None:
    for cond in _status(obj).get("conditions") or ():
        if cond.get("type") == type_:
            return cond.get("status")
    return None


def _events_for(events: Iterable[Obj], kind: str, obj: Obj) -> Iterable[Obj]:
    """Events whose involvedObject is ``obj`` (by uid when both sides have one, else by name)."""
    meta = _meta(obj)
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if involved.get("kind", kind) != kind:
            continue
        if meta.get("namespace") and involved.get("namespace") and meta["namespace"] != involved["namespace"]:
            continue
        if meta.get("uid") and involved.get("uid"):
            if meta["uid"] == involved["uid"]:
                yield event
        elif involved.get("name") == meta.get("name"):
            yield event


_EPOCH = datetime.datetime.min.replace(tzinfo=datetime.UTC)


def event_time(event: Obj) -> datetime.datetime:
    """When an Event last happened; Events without any time sort first."""
    series = event.get("series") or {}
    for value in (
        series.get("lastObservedTime"),
        event.get("lastTimestamp"),
        event.get("eventTime"),
        event.get("firstTimestamp"),
        _meta(event).get("creationTimestamp"),
    ):
        if value:
            try:
                parsed = datetime.datetime.fromisoformat(str(value))
            except ValueError:
                continue
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
    return _EPOCH


def _latest(events: Iterable[Obj]) -> Obj | None:
    """The newest Event; on equal times the one listed last wins."""
    best: Obj | None = None
    best_time = _EPOCH
    for event in events:
        when = event_time(event)
        if best is None or when >= best_time:
            best, best_time = event, when
    return best
