"""AIMModel.spec.defaultServiceTemplate (issue 20): a service that names no template uses its model's default
instead of auto-selection, says so, and reports a missing or not-Ready default instead of replacing it."""

from __future__ import annotations

from tests.service.builders import QWEN, condition, one, qwen_model, qwen_template, ready_cache, run, service


def model_with_default(name: str):
    model = qwen_model()
    model["spec"]["defaultServiceTemplate"] = name
    return model


def served(plan) -> str:
    return one(plan, "InferenceService")["metadata"]["labels"]["aim.eai.amd.com/template"]


def test_the_models_default_wins_over_a_better_ranked_template() -> None:
    svc = service("chat").model_name(QWEN)
    best, default = qwen_template("a-best"), qwen_template("b-default").metric("throughput")
    plan, status = run(svc, model_with_default("b-default"), best, default, ready_cache(svc, default))
    assert served(plan) == "b-default"
    assert status["resolvedTemplate"]["name"] == "b-default"
    assert (
        "default template 'b-default' of AIMClusterModel qwen3-32b (spec.defaultServiceTemplate)"
        in condition(status, "TemplateReady")["message"]
    )


def test_a_missing_default_is_reported_not_replaced_by_auto_selection() -> None:
    svc = service("chat").model_name(QWEN)
    plan, status = run(svc, model_with_default("gone"), qwen_template("a-best"))
    assert not [d for d in plan.apply if d.resource.kind == "InferenceService"]
    ready = condition(status, "TemplateReady")
    assert ready["status"] == "False" and ready["reason"] == "TemplateNotFound"
    assert "default template 'gone'" in ready["message"]
    assert status["status"] == "Failed"


def test_a_default_that_is_not_ready_is_waited_for() -> None:
    svc = service("chat").model_name(QWEN)
    plan, status = run(
        svc, model_with_default("b-default"), qwen_template("a-best"), qwen_template("b-default").status("Progressing")
    )
    assert not [d for d in plan.apply if d.resource.kind == "InferenceService"]
    assert condition(status, "TemplateReady")["status"] == "False"
    assert "b-default" in condition(status, "TemplateReady")["message"]
    assert "resolvedTemplate" not in status


def test_a_template_named_by_the_service_wins_over_the_models_default() -> None:
    svc = service("chat").model_name(QWEN).template_name("a-best")
    best = qwen_template("a-best")
    plan, _ = run(svc, model_with_default("b-default"), best, qwen_template("b-default"), ready_cache(svc, best))
    assert served(plan) == "a-best"
