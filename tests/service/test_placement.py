"""Placing inference pods (issue 20): node selector, tolerations and affinity of the InferenceService.

Service over namespace runtime config over cluster runtime config, per field;
the template's GPU node affinity ANDed with the user's; a GPU request tolerates
its resource's taint unless the user tolerates that key already.
"""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.plugin.providers import GpuDevice, gpu_resource_names
from aim_core.runtimeconfig.placement import combine_node_affinity, gpu_tolerations
from aim_core.runtimeconfig.resolution import merge_specs
from tests.service.builders import (
    MI300X_IDS,
    NS,
    QWEN,
    ConfigBuilder,
    cluster_config,
    one,
    providers,
    ready_world,
    run,
    service,
)

ZONE = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b"]}
POOL_TAINT = {"key": "example.com/pool", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}


def namespace_config(name: str = "default") -> ConfigBuilder:
    return ConfigBuilder("AIMRuntimeConfig", name, NS)


def predictor(plan: Any) -> dict[str, Any]:
    return one(plan, "InferenceService")["spec"]["predictor"]


def node_terms(pred: dict[str, Any]) -> list[dict[str, Any]]:
    return pred["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


def required(*expressions: dict[str, Any]) -> dict[str, Any]:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
        }
    }


def test_without_placement_fields_a_gpu_pod_gets_the_gpu_affinity_and_tolerates_the_gpu_taint_only() -> None:
    svc = service("chat").model_name(QWEN)
    plan, _ = run(svc, *ready_world(svc))
    pred = predictor(plan)
    assert "nodeSelector" not in pred
    # tolerates amd.com/gpu:NoSchedule (or any effect) because it requests amd.com/gpu, as
    # Kubernetes' ExtendedResourceToleration admission plugin would add
    assert pred["tolerations"] == [{"key": "amd.com/gpu", "operator": "Exists"}]
    assert node_terms(pred)[0]["matchExpressions"] == [
        {"key": "amd.com/gpu.device-id", "operator": "In", "values": MI300X_IDS}
    ]


def test_service_fields_win_over_the_namespace_config_which_wins_over_the_cluster_config_per_field() -> None:
    cluster = cluster_config()
    cluster["spec"].update(
        nodeSelector={"example.com/pool": "cluster", "disk": "ssd"},
        tolerations=[POOL_TAINT],
        affinity={
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}
                ]
            }
        },
    )
    namespaced = namespace_config()
    namespaced["spec"]["nodeSelector"] = {"example.com/pool": "team"}
    svc = service("chat").model_name(QWEN)
    svc["spec"]["tolerations"] = [{"key": "team", "operator": "Exists", "effect": "NoSchedule"}]

    plan, _ = run(svc, *ready_world(svc), cluster, namespaced)
    pred = predictor(plan)
    # the namespace's selector replaces the cluster's whole: no "disk: ssd" merged in
    assert pred["nodeSelector"] == {"example.com/pool": "team"}
    # the service's tolerations replace the configs'; the GPU one is still added
    assert pred["tolerations"] == [
        {"key": "team", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "amd.com/gpu", "operator": "Exists"},
    ]
    # the cluster's affinity (no node part) with the GPU node affinity
    assert pred["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"] == 10
    assert node_terms(pred)[0]["matchExpressions"][0]["key"] == "amd.com/gpu.device-id"
    explain = "\n".join(plan.notes)
    assert f"nodeSelector from AIMRuntimeConfig {NS}/default spec.nodeSelector" in explain
    assert f"tolerations from AIMService {NS}/chat spec.tolerations" in explain
    assert "affinity from AIMClusterRuntimeConfig default spec.affinity" in explain
    assert "toleration amd.com/gpu (Exists) added" in explain


