"""The AIMArtifact plan: size, volume, RoleBinding, download, quota, status (F70-F76). Pure.

One pass walks the artifact's phases in order and stops where it has to wait:

1. **Runtime config and spec.** A missing named runtime config is
   ``ReferenceNotFound``; a hostile spec (see :mod:`.validation`) is
   ``InvalidSpec``. Either stops every write, without a retry loop: the
   artifact is reconciled again when its spec or the config changes.
2. **Size.** ``spec.size`` (above 0) or ``status.discoveredSizeBytes``; else
   the check-size Job runs and its last log line gives the size
   (``CheckSizeJob``, ``CheckSizeJobPods``, ``CheckSizeOutput``).
3. **Volume.** The PVC is created once, never updated (``CachePvc``). Before
   that, the storage quota must allow it, possibly after evicting idle
   artifacts (:mod:`.quota`).
4. **RoleBinding** for the download pod's status patches, once per namespace.
5. **Download.** The Job is created when the size is known, the PVC and the
   RoleBinding exist and the artifact was not downloaded before
   (``DownloadJob``, ``DownloadJobPods``, ``DownloadComplete``).

Children are planned only when absent from the store: Jobs are immutable, the
PVC is created once, and the RoleBinding is shared by every artifact of the
namespace (re-applying it from each artifact would make them fight over its
identity labels).
"""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.api.artifact import DEFAULT_DOWNLOAD_IMAGE
from aim_core.artifact import children
from aim_core.artifact.observed import Observed
from aim_core.artifact.progress import (
    discovered_size,
    download_phase,
    parse_check_adapter,
    parse_check_size,
    was_downloaded,
)
from aim_core.artifact.quantities import GIB, INT64_MAX, display_size, gib_with_headroom
from aim_core.artifact.retention import parse_time, plan_retention
from aim_core.artifact.storage import EVICTION_REQUEUE, artifact_label, plan_pvc
from aim_core.artifact.validation import (
    effective_filter,
    filter_json,
    filter_problems,
    object_problems,
    source_problems,
    spec_size,
)
from aim_core.artifact.view import ArtifactView
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.naming import (
    artifact_pvc_name,
    check_size_job_name,
    download_job_name,
)
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.quantities import canonical
from aim_core.reconcile.resources import JOBS, ROLE_BINDINGS
from aim_core.reconcile.workloads import inspect_job, inspect_pods, inspect_pvc
from aim_core.runtimeconfig import Placement, pvc_headroom_percent, resolve_placement

OUTPUT_REQUEUE = 10.0  # seconds before reading a finished size check's output again
# Progress needs no polling (upstream looks every 10 s): Jobs, pods and the PVC re-trigger the
# artifact through watches, and so does its progress reaching 100 % (see the controller). This
# slow look is a safety net for what no watch reports, such as an Event explaining a stuck pod.
RUNNING_REQUEUE = 60.0
LAST_USED_REFRESH = 300.0  # seconds: status.lastUsed of an artifact in use is at most this old


def download_image(spec: Obj, default_image: str) -> str:
    """``spec.modelDownloadImage``, unless it is unset or the CRD's default, then the operator's setting."""
    own = (spec.get("modelDownloadImage") or "").strip()
    return own if own and own != DEFAULT_DOWNLOAD_IMAGE else (default_image or DEFAULT_DOWNLOAD_IMAGE)


def _newest(pods: tuple[Obj, ...]) -> tuple[Obj, ...]:
    """Only the latest attempt's pod: an earlier failed attempt does not fail a Job that is retrying."""
    if not pods:
        return ()
    return (max(pods, key=lambda p: (meta_of(p).get("creationTimestamp") or "", meta_of(p).get("name") or "")),)


def _component_pods(pods: tuple[Obj, ...], component: str, job: Obj | None) -> tuple[Obj, ...]:
    if job is None:
        return ()
    job_name = job["metadata"]["name"]
    mine = []
    for pod in pods:
        labels = meta_of(pod).get("labels") or {}
        if labels.get(lbl.COMPONENT_LABEL) != component:
            continue
        if labels.get(lbl.JOB_NAME_LABEL, job_name) != job_name:
            continue
        mine.append(pod)
    return tuple(mine)


