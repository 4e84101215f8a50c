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
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.common import METRICS, PRECISIONS, PROFILE_TYPES
from aim_core.reconcile import labels as keys
from aim_core.reconcile.naming import derived_name, discovery_job_name, discovery_spec_hash, sanitize_label_value
from aim_core.template.quantities import format_binary

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

JOB_LABELS = {
    keys.K8S_NAME_LABEL: "aim-discovery",
    keys.K8S_COMPONENT_LABEL: "discovery",
    keys.MANAGED_BY_LABEL: keys.MANAGED_BY_DISCOVERY,
}

Obj = Mapping[str, Any]


# ---------------------------------------------------------------- identity


def template_label(name: str) -> str:
    """The ``aim.eai.amd.com/template`` value: the name, or a hashed short form when it cannot be one."""
    clean = sanitize_label_value(name)
    if clean == name:
        return name
    return derived_name([name], [name], 8)


def is_discovery_job(obj: Obj) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in JOB_LABELS.items())


def job_finished(job: Obj) -> bool:
    return any(c.get("type") in ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget")
               and c.get("status") == "True" for c in (job.get("status") or {}).get("conditions") or ())


def job_succeeded(job: Obj) -> bool:
    return any(c.get("type") in ("Complete", "SuccessCriteriaMet") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or ())


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


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
    env: list[dict[str, Any]] = [{"name": "AIM_LOG_LEVEL_ROOT", "value": "CRITICAL"},
                                 {"name": "AIM_LOG_LEVEL", "value": "CRITICAL"}]
    env += [dict(e) for e in _spec(model).get("env") or () if isinstance(e, Mapping)]
    if namespaced:
        env += [dict(e) for e in spec.get("env") or () if isinstance(e, Mapping)]
    gpu = _gpu(template) or {}
    asks = [("AIM_METRIC", spec.get("metric")), ("AIM_PRECISION", spec.get("precision")),
            ("AIM_GPU_MODEL", (gpu.get("model") or "").strip()),
            ("AIM_GPU_COUNT", str(gpu["requests"]) if (gpu.get("requests") or 0) > 0 else ""),
            ("AIM_PROFILE_ID", spec.get("profileId"))]
    env += [{"name": name, "value": str(value)} for name, value in asks if value]
    return env


def job_name(template: Obj, model: Obj, namespaced: bool) -> str:
    spec = _spec(template)
    gpu = _gpu(template)
    return discovery_job_name(
        template["metadata"]["name"], spec.get("modelName") or "", (_spec(model).get("image") or "").strip(),
        service_account=service_account(template, model),
        env=[e for e in (spec.get("env") or ()) if isinstance(e, Mapping)] if namespaced else (),
        pull_secrets=pull_secrets(template, model), metric=spec.get("metric") or "",
        precision=spec.get("precision") or "",
        gpu=((gpu.get("model") or ""), int(gpu.get("requests") or 0)) if gpu is not None else None,
        profile_id=spec.get("profileId") or "",
    )


def spec_hash(template: Obj, model: Obj) -> str:
    """``status.discovery.specHash``: what, when it changes, makes earlier failures irrelevant."""
    spec = _spec(template)
    gpu = _gpu(template) or {}
    return discovery_spec_hash(spec.get("modelName") or "", (_spec(model).get("image") or "").strip(),
                               spec.get("metric") or "", spec.get("precision") or "", gpu.get("model") or "",
                               int(gpu.get("requests") or 0), spec.get("profileId") or "")


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
        "metadata": {"name": profile_config_map_name(template), "namespace": namespace,
                     "labels": {keys.TEMPLATE_LABEL: template_label(template["metadata"]["name"])}},
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
        "securityContext": {"runAsNonRoot": True, "runAsUser": RUN_AS_USER, "seccompProfile": {"type": "RuntimeDefault"}},
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


# ---------------------------------------------------------------- output


@attrs.frozen
class DiscoveryResult:
    """What discovery found: ``status.profile`` and ``status.modelSources``."""

    profile: dict[str, Any]
    sources: list[dict[str, Any]]


@attrs.frozen
class OutputProblem:
    """Why the output cannot be used: a reason for the condition and a message saying what is wrong."""

    reason: str
    message: str


EMPTY, MALFORMED, INCOMPLETE, INVALID = (
    "DiscoveryOutputEmpty", "DiscoveryOutputMalformed", "DiscoveryOutputIncomplete", "DiscoveryOutputInvalid")

