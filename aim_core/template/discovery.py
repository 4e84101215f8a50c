"""The discovery Job, its output and the retry breaker (F33-F36, spec 2.5-2.7, 2.13). Pure.

**The Job** runs the model image with ``dry-run --format=json`` in the
template's namespace (cluster templates: the operator namespace), owned by
the template, once (``backoffLimit: 0``), removed 60 s after it finishes. Its
pod is locked down the way a ``restricted`` namespace demands (non-root user
65532, no privilege escalation, every capability dropped, ``RuntimeDefault``
seccomp). Pull secrets and service account come from the template, else the
model. A ``customProfile`` becomes a ConfigMap mounted at
:data:`CUSTOM_PROFILE_DIR` (file ``profile.yaml``).

**The output** is the last JSON array the container printed (log lines may
surround it); its first element carries ``profile`` and ``models``. What can
go wrong has a reason each, so the user knows what to fix:

* ``DiscoveryOutputEmpty`` -- nothing printed, or an empty array;
* ``DiscoveryOutputMalformed`` -- no JSON array at all;
* ``DiscoveryOutputIncomplete`` -- an array cut off before it closes, or an
  element without ``profile`` or ``models`` or a model without name/source;
* ``DiscoveryOutputInvalid`` -- values the API or the cache paths cannot take
  (a model id that is not ``org/name`` or has ``.``/``..`` segments, a source
  other than ``hf://``/``s3://``, a negative size).

Profile values outside the API's enums are dropped from ``metadata`` (they stay
in ``originalDiscoveryOutput``) rather than failing the status write.

**The breaker** (F36): every failed attempt (a failed Job, or output that
cannot be used) is counted once in ``status.discovery`` with the time it was
seen; the next Job waits ``60 s x 2^(attempts-1)``, at most an hour. A changed
spec hash starts again from zero.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from aim_core.reconcile import labels as keys
from aim_core.reconcile.naming import derived_name, discovery_job_name, discovery_spec_hash, sanitize_label_value
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.template.output import DiscoveryResult, OutputProblem, clip_text, parse_output

__all__ = [
    "ARGS",
    "BACKOFF_BASE_SECONDS",
    "BACKOFF_CAP_SECONDS",
    "CUSTOM_PROFILE_DIR",
    "JOB_LABELS",
    "MAX_ACTIVE_JOBS",
    "DiscoveryResult",
    "OutputProblem",
    "backoff_seconds",
    "build_job",
    "is_discovery_job",
    "job_finished",
    "parse_output",
    "profile_config_map",
]

ARGS = ("dry-run", "--format=json")
CONTAINER = "discovery"
BACKOFF_LIMIT = 0
TTL_SECONDS = 60
RUN_AS_USER = 65532
MAX_ACTIVE_JOBS = 10
BACKOFF_BASE_SECONDS = 60
BACKOFF_CAP_SECONDS = 3600
CUSTOM_PROFILE_DIR = "/etc/aim/custom-profile"
CUSTOM_PROFILE_KEY = "profile.yaml"

JOB_LABELS = keys.DISCOVERY_JOB_LABELS


# ---------------------------------------------------------------- identity


def template_label(name: str) -> str:
    """The ``aim.eai.amd.com/template`` value: the name, or a hashed short form when it cannot be one."""
    clean = sanitize_label_value(name)
    if clean == name:
        return name
    return derived_name([name], [name], 8)


def is_discovery_job(obj: Obj) -> bool:
    labels = meta_of(obj).get("labels") or {}
    return all(labels.get(k) == v for k, v in JOB_LABELS.items())


def job_finished(job: Obj) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget") and c.get("status") == "True"
        for c in status_of(job).get("conditions") or ()
    )


def job_succeeded(job: Obj) -> bool:
    return any(
        c.get("type") in ("Complete", "SuccessCriteriaMet") and c.get("status") == "True"
        for c in status_of(job).get("conditions") or ()
    )


def _spec(obj: Obj) -> Obj:
    return spec_of(obj)


def _gpu(template: Obj) -> Obj | None:
    hardware = _spec(template).get("hardware") or {}
    return hardware.get("gpu")


def pull_secrets(template: Obj, model: Obj) -> list[str]:
    """Pull secret names: the template's, then the model's, without repeats."""
    names: dict[str, None] = {}
    for source in (_spec(template), _spec(model)):
        for ref in source.get("imagePullSecrets") or ():
            if isinstance(ref, Mapping) and ref.get("name"):
                names[ref["name"]] = None
    return list(names)


def service_account(template: Obj, model: Obj) -> str:
    return (_spec(template).get("serviceAccountName") or _spec(model).get("serviceAccountName") or "").strip()


def job_env(template: Obj, model: Obj, namespaced: bool) -> list[dict[str, Any]]:
    """Container env (2.6): quiet logs, the model's env, the namespaced template's env, then the profile asks."""
    spec = _spec(template)
    env: list[dict[str, Any]] = [
        {"name": "AIM_LOG_LEVEL_ROOT", "value": "CRITICAL"},
        {"name": "AIM_LOG_LEVEL", "value": "CRITICAL"},
    ]
    env += [dict(e) for e in _spec(model).get("env") or () if isinstance(e, Mapping)]
    if namespaced:
        env += [dict(e) for e in spec.get("env") or () if isinstance(e, Mapping)]
    gpu = _gpu(template) or {}
    asks = [
        ("AIM_METRIC", spec.get("metric")),
        ("AIM_PRECISION", spec.get("precision")),
        ("AIM_GPU_MODEL", (gpu.get("model") or "").strip()),
        ("AIM_GPU_COUNT", str(gpu["requests"]) if (gpu.get("requests") or 0) > 0 else ""),
        ("AIM_PROFILE_ID", spec.get("profileId")),
    ]
    env += [{"name": name, "value": str(value)} for name, value in asks if value]
    return env


def job_name(template: Obj, model: Obj, namespaced: bool) -> str:
    spec = _spec(template)
    gpu = _gpu(template)
    return discovery_job_name(
        template["metadata"]["name"],
        spec.get("modelName") or "",
        (_spec(model).get("image") or "").strip(),
        service_account=service_account(template, model),
        env=[e for e in (spec.get("env") or ()) if isinstance(e, Mapping)] if namespaced else (),
        pull_secrets=pull_secrets(template, model),
        metric=spec.get("metric") or "",
        precision=spec.get("precision") or "",
        gpu=((gpu.get("model") or ""), int(gpu.get("requests") or 0)) if gpu is not None else None,
        profile_id=spec.get("profileId") or "",
    )


def spec_hash(template: Obj, model: Obj) -> str:
    """``status.discovery.specHash``: what, when it changes, makes earlier failures irrelevant."""
    spec = _spec(template)
    gpu = _gpu(template) or {}
    return discovery_spec_hash(
        spec.get("modelName") or "",
        (_spec(model).get("image") or "").strip(),
        spec.get("metric") or "",
        spec.get("precision") or "",
        gpu.get("model") or "",
        int(gpu.get("requests") or 0),
        spec.get("profileId") or "",
    )


def profile_config_map_name(template: Obj) -> str:
    return derived_name([template["metadata"]["name"], "profile"], [template["metadata"]["name"]], 8)


def profile_config_map(template: Obj, namespace: str) -> dict[str, Any] | None:
    """The ConfigMap holding ``spec.customProfile`` as YAML-compatible JSON, or ``None`` without one."""
    custom = _spec(template).get("customProfile")
    if not custom:
        return None
    profile = {"engine_args": custom.get("engineArgs") or {}, "env_vars": custom.get("envVars") or {}}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": profile_config_map_name(template),
            "namespace": namespace,
            "labels": {keys.TEMPLATE_LABEL: template_label(template["metadata"]["name"])},
        },
        # JSON is YAML: the image reads it as a profile file.
        "data": {CUSTOM_PROFILE_KEY: json.dumps({"profile": profile}, indent=2, sort_keys=True)},
    }


def build_job(template: Obj, model: Obj, namespace: str, *, namespaced: bool) -> dict[str, Any]:
    """The discovery Job for ``template`` running ``model``'s image (F33)."""
    labels = {**JOB_LABELS, keys.TEMPLATE_LABEL: template_label(template["metadata"]["name"])}
    container: dict[str, Any] = {
        "name": CONTAINER,
        "image": (_spec(model).get("image") or "").strip(),
        "args": list(ARGS),
        "env": job_env(template, model, namespaced),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
    }
    pod: dict[str, Any] = {
        "restartPolicy": "Never",
        # Discovery only runs the image's dry-run: it never needs the API server, so no token is mounted,
        # whatever account the pod runs as (issue 18).
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [container],
    }
    secrets = pull_secrets(template, model)
    if secrets:
        pod["imagePullSecrets"] = [{"name": n} for n in secrets]
    account = service_account(template, model)
    if account and namespaced:
        pod["serviceAccountName"] = account
    # A cluster-scoped template's Job runs in the operator's namespace: an account named there by whoever may
    # create AIMClusterModels or AIMClusterServiceTemplates (the operator's own, with its ClusterRole) would lend
    # them the operator's rights. Those Jobs run as that namespace's default account, without a token (the
    # confused deputy of issue 18; docs/security.md).
    if _spec(template).get("customProfile"):
        pod["volumes"] = [{"name": "custom-profile", "configMap": {"name": profile_config_map_name(template)}}]
        container["volumeMounts"] = [{"name": "custom-profile", "mountPath": CUSTOM_PROFILE_DIR, "readOnly": True}]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(template, model, namespaced), "namespace": namespace, "labels": labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


# ---------------------------------------------------------------- breaker


def backoff_seconds(attempts: int) -> float:
    """Wait before the next Job after ``attempts`` failures: 60 s, 120 s, 240 s, ... at most 3600 s."""
    if attempts <= 0:
        return 0.0
    return float(min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** min(attempts - 1, 16)))


def parse_time(value: Any) -> datetime.datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def format_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def describe_wait(seconds: float) -> str:
    seconds = max(0, int(math.ceil(seconds)))
    minutes, secs = divmod(seconds, 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


# ---------------------------------------------------------------- images

_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(
    rf"^(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
)


def image_problem(image: str) -> str | None:
    """Why ``image`` is not an image reference a kubelet can pull, or ``None`` when it is one."""
    if not image.strip():
        return "the model has no image"
    if len(image) > 4096 or not _IMAGE.match(image.strip()):
        return (
            f"model image {clip_text(image, 120)!r} is not a valid image reference "
            "([registry/]repository[:tag][@digest], lower-case repository)"
        )
    return None
