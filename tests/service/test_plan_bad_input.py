"""Bad input to the service plan: every case ends in a condition a user can act on, never an exception.

One table row per mistake: what the service and cluster hold, the root status,
the ``Ready`` reason and a fragment of its message, the condition that names the
cause, which status references are written, and what the engine would apply
(nothing at all when an issue blocks, F10).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from aim_core.reconcile import status as statusing
from aim_core.runtime.applyset import needs_apply
from aim_core.service.observed import Providers
from aim_core.service.plan import plan_service
from tests.service.builders import (
    IMAGE,
    QWEN,
    QWEN_TEMPLATE,
    cluster_config,
    cluster_template,
    condition,
    controller,
    drift,
    kinds,
    live,
    model,
    observed,
    pod,
    prepared,
    providers,
    qwen_model,
    qwen_template,
    ready_cache,
    ready_world,
    run,
    service,
    status_of,
)

REFS = ("resolvedModel", "resolvedTemplate", "cache")


@attrs.frozen
class Case:
    """A bad input and what the user sees."""

    make: Callable[[], tuple[Any, list[Any], dict[str, Any]]]  # -> service, objects, observed() keywords
    root: str
    ready: str  # Ready reason
    says: str  # in the Ready message
    cause: tuple[str, str] | None  # (condition type, reason) naming the cause
    sends: tuple[str, ...] = ()  # kinds the engine would apply
    refs: tuple[str, ...] = ()  # status references written


def _svc(**kw: Any) -> Any:
    svc = service("chat").model_name(QWEN)
    for key, value in kw.items():
        getattr(svc, key)(*value) if isinstance(value, tuple) else getattr(svc, key)(value)
    return svc


def world(svc: Any, *extra: Any, **observe: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    return svc, [*ready_world(svc), *extra], observe


def with_objects(svc: Any, *objects: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    return svc, list(objects), {}


def long_namespace() -> tuple[Any, list[Any], dict[str, Any]]:
    svc = service("chat", namespace="team-" + "x" * 40).model_name(QWEN)  # 45 characters
    tpl = qwen_template()
    return svc, [qwen_model(), tpl, ready_cache(svc, tpl)], {}


def no_runtime_builder() -> tuple[Any, list[Any], dict[str, Any]]:
    p = providers()
    without = Providers(
        route=p.route,
        autoscaler=p.autoscaler,
        gpu_vendors=p.gpu_vendors,
        missing={"aim_runtime_builders": "no plugin provides aim_runtime_builders; is the kserve plugin installed?"},
    )
    return world(_svc(), with_providers=without)


def malformed(field: str, value: Any) -> Callable[[], tuple[Any, list[Any], dict[str, Any]]]:
    def make() -> tuple[Any, list[Any], dict[str, Any]]:
        svc = _svc()
        svc["spec"][field] = value
        return world(svc)

    return make


def negative_headroom() -> Any:
    config = cluster_config()
    config["spec"]["pvcHeadroomPercent"] = -5
    return config


def cluster_model_in(state: str, message: str = "") -> Any:
    return qwen_model().status(state, message)


ALL_REFS = REFS
CASES: dict[str, Case] = {
    # ---- missing references: Failed, nothing applied
    "model-name-missing": Case(
        lambda: world(_svc(model_name="llama-4")),
        "Failed",
        "ReferenceNotFound",
        "model 'llama-4' not found",
        ("ModelReady", "ModelNotFound"),
    ),
    "template-name-missing": Case(
        lambda: world(_svc(template_name="qwen-mi999")),
        "Failed",
        "ReferenceNotFound",
        "template 'qwen-mi999' not found",
        ("TemplateReady", "TemplateNotFound"),
        refs=("resolvedModel",),
    ),
    "runtime-config-missing": Case(
        lambda: world(_svc(runtime_config="team-x")),
        "Failed",
        "ReferenceNotFound",
        "runtime config 'team-x' not found",
        ("RuntimeConfigReady", "ReferenceNotFound"),
        refs=ALL_REFS,
    ),
    "runtime-config-with-a-negative-headroom": Case(  # stored before the schema refused it
        lambda: world(_svc(), negative_headroom()),
        "Failed",
        "InvalidSpec",
        "AIMClusterRuntimeConfig default spec.pvcHeadroomPercent: -5 is negative",
        ("RuntimeConfigReady", "InvalidSpec"),
        refs=ALL_REFS,
    ),
    # ---- routing
    "routing-without-gateway-on-service": Case(
        lambda: world(_svc(routing=True)),
        "Failed",
        "InvalidSpec",
        "no gateway is configured",
        ("HTTPRouteReady", "GatewayNotConfigured"),
        refs=ALL_REFS,
    ),
    "routing-without-gateway-in-config": Case(
        lambda: world(_svc(), cluster_config().routing(gateway=None)),
        "Failed",
        "InvalidSpec",
        "no gateway is configured",
        ("HTTPRouteReady", "GatewayNotConfigured"),
        refs=ALL_REFS,
    ),
    "path-template-invalid": Case(
        lambda: world(_svc(), cluster_config().routing(pathTemplate="/{.metadata.labels['team']}")),
        "Degraded",
        "PathTemplateInvalid",
        "has no key 'labels'",
        ("HTTPRouteReady", "PathTemplateInvalid"),
        sends=("InferenceService",),
        refs=ALL_REFS,
    ),  # serving goes on; no route on a path nobody asked for
    "request-timeout-invalid": Case(
        lambda: world(_svc(), cluster_config().routing(requestTimeout="soon")),
        "Degraded",
        "InvalidRequestTimeout",
        "request timeout 'soon'",
        ("HTTPRouteReady", "InvalidRequestTimeout"),
        sends=("InferenceService",),
        refs=ALL_REFS,
    ),
    # ---- templates
    "override-gpu-not-in-cluster": Case(
        lambda: world(_svc().overrides(gpu="MI325X")),
        "Pending",
        "Progressing",
        "spec.overrides (GPU MI325X)",
        ("TemplateReady", "TemplateNotFound"),
        refs=("resolvedModel",),
    ),
    "template-not-available-by-name": Case(
        lambda: with_objects(
            _svc(template_name=QWEN_TEMPLATE),
            qwen_model(),
            qwen_template().status("NotAvailable", "no MI300X node has a free GPU"),
        ),
        "Pending",
        "TemplateNotReady",
        f"{QWEN_TEMPLATE} is NotAvailable",
        ("TemplateReady", "TemplateNotReady"),
        refs=("resolvedModel",),
    ),
    "template-not-available-auto": Case(
        lambda: with_objects(_svc(), qwen_model(), qwen_template().status("NotAvailable")),
        "Pending",
        "Progressing",
        f"{QWEN_TEMPLATE} (NotAvailable)",
        ("TemplateReady", "TemplateNotReady"),
        refs=("resolvedModel",),
    ),
    "template-failed-by-name": Case(
        lambda: with_objects(
            _svc(template_name=QWEN_TEMPLATE), qwen_model(), qwen_template().status("Failed", "discovery job failed")
        ),
        "Failed",
        "TemplateNotReady",
        "discovery job failed",
        ("TemplateReady", "TemplateNotReady"),
        refs=("resolvedModel",),
    ),
    # ---- models
    "model-failed": Case(
        lambda: with_objects(_svc(), cluster_model_in("Failed", "image not found"), qwen_template()),
        "Failed",
        "ModelNotReady",
        "image not found",
        ("ModelReady", "ModelNotReady"),
        sends=("AIMTemplateCache",),
        refs=("resolvedTemplate",),
    ),
    "model-degraded": Case(
        lambda: with_objects(_svc(), cluster_model_in("Degraded"), qwen_template()),
        "Failed",
        "ModelNotReady",
        "is Degraded",
        ("ModelReady", "ModelNotReady"),
        sends=("AIMTemplateCache",),
        refs=("resolvedTemplate",),
    ),
    "model-name-and-image": Case(  # the CRD's CEL rule; an object written around it must not pick one silently
        lambda: world(service("chat").model_name(QWEN).model_image(IMAGE)),
        "Failed",
        "InvalidSpec",
        "exactly one of name, image or custom",
        ("ModelReady", "InvalidSpec"),
    ),
    "model-image-ambiguous": Case(
        lambda: with_objects(
            service("chat").model_image(IMAGE), model("qwen-a").ready(), model("qwen-b").ready(), qwen_template()
        ),
        "Failed",
        "InvalidSpec",
        "(qwen-a, qwen-b)",
        ("ModelReady", "AmbiguousModelImage"),
    ),
    # ---- names and env
    "namespace-too-long": Case(
        long_namespace,
        "Failed",
        "InvalidSpec",
        "is too long (45 chars)",
        ("InferenceServiceReady", "NamespaceTooLong"),
        refs=ALL_REFS,
    ),
    "engine-args-not-json": Case(
        lambda: world(_svc(env=("AIM_ENGINE_ARGS", "{max-model-len: 8192}"))),
        "Failed",
        "InvalidSpec",
        "AIM_ENGINE_ARGS in AIMService ml-team/chat spec.env is not valid JSON",
        ("InferenceServiceReady", "InvalidEngineArgs"),
        refs=ALL_REFS,
    ),
    "engine-args-not-an-object": Case(
        lambda: world(_svc(env=("AIM_ENGINE_ARGS", '["--max-model-len", "8192"]'))),
        "Failed",
        "InvalidSpec",
        "is JSON but not an object",
        ("InferenceServiceReady", "InvalidEngineArgs"),
        refs=ALL_REFS,
    ),
    "engine-args-before-the-cache-exists": Case(  # no shared cache is created for a service that cannot run
        lambda: with_objects(_svc(env=("AIM_ENGINE_ARGS", "{bad")), qwen_model(), qwen_template()),
        "Failed",
        "InvalidSpec",
        "is not valid JSON",
        ("InferenceServiceReady", "InvalidEngineArgs"),
        refs=("resolvedModel", "resolvedTemplate"),
    ),
    "engine-args-in-runtime-config": Case(
        lambda: world(_svc(), cluster_config().env("AIM_ENGINE_ARGS", "max-model-len=8192")),
        "Failed",
        "InvalidSpec",
        "runtime config 'default' env",
        ("InferenceServiceReady", "InvalidEngineArgs"),
        refs=ALL_REFS,
    ),
    # ---- plugins
    "no-runtime-builder": Case(
        no_runtime_builder,
        "Failed",
        "InvalidSpec",
        "is the kserve plugin installed?",
        ("InferenceServiceReady", "RuntimeBuilderMissing"),
        refs=ALL_REFS,
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_bad_input_ends_in_a_condition(case: str) -> None:
    expected = CASES[case]
    svc, objects, observe = expected.make()

    plan = plan_service(svc, observed(svc, *objects, **observe))
    status = status_of(svc, plan)

    assert status["status"] == expected.root
    ready = condition(status, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", expected.ready)
    assert expected.says in ready["message"]
    if expected.cause is not None:
        cause = condition(status, expected.cause[0])
        assert cause is not None, f"no {expected.cause[0]} condition"
        assert (cause["status"], cause["reason"]) == ("False", expected.cause[1])
        assert expected.says in cause["message"] or cause["message"] in ready["message"]
    assert len(set(plan.issues)) == len(plan.issues), "an issue is reported twice"
    sent = kinds(plan) if statusing.should_apply(plan.issues) else []
    assert tuple(sent) == expected.sends
    assert tuple(k for k in REFS if k in status) == expected.refs


def test_an_impossible_gpu_override_on_a_template_naming_no_gpu_names_the_override() -> None:
    svc = _svc().overrides(gpu="MI325X")
    tpl = qwen_template()
    del tpl["spec"]["hardware"], tpl["status"]["profile"]["metadata"]["gpu"]

    status = status_of(svc, plan_service(svc, observed(svc, qwen_model(), tpl)))

    assert status["status"] == "Pending"
    assert condition(status, "TemplateReady")["reason"] == "TemplateNotFound"
    assert (
        "spec.overrides asks for GPU MI325X, which is not in the cluster (found: MI300X)"
        in condition(status, "Ready")["message"]
    )


def test_an_edited_inference_service_is_set_back_to_exactly_the_desired_values() -> None:
    svc = _svc()
    objects = ready_world(svc)
    desired = prepared(plan_service(svc, observed(svc, *objects)), svc, "InferenceService")
    edited = live(desired, ready=True)
    predictor = edited["spec"]["predictor"]
    predictor["containers"][0]["image"] = "docker.io/someone/vllm:debug"
    predictor["containers"][0]["env"].append({"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"})
    predictor["minReplicas"] = predictor["maxReplicas"] = 4

    plan = plan_service(svc, observed(svc, *objects, runtime=edited, pods=[pod(edited["metadata"]["name"])]))
    again = prepared(plan, svc, "InferenceService")

    assert again == desired  # the plan does not learn from the live object (apart from storage, Q16)
    assert drift(again, edited) == {
        ("spec", "predictor", "containers", 0, "image"),
        ("spec", "predictor", "containers", 0, "env"),
        ("spec", "predictor", "minReplicas"),
        ("spec", "predictor", "maxReplicas"),
    }
    assert needs_apply(again, edited, controller().field_manager)


def test_an_inference_service_stripped_of_owner_and_labels_is_relabelled() -> None:
    svc = _svc().labels(**{"example.com/team": "nlp"})
    objects = (*ready_world(svc), cluster_config().propagate("example.com/*"))
    desired = prepared(plan_service(svc, observed(svc, *objects)), svc, "InferenceService")
    stripped = live(desired, ready=True)
    del stripped["metadata"]["ownerReferences"]
    stripped["metadata"]["labels"] = {"app.kubernetes.io/component": "inference"}

    plan = plan_service(svc, observed(svc, *objects, runtime=stripped))
    again = prepared(plan, svc, "InferenceService")

    assert again["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "name": "chat",
            "uid": svc["metadata"]["uid"],
            "controller": True,
        }
    ]
    assert again["metadata"]["labels"]["aim.eai.amd.com/service.name"] == "chat"
    assert again["metadata"]["labels"]["aim.eai.amd.com/service"] == "chat"
    assert again["metadata"]["labels"]["example.com/team"] == "nlp"  # propagated by the runtime config
    assert drift(again, stripped) == {
        ("metadata", "ownerReferences"),
        *(("metadata", "labels", k) for k in again["metadata"]["labels"] if k != "app.kubernetes.io/component"),
    }
    assert needs_apply(again, stripped, controller().field_manager)


def test_inputs_are_not_mutated_by_planning() -> None:
    svc = _svc(routing=True).scaling(1, 2)
    objects = list(world(svc)[1])
    before = copy.deepcopy((svc, objects))

    plan_service(svc, observed(svc, *objects))

    assert (svc, objects) == before


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("replicas", "many", "$.spec.replicas"),
        ("minReplicas", "two", "$.spec.minReplicas"),
        ("model", QWEN, "$.spec.model"),
        ("template", QWEN_TEMPLATE, "$.spec.template"),
        ("env", {"VLLM_LOGGING_LEVEL": "DEBUG"}, "$.spec.env"),
        ("routing", "on", "$.spec.routing"),
        ("resources", {"requests": "4 GPUs"}, "$.spec.resources"),
        ("overrides", {"hardware": {"gpu": {"requests": "four"}}}, "$.spec.overrides"),
    ],
)
def test_a_spec_the_schema_would_reject_is_invalid_spec_not_an_exception(field: str, value: Any, path: str) -> None:
    """Objects from an older CRD (or written around validation) reach the plan; it must not crash on them."""
    svc, objects, _ = malformed(field, value)()

    plan = plan_service(svc, observed(svc, *objects))
    status = status_of(svc, plan)

    assert status["status"] == "Failed"
    ready = condition(status, "Ready")
    assert ready["reason"] == "InvalidSpec"
    assert path in ready["message"]
    assert not statusing.should_apply(plan.issues)


def test_breaking_the_engine_args_of_a_running_service_stops_updates_and_says_why() -> None:
    svc = _svc()
    objects = ready_world(svc)
    running = live(prepared(plan_service(svc, observed(svc, *objects)), svc, "InferenceService"), ready=True)
    svc.env("AIM_ENGINE_ARGS", "--max-model-len 8192")

    plan = plan_service(svc, observed(svc, *objects, runtime=running, pods=[pod(running["metadata"]["name"])]))
    status = status_of(svc, plan)

    assert status["status"] == "Failed"
    ready = condition(status, "Ready")
    assert ready["reason"] == "InvalidSpec"
    assert "AIM_ENGINE_ARGS in AIMService ml-team/chat spec.env is not valid JSON" in ready["message"]
    assert condition(status, "ConfigValid")["reason"] == "InvalidSpec"
    # the running deployment is left as it is (its own health is still reported)
    assert not statusing.should_apply(plan.issues)
    assert condition(status, "InferenceServiceReady")["reason"] == "RuntimeReady"


def test_explicit_template_of_another_model_is_rejected_before_anything_runs():
    svc = service("chat").model_name(QWEN).template_name("llama-fp8")
    other = cluster_template("llama-fp8", model="llama-3-1-8b").ready().gpu("MI300X", 1).optimized()
    plan, status = run(svc, qwen_model(), other)
    assert status["status"] == "Failed"
    assert condition(status, "TemplateReady")["reason"] == "TemplateModelMismatch"
    assert "serves model 'llama-3-1-8b'" in condition(status, "TemplateReady")["message"]
    assert "resolvedTemplate" not in status
    assert kinds(plan) == []
