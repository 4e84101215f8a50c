"""Private model images (issue 20): the inference pod pulls with the model's and template's secrets as well as the
service's, and runs as the template's or model's service account when the service names none."""

from __future__ import annotations

from typing import Any

from tests.service.builders import QWEN, one, ready_world, run, service


def predictor(plan: Any) -> dict[str, Any]:
    return one(plan, "InferenceService")["spec"]["predictor"]


def world(svc, *, model_spec=None, template_spec=None):
    model, tpl, cache = ready_world(svc)
    model["spec"].update(model_spec or {})
    tpl["spec"].update(template_spec or {})
    return model, tpl, cache


def test_model_and_template_pull_secrets_are_merged_with_the_services_deduplicated_by_name() -> None:
    svc = service("chat").model_name(QWEN)
    svc["spec"]["imagePullSecrets"] = [{"name": "team-pull"}, {"name": "shared"}]
    objects = world(
        svc,
        model_spec={"imagePullSecrets": [{"name": "vendor-pull"}, {"name": "shared"}]},
        template_spec={"imagePullSecrets": [{"name": "shared"}, {"name": "tpl-pull"}]},
    )
    plan, _ = run(svc, *objects)
    assert predictor(plan)["imagePullSecrets"] == [
        {"name": "team-pull"},
        {"name": "shared"},
        {"name": "tpl-pull"},
        {"name": "vendor-pull"},
    ]
    assert "pull secrets: vendor-pull, shared from model qwen3-32b" in plan.notes


def test_a_private_model_alone_gives_its_secret_to_the_pod() -> None:
    svc = service("chat").model_name(QWEN)
    plan, _ = run(svc, *world(svc, model_spec={"imagePullSecrets": [{"name": "vendor-pull"}]}))
    assert predictor(plan)["imagePullSecrets"] == [{"name": "vendor-pull"}]


def test_service_account_is_the_services_else_the_templates_else_the_models() -> None:
    svc = service("chat").model_name(QWEN)
    plan, _ = run(svc, *world(svc, model_spec={"serviceAccountName": "model-sa"}))
    assert predictor(plan)["serviceAccountName"] == "model-sa"
    plan, _ = run(
        svc, *world(svc, model_spec={"serviceAccountName": "model-sa"}, template_spec={"serviceAccountName": "tpl-sa"})
    )
    assert predictor(plan)["serviceAccountName"] == "tpl-sa"
    assert "service account: tpl-sa from template" in "\n".join(plan.notes)
    svc["spec"]["serviceAccountName"] = "own-sa"
    plan, _ = run(svc, *world(svc, template_spec={"serviceAccountName": "tpl-sa"}))
    assert predictor(plan)["serviceAccountName"] == "own-sa"


def test_without_any_the_pod_names_no_secret_and_no_account() -> None:
    svc = service("chat").model_name(QWEN)
    plan, _ = run(svc, *ready_world(svc))
    assert "imagePullSecrets" not in predictor(plan) and "serviceAccountName" not in predictor(plan)
