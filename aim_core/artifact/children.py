"""The objects an artifact needs, built from plain values. Pure.

* the check-size Job (F70): ``/check-size.sh <sourceUri>``, last log line
  ``{"url": ..., "sizeBytes": N}``;
* the PVC (F71): size plus headroom rounded up to a whole GiB, ReadWriteMany;
* the per-namespace RoleBinding that lets the download pod patch
  ``aimartifacts/status`` (F72);
* the download Job (F73): container ``model-download``, args ``[sourceUri]``,
  the PVC at ``/cache``, env layered defaults < runtime config < artifact.

Pods run as uid/gid 1000 with a security context a namespace enforcing the
``restricted`` Pod Security Standard admits (non-root, no privilege
escalation, all capabilities dropped, seccomp ``RuntimeDefault``).

The download filter (D35) reaches both containers in ``AIM_DOWNLOAD_FILTER``
as JSON ``{"include": [...], "exclude": [...]}``; the operator always sends
the effective filter, so the downloader needs no default of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.reconcile import labels as lbl
from aim_core.reconcile.envvars import layer_env
from aim_core.reconcile.naming import sanitize_label_value
from aim_core.reconcile.quantities import canonical
from aim_core.reconcile.resources import JOBS, PVCS, ROLE_BINDINGS
from aim_core.runtimeconfig import Placement, apply_to_pod

STATUS_UPDATER = "aim-engine-artifact-status-updater"  # RoleBinding and ClusterRole name (F72)
DOWNLOAD_CONTAINER = "model-download"
CHECK_SIZE_CONTAINER = "check-size"
CHECK_SIZE_COMMAND = "/check-size.sh"
MOUNT_PATH = "/cache"
RUN_AS = 1000
DOWNLOAD_BACKOFF_LIMIT = 2
DOWNLOAD_TTL_SECONDS = 600
CHECK_SIZE_BACKOFF_LIMIT = 2
CHECK_SIZE_TTL_SECONDS = 300
FILTER_ENV = "AIM_DOWNLOAD_FILTER"

COMPONENT_DOWNLOAD = lbl.ARTIFACT_DOWNLOAD
COMPONENT_CHECK_SIZE = lbl.ARTIFACT_CHECK_SIZE

Env = Sequence[Mapping[str, Any]]


def _pod_security() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _container_security() -> dict[str, Any]:
    return {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def job_labels(artifact: str, component: str) -> dict[str, str]:
    return {lbl.CACHE_NAME_LABEL: artifact, lbl.CACHE_TYPE_LABEL: "artifact", lbl.COMPONENT_LABEL: component}


def _job(
    name: str, namespace: str, labels: Mapping[str, str], pod_spec: dict[str, Any], backoff_limit: int, ttl: int
) -> dict[str, Any]:
    return {
        "apiVersion": JOBS.api_version,
        "kind": JOBS.kind,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "backoffLimit": backoff_limit,
            "ttlSecondsAfterFinished": ttl,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }


def _job_pod(
    container: dict[str, Any],
    volumes: list[dict[str, Any]],
    pull_secrets: Sequence[Mapping[str, Any]] | None,
    placement: Placement | None,
) -> dict[str, Any]:
    """The pod of an artifact's Job: never restarted, unprivileged, placed as the runtime config says."""
    pod: dict[str, Any] = {"restartPolicy": "Never", "securityContext": _pod_security(), "containers": [container]}
    if volumes:
        pod["volumes"] = volumes
    if secrets := _pull_secrets(pull_secrets):
        pod["imagePullSecrets"] = secrets
    apply_to_pod(pod, placement)
    return pod


def _pull_secrets(secrets: Sequence[Mapping[str, Any]] | None) -> list[dict[str, str]]:
    return [{"name": s["name"]} for s in secrets or () if s.get("name")]


def check_size_env(config_env: Env, artifact_env: Env, filter_json: str) -> list[dict[str, Any]]:
    """Env of the size check: a scratch home, runtime-config env, artifact env, then the filter."""
    return layer_env(
        [{"name": "HF_HOME", "value": "/tmp/.hf"}, {"name": "TMPDIR", "value": "/tmp/"}],
        config_env,
        artifact_env,
        [{"name": FILTER_ENV, "value": filter_json}],
    )