_MODEL_ID = re.compile(r"^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$")
_SOURCE_URI = re.compile(r"^(hf|s3)://[^\s]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _clip(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arrays(text: str) -> tuple[list[Any], int | None]:
    """Top-level JSON arrays in ``text``, left to right; and where an unterminated one starts, if any."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    cut: int | None = None
    i = text.find("[")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            ends = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
            if cut is None and ends and text[i + 1:].lstrip()[:1] in ("{", ""):
                cut = i
            i = text.find("[", i + 1)
            continue
        if isinstance(value, list):
            found.append(value)
        i = text.find("[", end)
    return found, cut


def parse_output(text: str) -> DiscoveryResult | OutputProblem:
    """Read the discovery container's log (see the module docstring for the reasons)."""
    if not text.strip():
        return OutputProblem(EMPTY, "the discovery container printed nothing; the image may not be an AIM image "
                                    "or does not support 'dry-run --format=json'")
    arrays, cut = _arrays(text)
    if not arrays:
        if cut is not None:
            return OutputProblem(INCOMPLETE, f"the discovery output stops before its JSON array closes (log cut off "
                                             f"or the container was killed): {_clip(text[cut:])}")
        return OutputProblem(MALFORMED, f"the discovery output holds no JSON array: {_clip(text)}")
    found = [a for a in arrays if a]
    if not found:
        return OutputProblem(EMPTY, "discovery found no profile for this template (it printed an empty list); "
                                    "check spec.metric, spec.precision, spec.hardware and spec.profileId")
    element = found[-1][0]
    if not isinstance(element, Mapping):
        return OutputProblem(MALFORMED, f"the discovery output's first element is not an object: {_clip(json.dumps(element))}")
    missing = [k for k in ("profile", "models") if not isinstance(element.get(k), (Mapping, list))
               or (k == "profile" and not isinstance(element.get(k), Mapping))
               or (k == "models" and not isinstance(element.get(k), list))]
    if missing:
        return OutputProblem(INCOMPLETE, f"the discovery output lacks {' and '.join(missing)}: "
                                         f"{_clip(json.dumps(element))}")
    sources = []
    for index, entry in enumerate(element["models"]):
        source = _model_source(index, entry)
        if isinstance(source, OutputProblem):
            return source
        sources.append(source)
    return DiscoveryResult(_profile(element), sources)


def _model_source(index: int, entry: Any) -> dict[str, Any] | OutputProblem:
    where = f"models[{index}]"
    if not isinstance(entry, Mapping) or not entry.get("name") or not entry.get("source"):
        return OutputProblem(INCOMPLETE, f"{where} of the discovery output lacks name or source: "
                                         f"{_clip(json.dumps(entry, default=str))}")
    name, uri = str(entry["name"]), str(entry["source"])
    segments = name.split("/")
    if not _MODEL_ID.match(name) or any(s in (".", "..") for s in segments) or _CONTROL.search(name):
        return OutputProblem(INVALID, f"{where}: model id {name!r} is not of the form org/name (letters, digits, "
                                      "'.', '_', '-'; no '.' or '..' segments)")
    if not _SOURCE_URI.match(uri) or _CONTROL.search(uri) or "/../" in f"{uri}/":
        return OutputProblem(INVALID, f"{where}: source {uri!r} is not an hf:// or s3:// URI without '..' segments")
    source: dict[str, Any] = {"modelId": name, "sourceUri": uri}
    size = entry.get("size_gb")
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size < 0 \
                or size > 2**20:
            return OutputProblem(INVALID, f"{where}: size_gb {size!r} is not a size in GiB")
        source["size"] = format_binary(int(round(size * 1024**3)))
    return source


def _enum(value: Any, allowed: Sequence[str]) -> str | None:
    text = str(value).strip().lower() if value is not None else ""
    return text if text in allowed else None


def _profile(element: Mapping[str, Any]) -> dict[str, Any]:
    raw = element["profile"]
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    metadata: dict[str, Any] = {}
    for key in ("engine", "gpu"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            metadata[key] = meta[key].strip()
    count = meta.get("gpu_count")
    if isinstance(count, int) and not isinstance(count, bool) and 0 <= count < 2**31:
        metadata["gpuCount"] = count
    for key, allowed in (("metric", METRICS), ("precision", PRECISIONS), ("type", PROFILE_TYPES)):
        value = _enum(meta.get(key), allowed)
        if value:
            metadata[key] = value
    profile: dict[str, Any] = {"metadata": metadata, "originalDiscoveryOutput": dict(element)}
    if isinstance(raw.get("engine_args"), Mapping):
        profile["engine_args"] = dict(raw["engine_args"])
    env = raw.get("env_vars")
    if isinstance(env, Mapping):
        profile["env_vars"] = {str(k): str(v) for k, v in env.items()}
    return profile


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
        return (f"model image {_clip(image, 120)!r} is not a valid image reference "
                "([registry/]repository[:tag][@digest], lower-case repository)")
    return None
