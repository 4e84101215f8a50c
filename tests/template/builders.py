"""Builders for template plan tests: templates, models, nodes and the observed inputs."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import attrs

from aim_core.plugin.manager import get_plugin_manager, providers
from aim_core.reconcile.gpu import GpuInventory
from aim_core.runtimeconfig.resolution import resolve
from aim_core.template.hardware import advertised_counts
from aim_core.template.observed import Observed, Scope, Slot

NOW = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
NS = "team"
IMAGE = "ghcr.io/silogen/aim-dummy:0.1.8"


def vendors() -> tuple[Any, ...]:
    return tuple(providers(get_plugin_manager(), "aim_gpu_vendors").values())


def ts(seconds: float = 0) -> str:
    return (NOW + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


class TemplateBuilder(dict):
    def with_gpu(self, model: str | None = "MI300X", requests: int | None = 1, **extra: Any) -> TemplateBuilder:
        gpu = {k: v for k, v in {"model": model, "requests": requests, **extra}.items() if v is not None}
        self["spec"].setdefault("hardware", {})["gpu"] = gpu
        return self

    def with_spec(self, **fields: Any) -> TemplateBuilder:
        self["spec"].update(fields)
        return self

    def with_status(self, **fields: Any) -> TemplateBuilder:
        self.setdefault("status", {}).update(fields)
        return self

    def inline(self) -> TemplateBuilder:
        return self.with_spec(modelSources=[{"modelId": "org/model", "sourceUri": "hf://org/model", "size": "1Gi"}])


def make_template(name: str = "tpl", model: str = "m", *, cluster: bool = False) -> TemplateBuilder:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "generation": 1}
    if not cluster:
        meta["namespace"] = NS
    kind = "AIMClusterServiceTemplate" if cluster else "AIMServiceTemplate"
    return TemplateBuilder(
        apiVersion="aim.eai.amd.com/v1alpha1",
        kind=kind,
        metadata=meta,
        spec={"modelName": model, "metric": "latency", "precision": "fp8"},
    )


def make_model(
    name: str = "m", image: str = IMAGE, *, cluster: bool = False, status: str = "Ready", **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-model-{name}"}
    if not cluster:
        meta["namespace"] = NS
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterModel" if cluster else "AIMModel",
        "metadata": meta,
        "spec": {"image": image, **spec},
        "status": {"status": status},
    }


def amd_node(name: str = "n1", device: str = "74a1", count: int | None = 8, **labels: str) -> dict[str, Any]:
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"amd.com/gpu.device-id": device, **labels}},
    }
    if count is not None:
        node["status"] = {"allocatable": {"amd.com/gpu": str(count)}, "capacity": {"amd.com/gpu": str(count)}}
    return node


def nvidia_node(
    name: str = "g1", product: str = "NVIDIA-H100-80GB-HBM3", count: int = 8, memory: int = 81559
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.count": str(count),
                "nvidia.com/gpu.memory": str(memory),
            },
        },
        "status": {"allocatable": {"nvidia.com/gpu": str(count)}},
    }


def observed(
    template: dict[str, Any],
    *,
    model: dict[str, Any] | None | str = "default",
    nodes=(),
    jobs=(),
    pods=(),
    output: str | None = None,
    slot: Slot = Slot.GRANTED,
    now=NOW,
    **extra: Any,
) -> Observed:
    cluster = template["kind"] == "AIMClusterServiceTemplate"
    if model == "default":
        model = make_model(template["spec"]["modelName"], cluster=cluster)
    vs = extra.pop("vendors", None) or vendors()
    nodes = list(nodes)
    return Observed(
        scope=Scope.CLUSTER if cluster else Scope.NAMESPACE,
        namespace="aim-system" if cluster else NS,
        config=extra.pop("config", None) or resolve("default", None, None),
        model=copy.deepcopy(model) if model is not None else None,
        inventory=GpuInventory.from_nodes(nodes, vs),
        counts=advertised_counts(nodes, vs),
        now=now,
        jobs=tuple(jobs),
        pods=tuple(pods),
        output=output,
        slot=slot,
        **extra,
    )


def evolve(ob: Observed, **changes: Any) -> Observed:
    return attrs.evolve(ob, **changes)


def job_from(
    plan_job: dict[str, Any], *, created: float = 0, state: str | None = None, reason: str = "BackoffLimitExceeded"
) -> dict[str, Any]:
    """A Job as the server returns it after the plan applied it, optionally finished."""
    job = copy.deepcopy(plan_job)
    job["metadata"].update({"uid": "uid-job", "creationTimestamp": ts(created)})
    job["metadata"]["ownerReferences"] = [{"kind": "AIMServiceTemplate", "name": "tpl", "uid": "uid-tpl"}]
    if state == "Complete":
        job["status"] = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}
    elif state == "Failed":
        job["status"] = {
            "failed": 1,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": reason,
                    "message": "Job has reached the specified backoff limit",
                }
            ],
        }
    else:
        job["status"] = {"active": 1}
    return job


def pod_of(job: dict[str, Any], phase: str = "Succeeded") -> dict[str, Any]:
    name = job["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-abcde",
            "namespace": job["metadata"]["namespace"],
            "labels": {"job-name": name, **job["spec"]["template"]["metadata"]["labels"]},
        },
        "status": {"phase": phase},
    }