def plan_artifact(obj: Obj, ob: Observed) -> Plan:
    plan = Plan()
    art = ArtifactView.of(obj)
    spec, status = art.spec, art.status
    name, ns, uid = art.name, art.namespace, art.uid
    plan.status["mode"] = "Dedicated" if art.dedicated else "Shared"
    plan.labels = ob.config.view.labels

    plan.component("RuntimeConfig", ob.config.health(), blocking=True)
    if plan.issues:
        return plan  # re-triggered when the runtime config appears

    uri = art.source_uri
    size, size_problem = spec_size(spec)
    problems = source_problems(uri) + ([size_problem] if size_problem else [])
    problems += filter_problems(spec.get("downloadFilter"), "spec.downloadFilter")
    problems += filter_problems(
        ob.config.view.download_filter,
        f"runtime config {ob.config.name!r} storage.downloadFilter",
    )
    problems += object_problems(spec, ob.config.spec, ob.config.name)
    if problems:
        plan.issue(Category.INVALID_SPEC, "InvalidSpec", "; ".join(problems))
        return plan
    for error in ob.read_errors:  # a failed read (a log, an Event) is classified as the error it was
        plan.issue(error.category, error.reason, error.message)

    if ob.in_use:
        last = parse_time(art.last_used)
        now = parse_time(ob.now)
        if last is None or now is None or (now - last).total_seconds() >= LAST_USED_REFRESH:
            plan.status["lastUsed"] = ob.now
        plan.requeue(LAST_USED_REFRESH)
    elif plan_retention(plan, obj, ob):
        return plan  # an unused adapter artifact past its retention: it goes, its volume with it

    flt, _ = effective_filter(spec, ob.config.spec)
    flt_json = filter_json(flt)
    image = download_image(spec, ob.default_image)
    config_env = list(ob.config.view.env)
    artifact_env = list(art.env)
    secrets = art.image_pull_secrets
    placement = resolve_placement({}, ob.config.spec, ob.config, owner=f"AIMArtifact {ns}/{name}")
    plan.notes += placement.sources

    # --- size (F70)
    if size is None:
        size = discovered_size(status)
    if size is None:
        size = _plan_size_check(plan, art, ob, image, config_env, artifact_env, flt_json, placement)
        if size is None:
            plan.status["displaySize"] = display_size(0)
            return plan
        plan.status["discoveredSizeBytes"] = size
    plan.status["displaySize"] = display_size(size)

    # --- volume (F71) and quota (D34)
    own_headroom = art.pvc_headroom_percent
    headroom = int(own_headroom) if own_headroom is not None else pvc_headroom_percent(ob.config.spec)
    gib = gib_with_headroom(size, headroom)
    if gib * GIB > INT64_MAX:
        plan.issue(
            Category.INVALID_SPEC,
            "InvalidSpec",
            f"{display_size(size)} plus {headroom}% headroom is more storage than a volume can request; "
            "lower spec.size or storage.pvcHeadroomPercent",
        )
        return plan
    pvc_name = artifact_pvc_name(name, uid)
    done_before = was_downloaded(status)
    pvc = ob.pvc
    if pvc is not None and meta_of(pvc).get("deletionTimestamp"):
        plan.component("CachePvc", Health.progressing("PvcTerminating", f"PVC {pvc_name} is being deleted"))
        plan.requeue(EVICTION_REQUEUE)
        return plan
    if pvc is None:
        if not plan_pvc(plan, art, ob, pvc_name, size, gib, headroom, done_before):
            return plan
        done_before = False  # a new, empty volume: whatever was downloaded before is gone
    else:
        plan.component("CachePvc", inspect_pvc(pvc, ob.events))
        requested = ((spec_of(pvc).get("resources") or {}).get("requests") or {}).get("storage")
        plan.status.update({"persistentVolumeClaim": pvc_name, "allocatedSize": canonical(requested or f"{gib}Gi")})
        if art.headroom_percent is not None:
            plan.status["headroomPercent"] = art.headroom_percent
        else:
            plan.status["headroomPercent"] = headroom

    # --- RoleBinding (F72)
    if ob.role_binding is None:
        plan.want(ROLE_BINDINGS, children.status_updater_binding(ns), owned=False)

    # --- download (F73, F75)
    job = ob.download_job
    if job is not None and pvc is not None and _older(job, pvc):
        plan.delete.append(Deletion(JOBS, ns, job["metadata"]["name"]))  # it filled a volume that is gone
        job = None
        done_before = False
    if job is None:
        if done_before:
            plan.conditions.append(dict(art.condition("DownloadComplete") or {}))  # was_downloaded saw it
            return plan
        job_name = download_job_name(name, uid)
        if pvc is None or ob.role_binding is None:
            waiting = "the PVC" if pvc is None else f"RoleBinding {children.STATUS_UPDATER}"
            plan.component("DownloadJob", Health.progressing("ResourceNotReady", f"waiting for {waiting}"))
        else:
            env = children.download_env(
                artifact=name,
                namespace=ns,
                size_bytes=size,
                config_env=config_env,
                artifact_env=artifact_env,
                filter_json=flt_json,
            )
            plan.want(
                JOBS,
                children.download_job(
                    name=job_name,
                    artifact=artifact_label(name),
                    namespace=ns,
                    source_uri=uri,
                    image=image,
                    env=env,
                    pvc=pvc_name,
                    pull_secrets=secrets,
                    placement=placement,
                ),
            )
            plan.component("DownloadJob", Health.progressing("ResourceNotReady", f"creating download Job {job_name}"))
        return plan
    job_health = inspect_job(job)
    pods = _newest(_component_pods(ob.pods, children.COMPONENT_DOWNLOAD, job))
    pods_health = inspect_pods(pods, ob.events, ob.logs) if pods else None
    _report_job(plan, "DownloadJob", job_health, pods_health)
    condition, fields = download_phase(status, job_health, pods_health)
    plan.conditions.append(condition)
    plan.status.update(fields)
    if not job_health.ready and job_health.state is not State.FAILED:
        plan.requeue(RUNNING_REQUEUE)
    return plan


