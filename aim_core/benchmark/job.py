"""The Job of an AIMBenchmark run, and the request its tool plugin sees. Pure.

One container, ``benchmark``, runs the tool's command (from the plugin) under the
restricted pod security standard, placed like the target service's pods (node selector,
tolerations, affinity) with the service's image pull secrets plus the run's. The core
sets the environment the command relies on (:mod:`aim_core.plugin.benchtools`): the report
directory (the PVC of ``spec.report.uri`` at its path, else an emptyDir), the summary file
(``/dev/termination-log``: the operator reads the summary back from the pod's status) and
the credentials as ``secretKeyRef`` env (never read by the operator). Logs fall back into
the termination message when the container fails (``FallbackToLogsOnError``), so a failed
run's status carries the tool's last log lines.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.benchmark.view import BenchmarkView
from aim_core.plugin.benchtools import (
    BENCH_API_KEY_ENV,
    BENCH_REPORT_DIR_ENV,
    BENCH_SUMMARY_ENV,
    BenchmarkCommand,
    BenchmarkRequest,
)
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.durations import parse_duration
from aim_core.reconcile.naming import derived_name, hashed_label_value
from aim_core.reconcile.obj import Obj

BENCHMARK_LABEL = lbl.AIM_PREFIX + "benchmark.name"
COMPONENT = "benchmark"
CONTAINER = "benchmark"
RUN_AS = 1000
REPORT_MOUNT = "/report"
SUMMARY_PATH = "/dev/termination-log"
HF_TOKEN_ENV = "HF_TOKEN"
#: The derived deadline (no ``spec.timeout``): every run's bound rounded up to a minute plus a minute
#: (ramp-up, draining, writing its results), plus start-up (image pull, tokenizer download) and upload.
PER_RUN_SLACK_S = 60
START_AND_UPLOAD_S = 15 * 60
NO_DURATION_RUN_S = 24 * 3600  # a run bounded by maxRequests only (genai-bench's own bound is a day)
_PVC_URI = re.compile(r"^pvc://([^/]+)(?:/(.*))?$")


def job_name(benchmark: str) -> str:
    """The Job's name: the run's own when it fits in 63 characters, else shortened with a hash."""
    return benchmark if len(benchmark) <= 63 else derived_name([benchmark[:50]], [benchmark], 8, limit=63)


def benchmark_label(benchmark: str) -> str:
    """The value of :data:`BENCHMARK_LABEL` on the run's Job and pods: the name itself when it is a label
    value, else cut short with a hash of the whole name (two long names never share a value)."""
    return hashed_label_value(benchmark)


#: Labels the Job controller puts on a Job's pods with the Job's uid (1.27 and later; before 1.27).
JOB_UID_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid")
#: Seconds a finished Job (and its pod, with the tool's log) is kept after the run's status is written.
JOB_TTL_S = 3600


def controlled_by(obj: Obj, uid: str) -> bool:
    """Whether ``obj`` names ``uid`` as its controller (owner reference with ``controller: true``)."""
    return bool(uid) and any(
        r.get("uid") == uid and r.get("controller") for r in (obj.get("metadata") or {}).get("ownerReferences") or ()
    )


def pods_of_job(pods: Sequence[Obj], job: Obj) -> list[Obj]:
    """The pods the Job ``job`` created: its uid in their owner reference or in the Job controller's label.

    A pod that only carries the run's label (anyone who can create pods in the namespace can set it),
    or one of an earlier Job of the same name, is not the run's.
    """
    uid = (job.get("metadata") or {}).get("uid") or ""
    if not uid:
        return []
    out = []
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if controlled_by(pod, uid) or any(labels.get(key) == uid for key in JOB_UID_LABELS):
            out.append(pod)
    return out


def report_location(run: Obj | BenchmarkView) -> tuple[str, str] | None:
    """``(claim, path inside it)`` of ``spec.report.uri`` when it is a ``pvc://`` URI, else None."""
    match = _PVC_URI.match(BenchmarkView.of(run).report_uri)
    if not match:
        return None
    return match.group(1), (match.group(2) or "").strip("/")


class SpecFieldError(ValueError):
    """A value of the spec that cannot be used; :attr:`field` names it (``spec.maxDuration``)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _duration_s(view: BenchmarkView, field: str) -> float:
    """Seconds of the duration in ``spec.<field>``, bounded as Go's ``time.Duration`` (SpecFieldError)."""
    text = {"maxDuration": view.max_duration, "timeout": view.timeout}[field]
    try:
        return parse_duration(text) / 1e9
    except ValueError as exc:
        raise SpecFieldError(f"spec.{field}", str(exc)) from None


def request_for(run: Obj | BenchmarkView, endpoint: str, model: str) -> BenchmarkRequest:
    """The tool's view of the run (raises SpecFieldError naming the field for a value the schema let through)."""
    view = BenchmarkView.of(run)
    try:
        concurrency = tuple(int(c) for c in view.concurrency)
        rates = tuple(float(r) for r in view.request_rates)
    except (TypeError, ValueError) as exc:
        raise SpecFieldError("spec.concurrency" if view.concurrency else "spec.requestRates", str(exc)) from None
    return BenchmarkRequest(
        name=view.name,
        endpoint=endpoint.rstrip("/"),
        model=model,
        tokenizer=view.tokenizer or model,
        scenarios=view.scenarios,
        concurrency=concurrency,
        request_rates=rates,
        max_requests=view.max_requests,
        max_duration_s=None if not view.max_duration else _duration_s(view, "maxDuration"),
        has_api_key=view.api_key_secret_ref is not None,
        report_uri=view.report_uri if view.report_uri.startswith("s3://") else None,
    )


