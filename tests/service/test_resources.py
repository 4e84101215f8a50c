"""Container resources from every layer (issue 20): the model's baseline, the template's CPU requirement, a
CPU-only template, and overrides.hardware.cpu through the derived template."""

from __future__ import annotations

from typing import Any

from aim_core.service.overrides import derived_template
from aim_core.service.templates import Scope
from tests.service.builders import (
    QWEN,
    QWEN_SOURCE,
    cluster_template,
    one,
    qwen_model,
    ready_cache,
    ready_world,
    run,
    service,
)


def container(plan: Any) -> dict[str, Any]:
    return one(plan, "InferenceService")["spec"]["predictor"]["containers"][0]


def test_the_models_resources_are_a_baseline_under_the_template_and_the_service() -> None:
    svc = service("chat").model_name(QWEN)
    svc["spec"]["resources"] = {"limits": {"cpu": "16"}}
    model, tpl, cache = ready_world(svc)
    model["spec"]["resources"] = {
        "requests": {"memory": "40Gi", "ephemeral-storage": "50Gi"},
        "limits": {"memory": "60Gi", "cpu": "8"},
    }
    tpl["spec"]["resources"] = {"limits": {"memory": "80Gi"}}
    plan, _ = run(svc, model, tpl, cache)
    assert container(plan)["resources"] == {
        # per-GPU default cpu 4; model memory 40Gi and ephemeral storage; GPU from the template
        "requests": {"cpu": "4", "memory": "40Gi", "amd.com/gpu": "1", "ephemeral-storage": "50Gi"},
        # template memory over the model's; service cpu over the model's
        "limits": {"memory": "80Gi", "amd.com/gpu": "1", "cpu": "16"},
    }


def test_the_templates_cpu_requirement_reaches_the_container() -> None:
    svc = service("chat").model_name(QWEN)
    model, tpl, cache = ready_world(svc)
    tpl["spec"]["hardware"]["cpu"] = {"requests": "12", "limits": "24"}
    plan, _ = run(svc, model, tpl, cache)
    resources = container(plan)["resources"]
    assert resources["requests"]["cpu"] == "12" and resources["limits"]["cpu"] == "24"
    assert resources["requests"]["amd.com/gpu"] == "1"


def test_a_cpu_only_template_runs_with_no_gpu_request_affinity_or_toleration() -> None:
    svc = service("chat").model_name(QWEN).template_name("qwen-cpu")
    tpl = cluster_template("qwen-cpu", QWEN).ready().optimized().sources(QWEN_SOURCE)
    tpl["spec"]["hardware"] = {"cpu": {"requests": "16", "limits": "32"}}
    tpl["status"]["resolvedHardware"] = {"cpu": {"requests": "16", "limits": "32"}}
    plan, _ = run(svc, qwen_model(), tpl, ready_cache(svc, tpl))
    predictor = one(plan, "InferenceService")["spec"]["predictor"]
    assert predictor["containers"][0]["resources"] == {"requests": {"cpu": "16"}, "limits": {"cpu": "32"}}
    assert "affinity" not in predictor and "tolerations" not in predictor


def test_overrides_hardware_cpu_is_carried_into_the_derived_template() -> None:
    svc = service("chat").model_name(QWEN)
    svc["spec"]["overrides"] = {"hardware": {"cpu": {"requests": "20"}}}
    _, tpl, _ = ready_world(svc)
    derived = derived_template(tpl, Scope.CLUSTER, svc, svc["spec"]["overrides"], True)
    assert derived["spec"]["hardware"]["cpu"] == {"requests": "20"}
    assert derived["spec"]["hardware"]["gpu"]["model"] == "MI300X"