def download_env(
    *, artifact: str, namespace: str, size_bytes: int, config_env: Env, artifact_env: Env, filter_json: str
) -> list[dict[str, Any]]:
    """Env of the download container (spec 2.6): defaults < runtime config < artifact; the filter last."""
    defaults = [
        {"name": "AIM_DOWNLOADER_PROTOCOL", "value": "XET,HF_TRANSFER"},
        {"name": "TMPDIR", "value": "/tmp/"},
        {"name": "HF_HOME", "value": "/tmp/.hf"},
        {"name": "EXPECTED_SIZE_BYTES", "value": str(size_bytes)},
        {"name": "MOUNT_PATH", "value": MOUNT_PATH},
        {"name": "ARTIFACT_NAME", "value": artifact},
        {"name": "ARTIFACT_NAMESPACE", "value": namespace},
        {"name": "STALL_TIMEOUT", "value": "120"},
        {"name": "TARGET_DIR", "value": MOUNT_PATH},
    ]
    return layer_env(defaults, config_env, artifact_env, [{"name": FILTER_ENV, "value": filter_json}])


def check_size_job(
    *,
    name: str,
    artifact: str,
    namespace: str,
    source_uri: str,
    image: str,
    env: Env,
    pull_secrets: Sequence[Mapping[str, Any]] | None = None,
    placement: Placement | None = None,
) -> dict[str, Any]:
    """The Job measuring the source (F70); its last log line carries the size."""
    labels = job_labels(artifact, COMPONENT_CHECK_SIZE)
    container = {
        "name": CHECK_SIZE_CONTAINER,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": [CHECK_SIZE_COMMAND, source_uri],
        "env": list(env),
        "securityContext": _container_security(),
    }
    pod = _job_pod(container, [], pull_secrets, placement)
    return _job(name, namespace, labels, pod, CHECK_SIZE_BACKOFF_LIMIT, CHECK_SIZE_TTL_SECONDS)


def download_job(
    *,
    name: str,
    artifact: str,
    namespace: str,
    source_uri: str,
    image: str,
    env: Env,
    pvc: str,
    pull_secrets: Sequence[Mapping[str, Any]] | None = None,
    placement: Placement | None = None,
) -> dict[str, Any]:
    """The Job filling the PVC (F73); placed as the artifact's runtime config says (issue 20)."""
    labels = job_labels(artifact, COMPONENT_DOWNLOAD)
    container = {
        "name": DOWNLOAD_CONTAINER,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "args": [source_uri],
        "env": list(env),
        "securityContext": _container_security(),
        "volumeMounts": [{"name": "cache", "mountPath": MOUNT_PATH}],
    }
    volumes = [{"name": "cache", "persistentVolumeClaim": {"claimName": pvc}}]
    pod = _job_pod(container, volumes, pull_secrets, placement)
    return _job(name, namespace, labels, pod, DOWNLOAD_BACKOFF_LIMIT, DOWNLOAD_TTL_SECONDS)


def pvc(
    *, name: str, artifact: str, namespace: str, source_uri: str, gib: int, storage_class: str, template_created: bool
) -> dict[str, Any]:
    """The volume the artifact is downloaded into (F71)."""
    labels = {lbl.CACHE_NAME_LABEL: artifact}
    if template_created:
        labels[lbl.CACHE_TYPE_LABEL] = "template-cache"
    source = sanitize_label_value(source_uri.split("://", 1)[-1])
    if source is not None:
        labels[lbl.SOURCE_MODEL_LABEL] = source
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": canonical(f"{gib}Gi")}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": PVCS.api_version,
        "kind": PVCS.kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def status_updater_binding(namespace: str) -> dict[str, Any]:
    """RoleBinding granting the namespace's ``default`` ServiceAccount status patches on artifacts (F72)."""
    return {
        "apiVersion": ROLE_BINDINGS.api_version,
        "kind": ROLE_BINDINGS.kind,
        "metadata": {"name": STATUS_UPDATER, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": STATUS_UPDATER},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
    }
