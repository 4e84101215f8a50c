"""Fluent builders for artifact plan tests."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from aim_core.artifact.controller import ArtifactController
from aim_core.artifact.observed import Candidate, Observed, Quota, Usage
from aim_core.reconcile import naming
from aim_core.runtime.engine import build_status
from aim_core.runtimeconfig.resolution import resolve

NS = "ml-team"
UID = "uid-art"
NOW = "2026-01-01T12:00:00Z"
GIB = 1024**3


class Artifact(dict):
    def spec(self, **fields: Any) -> Artifact:
        self["spec"].update(fields)
        return self

    def status(self, **fields: Any) -> Artifact:
        self.setdefault("status", {}).update(fields)
        return self

    def labels(self, **labels: str) -> Artifact:
        self["metadata"].setdefault("labels", {}).update(labels)
        return self

    def owned(self) -> Artifact:
        self["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMTemplateCache",
                "name": "tc",
                "uid": "uid-tc",
                "controller": True,
            }
        ]
        return self

    def downloaded(self) -> Artifact:
        return self.status(
            status="Ready",
            conditions=[
                {
                    "type": "DownloadComplete",
                    "status": "True",
                    "reason": "Verified",
                    "message": "done",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        )


def make_artifact(name: str = "qwen", uri: str = "hf://Qwen/Qwen3-32B", **spec: Any) -> Artifact:
    return Artifact(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMArtifact",
            "metadata": {
                "name": name,
                "namespace": NS,
                "uid": UID,
                "generation": 1,
                "creationTimestamp": "2026-01-01T00:00:00Z",
            },
            "spec": {"sourceUri": uri, **spec},
        }
    )


def job(name: str, *, complete: bool = False, failed: str | None = None, created: str = "2026-01-01T00:01:00Z"):
    conditions = []
    if complete:
        conditions.append({"type": "Complete", "status": "True"})
    if failed:
        conditions.append(
            {
                "type": "Failed",
                "status": "True",
                "reason": failed,
                "message": "Job has reached the specified backoff limit",
            }
        )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": created},
        "status": {"conditions": conditions},
    }


def pod(name: str, component: str, job_name: str, phase: str = "Running", **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "creationTimestamp": "2026-01-01T00:02:00Z",
            "labels": {
                "aim.eai.amd.com/cache.name": "qwen",
                "aim.eai.amd.com/component": component,
                "job-name": job_name,
            },
        },
        "status": {"phase": phase, **status},
    }


def failed_pod(name: str, component: str, job_name: str, exit_code: int = 1) -> dict[str, Any]:
    return pod(
        name,
        component,
        job_name,
        "Failed",
        containerStatuses=[
            {"name": "model-download", "state": {"terminated": {"exitCode": exit_code, "reason": "Error"}}}
        ],
    )


def pvc(name: str, phase: str = "Bound", created: str = "2026-01-01T00:00:30Z", storage: str = "71Gi"):
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": created},
        "spec": {"resources": {"requests": {"storage": storage}}},
        "status": {"phase": phase},
    }


BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "RoleBinding",
    "metadata": {"name": "aim-engine-artifact-status-updater", "namespace": NS},
}


def names(art: dict[str, Any]) -> dict[str, str]:
    meta = art["metadata"]
    return {
        "pvc": naming.artifact_pvc_name(meta["name"], meta["uid"]),
        "download": naming.download_job_name(meta["name"], meta["uid"]),
        "check": naming.check_size_job_name(meta["name"], meta["uid"]),
    }


def observed(
    config_spec: dict[str, Any] | None = None,
    config_name: str = "default",
    *,
    cluster_config: dict[str, Any] | None = None,
    **fields: Any,
) -> Observed:
    namespaced = None
    if config_spec is not None:
        namespaced = {"metadata": {"name": config_name, "namespace": NS, "uid": "uid-cfg"}, "spec": config_spec}
    config = resolve(config_name, namespaced, cluster_config)
    fields.setdefault("default_image", "registry.example/aim-downloader:1")
    fields.setdefault("now", NOW)
    return Observed(config=config, **fields)


def candidate(
    name: str,
    gib: int,
    priority: int | None = 1,
    *,
    ns: str = NS,
    ready: bool = True,
    in_use: bool = False,
    last_used: str = "2026-01-01T00:00:00Z",
    caches: tuple[str, ...] = (),
):
    return Candidate(ns, name, gib * GIB, ready, in_use, priority, last_used, caches)


def quota(cluster_gib: int | None = None, namespace_gib: int | None = None) -> Quota:
    return Quota(
        None if cluster_gib is None else cluster_gib * GIB,
        None if namespace_gib is None else namespace_gib * GIB,
        "AIMClusterRuntimeConfig default",
    )


def usage(cluster_gib: int, namespace_gib: int, *candidates: Candidate) -> Usage:
    return Usage(cluster_gib * GIB, namespace_gib * GIB, tuple(candidates))


def status_after(art: dict[str, Any], plan: Any) -> dict[str, Any]:
    """The status the engine would write for ``plan`` (conditions and root status included)."""
    status, _ = build_status(
        ArtifactController(), art, plan, list(plan.issues), now=datetime.datetime(2026, 1, 1, 12, tzinfo=datetime.UTC)
    )
    return status


def cond(status: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c["type"] == type_), None)


def wanted(plan: Any, kind: str) -> list[dict[str, Any]]:
    return [copy.deepcopy(d.obj) for d in plan.apply if d.resource.kind == kind]