def deadline_seconds(run: Obj | BenchmarkView) -> int:
    """The Job's ``activeDeadlineSeconds``: ``spec.timeout``, else derived from the spec (see :func:`deadline_basis`).

    Raises SpecFieldError (naming the field) for a duration the schema let through.
    """
    view = BenchmarkView.of(run)
    if view.timeout:
        return max(1, math.ceil(_duration_s(view, "timeout")))
    return view.runs * (_per_run_s(view) + PER_RUN_SLACK_S) + START_AND_UPLOAD_S


def deadline_basis(run: Obj | BenchmarkView) -> str:
    """Where :func:`deadline_seconds` comes from, in words (for the message of a run stopped at it)."""
    view = BenchmarkView.of(run)
    if view.timeout:
        return f"spec.timeout {view.timeout}"
    levels = "concurrency levels" if view.concurrency else "request rates"
    bound = f"maxDuration {view.max_duration}" if view.max_duration else "no maxDuration"
    return (
        f"derived: {len(view.scenarios)} scenarios x {len(view.concurrency or view.request_rates)} {levels} x "
        f"({_per_run_s(view) // 60}m for {bound}, plus 1m) plus {START_AND_UPLOAD_S // 60}m for start-up and upload"
    )


def _per_run_s(view: BenchmarkView) -> int:
    """One run's bound in whole minutes (tools bound runs in minutes), 24h without ``maxDuration``."""
    if not view.max_duration:
        return NO_DURATION_RUN_S
    return max(1, math.ceil(_duration_s(view, "maxDuration") / 60)) * 60


def _secret_env(name: str, ref: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if not ref:
        return []
    selector = {k: ref[k] for k in ("name", "key", "optional") if ref.get(k) is not None}
    return [{"name": name, "valueFrom": {"secretKeyRef": selector}}]


def build_job(
    run: Obj | BenchmarkView,
    *,
    image: str,
    command: BenchmarkCommand,
    placement: Mapping[str, Any] | None = None,
    pull_secrets: Sequence[Mapping[str, Any]] = (),
    deadline_s: int | None = None,
) -> dict[str, Any]:
    """The Job that runs ``command`` for the AIMBenchmark ``run``, stopped after ``deadline_s`` when given.

    :param placement: ``nodeSelector``, ``tolerations`` and ``affinity`` of the target service's pods
        (its own, else its runtime config's); none for an endpoint.
    :param pull_secrets: the target service's effective pull secrets (service, template, model);
        the run's own are added after them.
    """
    view = BenchmarkView.of(run)
    name = view.name
    label = benchmark_label(name)
    labels = {BENCHMARK_LABEL: label, lbl.COMPONENT_LABEL: COMPONENT, lbl.MANAGED_BY_LABEL: lbl.MANAGED_BY_ENGINE}
    report = report_location(view)
    report_dir = f"{REPORT_MOUNT}/{report[1]}".rstrip("/") if report else REPORT_MOUNT
    env = [
        {"name": BENCH_REPORT_DIR_ENV, "value": report_dir},
        {"name": BENCH_SUMMARY_ENV, "value": SUMMARY_PATH},
        {"name": "HOME", "value": "/tmp"},
        *_secret_env(BENCH_API_KEY_ENV, view.api_key_secret_ref),
        *_secret_env(HF_TOKEN_ENV, view.hf_token_secret_ref),
        *({"name": k, "value": v} for k, v in sorted(command.env.items())),
        *(dict(e) for e in view.env),
    ]
    container: dict[str, Any] = {
        "name": CONTAINER,
        "image": image,
        "command": list(command.command),
        "env": env,
        "volumeMounts": [{"name": "report", "mountPath": REPORT_MOUNT}, {"name": "tmp", "mountPath": "/tmp"}],
        "terminationMessagePath": SUMMARY_PATH,
        "terminationMessagePolicy": "FallbackToLogsOnError",
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    if command.args:
        container["args"] = list(command.args)
    if view.resources:
        container["resources"] = dict(view.resources)
    report_volume: dict[str, Any] = (
        {"name": "report", "persistentVolumeClaim": {"claimName": report[0]}}
        if report
        else {"name": "report", "emptyDir": {}}
    )
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS,
            "runAsGroup": RUN_AS,
            "fsGroup": RUN_AS,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
        "volumes": [report_volume, {"name": "tmp", "emptyDir": {}}],
    }
    for key in ("nodeSelector", "tolerations", "affinity"):
        if (placement or {}).get(key):
            pod[key] = (placement or {})[key]
    secrets = _pull_secrets([*pull_secrets, *view.image_pull_secrets])
    if secrets:
        pod["imagePullSecrets"] = secrets
    job_spec: dict[str, Any] = {
        "backoffLimit": 0,  # a benchmark is not retried: a second attempt would measure something else
        "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
    }
    if deadline_s is not None:
        job_spec["activeDeadlineSeconds"] = deadline_s  # a hung tool is stopped (reason DeadlineExceeded)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(name), "namespace": view.namespace or None, "labels": dict(labels)},
        "spec": job_spec,
    }


def _pull_secrets(refs: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    names = dict.fromkeys(r.get("name") for r in refs if r.get("name"))
    return [{"name": n} for n in names if n]