def test_the_users_node_affinity_is_combined_with_the_gpu_affinity_so_both_hold() -> None:
    svc = service("chat").model_name(QWEN)
    svc["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [ZONE]},
                    {"matchExpressions": [{"key": "example.com/spare", "operator": "Exists"}]},
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [ZONE]}}
            ],
        }
    }
    plan, _ = run(svc, *ready_world(svc))
    pred = predictor(plan)
    gpu = {"key": "amd.com/gpu.device-id", "operator": "In", "values": MI300X_IDS}
    # (gpu AND zone) OR (gpu AND spare): never the user's terms alone
    assert node_terms(pred) == [
        {"matchExpressions": [gpu, ZONE]},
        {"matchExpressions": [gpu, {"key": "example.com/spare", "operator": "Exists"}]},
    ]
    assert pred["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 5, "preference": {"matchExpressions": [ZONE]}}
    ]
    assert "combined with the user's (both must hold)" in "\n".join(plan.notes)


def test_a_user_toleration_for_the_gpu_key_wins_over_the_added_one() -> None:
    svc = service("chat").model_name(QWEN)
    mine = {"key": "amd.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    svc["spec"]["tolerations"] = [mine]
    plan, _ = run(svc, *ready_world(svc))
    assert predictor(plan)["tolerations"] == [mine]


def test_a_cpu_only_request_tolerates_no_gpu_taint() -> None:
    assert gpu_tolerations({"requests": {"cpu": "4"}}, {"amd.com/gpu"}) == []
    assert gpu_tolerations({"limits": {"amd.com/gpu": "0"}}, {"amd.com/gpu"}) == []
    assert gpu_tolerations({"limits": {"amd.com/gpu": "1"}}, {"amd.com/gpu"}) == [
        {"key": "amd.com/gpu", "operator": "Exists"}
    ]


@attrs.frozen
class ThirdPartyVendor:
    """A GPU vendor plugin from outside the project, with its own resource."""

    name: str = "acme"
    resource_names: tuple[str, ...] = ("acme.example/npu",)

    def detect(self, node):  # noqa: ANN001
        return [GpuDevice("acme", "N1", 1, "acme.example/npu")] if "acme" in node["metadata"]["name"] else []

    def normalize_model(self, model: str) -> str | None:
        return "N1" if model.upper() == "N1" else None

    def preference(self):  # noqa: ANN201
        return ("N1",)

    def node_affinity_terms(self, model, min_vram_bytes, inventory):  # noqa: ANN001, ANN201
        return None

    def watches_node_key(self, key: str) -> bool:
        return key.startswith("acme.example/")


def test_a_third_party_vendor_says_which_resources_it_owns_and_their_taints_are_tolerated() -> None:
    vendors = (*providers().gpu_vendors, ThirdPartyVendor())
    assert {"amd.com/gpu", "nvidia.com/gpu", "acme.example/npu"} <= gpu_resource_names(vendors)
    chosen = attrs.evolve(providers(), gpu_vendors=vendors)
    svc = service("chat").model_name(QWEN)
    svc["spec"]["resources"] = {"limits": {"acme.example/npu": "1"}}
    plan, _ = run(svc, *ready_world(svc), with_providers=chosen)
    assert predictor(plan)["tolerations"] == [
        {"key": "acme.example/npu", "operator": "Exists"},
        {"key": "amd.com/gpu", "operator": "Exists"},
    ]


def test_namespace_config_replaces_the_cluster_configs_selector_and_affinity_whole() -> None:
    merged = merge_specs(
        {"nodeSelector": {"a": "1", "b": "2"}, "affinity": {"podAffinity": {"x": 1}}},
        {"nodeSelector": {"a": "3"}, "affinity": {"nodeAffinity": {"y": 2}}},
    )
    assert merged == {"nodeSelector": {"a": "3"}, "affinity": {"nodeAffinity": {"y": 2}}}


def test_combining_with_only_one_side_keeps_it() -> None:
    gpu = required({"key": "g", "operator": "Exists"})
    assert combine_node_affinity(gpu, None) == gpu
    assert combine_node_affinity(None, gpu) == gpu
    assert combine_node_affinity(None, None) is None
    preferred = {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [ZONE]}}]
    }
    assert combine_node_affinity(gpu, preferred) == {**gpu, **preferred}
