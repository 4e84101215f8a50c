"""Playing the kubelet for discovery Jobs in wire tests (the emulator runs no pods).

:func:`finish` gives a discovery Job the pod it would have run (with its
labels and ``job-name``), serves that pod's log and marks the Job finished, as
the Job controller and the kubelet would.
"""

from __future__ import annotations

import json
from typing import Any

JOBS = "batch/v1/jobs"


def output(
    model_id: str = "org/tiny",
    gpu: str = "MI300X",
    count: int = 1,
    size_gb: float = 0.5,
    type_: str = "optimized",
    metric: str = "latency",
    precision: str = "fp8",
) -> str:
    """What ``dry-run --format=json`` prints for one profile and one model."""
    return json.dumps(
        [
            {
                "filename": "profile.yaml",
                "profile": {
                    "metadata": {
                        "engine": "vllm",
                        "gpu": gpu,
                        "precision": precision,
                        "gpu_count": count,
                        "metric": metric,
                        "type": type_,
                    },
                    "engine_args": {},
                    "env_vars": {},
                },
                "models": [{"name": model_id, "source": f"hf://{model_id}", "size_gb": size_gb}],
            }
        ]
    )


def gpu_node(name: str = "gpu-1", device: str = "74a1", count: int = 8) -> dict[str, Any]:
    """An AMD GPU node (MI300X by default) as the AMD node labeller and device plugin describe it."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"amd.com/gpu.device-id": device, "amd.com/gpu.vram": "192G"}},
        "status": {"capacity": {"amd.com/gpu": str(count)}, "allocatable": {"amd.com/gpu": str(count)}},
    }


def jobs_of(kube: Any, template: str, namespace: str) -> list[dict[str, Any]]:
    return kube.list(JOBS, namespace, label_selector=f"aim.eai.amd.com/template={template}")


def finish(kube: Any, job: dict[str, Any], *, ok: bool = True, log: str | None = None) -> None:
    """The Job's pod ran (and printed ``log``); the Job is Complete, or Failed when not ``ok``."""
    job = kube.get(JOBS, job["metadata"]["namespace"], job["metadata"]["name"])
    ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
    pod = f"{name}-x7k2p"
    if log is not None:
        kube.set_log(ns, pod, log)
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod,
                "namespace": ns,
                "labels": {**job["spec"]["template"]["metadata"]["labels"], "job-name": name},
            },
            "status": {
                "phase": "Succeeded" if ok else "Failed",
                "containerStatuses": [
                    {
                        "name": "discovery",
                        "state": {"terminated": {"exitCode": 0 if ok else 1, "reason": "Completed" if ok else "Error"}},
                    }
                ],
            },
        }
    )
    conditions = (
        [{"type": "Complete", "status": "True"}]
        if ok
        else [
            {
                "type": "Failed",
                "status": "True",
                "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit",
            }
        ]
    )
    kube.put_object({**job, "status": {"conditions": conditions, "succeeded" if ok else "failed": 1}})