def _report_job(plan: Plan, component: str, job: Health, pods: Health | None) -> None:
    """Report a Job and its pods; when the pod explains a failure, it comes first and decides.

    A failed Job is final until it expires (Q17), so its pod's failure is not
    retried with backoff, and the Job's own ``JobBackoffLimitExceeded`` (a
    consequence) does not hide the pod's reason (``AuthError``,
    ``StorageFull``, ``SourceNotFound``, ...).
    """
    if pods is not None and pods.state is State.FAILED:
        if job.state is State.FAILED and pods.category is not None and pods.category.is_transient:
            pods = attrs.evolve(pods, category=None)
        plan.component(f"{component}Pods", pods)
        plan.component(component, attrs.evolve(job, category=None))
        return
    plan.component(component, job)
    if pods is not None:
        plan.component(f"{component}Pods", pods)


def _older(job: Obj, pvc: Obj) -> bool:
    born = parse_time(meta_of(job).get("creationTimestamp"))
    volume = parse_time(meta_of(pvc).get("creationTimestamp"))
    return born is not None and volume is not None and born < volume


def _plan_size_check(
    plan: Plan,
    art: ArtifactView,
    ob: Observed,
    image: str,
    config_env: list[Any],
    artifact_env: list[Any],
    flt_json: str,
    placement: Placement | None = None,
) -> int | None:
    """Run or read the check-size Job; the size once its output is in."""
    name, ns = art.name, art.namespace
    job = ob.check_size_job
    job_name = check_size_job_name(name, art.uid)
    if job is None:
        env = children.check_size_env(config_env, artifact_env, flt_json)
        plan.want(
            JOBS,
            children.check_size_job(
                name=job_name,
                artifact=artifact_label(name),
                namespace=ns,
                source_uri=art.source_uri,
                image=image,
                env=env,
                pull_secrets=art.image_pull_secrets,
                placement=placement,
            ),
        )
        plan.component("CheckSizeJob", Health.progressing("ResourceNotReady", f"creating size-check Job {job_name}"))
        return None
    job_health = inspect_job(job)
    pods = _component_pods(ob.pods, children.COMPONENT_CHECK_SIZE, job)
    latest = _newest(pods)
    _report_job(plan, "CheckSizeJob", job_health, inspect_pods(latest, ob.events, ob.logs) if latest else None)
    if not job_health.ready:
        if job_health.state is not State.FAILED:
            plan.requeue(RUNNING_REQUEUE)
        return None
    succeeded = [p for p in pods if status_of(p).get("phase") == "Succeeded"]
    logs = [ob.logs[p["metadata"]["name"]] for p in _newest(tuple(succeeded)) if p["metadata"]["name"] in ob.logs]
    if not logs:
        plan.component(
            "CheckSizeOutput",
            Health.progressing("WaitingForOutput", f"size-check Job {job_name} finished; reading its output"),
        )
        plan.requeue(OUTPUT_REQUEUE)
        return None
    size, problem = parse_check_size(logs[0])
    if size is None:
        plan.component(
            "CheckSizeOutput",
            Health(State.FAILED, "InvalidSizeOutput", f"{problem}; the check runs again when Job {job_name} expires"),
        )
        return None
    adapter = parse_check_adapter(logs[0])
    if adapter is not None:  # a LoRA adapter's config, before the download (issue 22)
        plan.status["adapter"] = adapter
    return size
