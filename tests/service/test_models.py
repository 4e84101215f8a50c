"""Model resolution for AIMService (F46, F29, F45, Q9, Q25): names, labels, reasons and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aim_core.reconcile import naming
from aim_core.reconcile.health import Category, State
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import MODELS
from aim_core.service.models import (
    ModelResolution,
    custom_model,
    image_key,
    image_model,
    model_health,
    model_scope,
    resolve_model,
    resolved_reference,
)

NS = "ml-team"
QWEN = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
LLAMA = "amdenterpriseai/aim-meta-llama-llama-3-1-8b-instruct:0.8.5"
DUMMY = "ghcr.io/silogen/aim-dummy:0.1.10"

# ---------------------------------------------------------------- builders


class ServiceBuilder(dict):
    def with_name(self, name: str) -> ServiceBuilder:
        self["spec"]["model"] = {"name": name}
        return self

    def with_image(self, image: str) -> ServiceBuilder:
        self["spec"]["model"] = {"image": image}
        return self

    def with_custom(
        self,
        base_image: str = DUMMY,
        model_id: str = "inline/test-model",
        uri: str = "hf://sshleifer/tiny-gpt2",
        endpoint: str = "",
        gpus: int = 1,
    ) -> ServiceBuilder:
        source: dict[str, Any] = {"modelId": model_id, "sourceUri": uri}
        if endpoint:
            source["env"] = [{"name": "AWS_ENDPOINT_URL", "value": endpoint}]
        self["spec"]["model"] = {
            "custom": {
                "baseImage": base_image,
                "modelSources": [source],
                "hardware": {"gpu": {"requests": gpus, "model": "MI300X"}},
            }
        }
        return self

    def with_spec(self, **fields: Any) -> ServiceBuilder:
        self["spec"].update(fields)
        return self

    def resolved(self, model: dict[str, Any]) -> ServiceBuilder:
        ref = resolved_reference(model)
        assert ref is not None
        self["status"] = {"resolvedModel": ref}
        return self


def make_service(name: str = "svc", namespace: str = NS) -> ServiceBuilder:
    return ServiceBuilder(
        apiVersion="aim.eai.amd.com/v1alpha1",
        kind="AIMService",
        metadata={"name": name, "namespace": namespace, "uid": "svc-uid"},
        spec={},
    )


class ModelBuilder(dict):
    def with_status(self, status: str, message: str = "") -> ModelBuilder:
        self["status"] = {"status": status}
        if message:
            self["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "X", "message": message}]
        return self

    def with_sources(self, *sources: dict[str, Any]) -> ModelBuilder:
        self["spec"]["modelSources"] = list(sources)
        return self


def make_model(name: str, image: str = QWEN, namespace: str | None = NS, status: str = "Ready") -> ModelBuilder:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
    kind = "AIMClusterModel"
    if namespace is not None:
        meta["namespace"] = namespace
        kind = "AIMModel"
    model = ModelBuilder(apiVersion="aim.eai.amd.com/v1alpha1", kind=kind, metadata=meta, spec={"image": image})
    return model.with_status(status) if status else model


def cluster_model(name: str, image: str = QWEN, status: str = "Ready") -> ModelBuilder:
    return make_model(name, image, None, status)


def resolve(service: dict[str, Any], *models: dict[str, Any]) -> ModelResolution:
    """Resolve as the controller would, handing over every model in the shapes it observes."""
    namespaced = [m for m in models if model_scope(m) == "Namespace" and m["metadata"]["namespace"] == NS]
    cluster = [m for m in models if model_scope(m) == "Cluster"]
    wanted = service["spec"]["model"].get("image")
    by_image = [m for m in models if wanted is not None and image_key(m["spec"]["image"]) == image_key(wanted)]
    return resolve_model(
        service,
        {m["metadata"]["name"]: m for m in namespaced},
        {m["metadata"]["name"]: m for m in cluster},
        by_image,
        namespaced,
        {},
    )


# ---------------------------------------------------------------- model.name


@pytest.mark.parametrize(
    ("models", "expected_scope", "expected_name"),
    [
        pytest.param([make_model("qwen")], "Namespace", "qwen", id="namespaced"),
        pytest.param([cluster_model("qwen")], "Cluster", "qwen", id="cluster"),
        pytest.param([cluster_model("qwen", LLAMA), make_model("qwen")], "Namespace", "qwen", id="namespace-first"),
        pytest.param(
            [make_model("qwen", namespace="other"), cluster_model("qwen")],
            "Cluster",
            "qwen",
            id="other-namespace-ignored",
        ),
    ],
)
def test_by_name_prefers_namespace_then_cluster(models, expected_scope, expected_name):
    res = resolve(make_service().with_name(" qwen "), *models)

    assert res.scope == expected_scope
    assert res.model["metadata"]["name"] == expected_name
    assert res.health.ready and res.health.reason == "ModelResolved" and res.health.upstream
    assert res.create is None and res.issue is None


def test_by_name_missing_is_missing_upstream_naming_both_kinds():
    res = resolve(make_service().with_name("nope"), make_model("qwen"))

    assert res.health.state is State.FAILED
    assert res.health.category is Category.MISSING_UPSTREAM
    assert res.health.reason == "ModelNotFound"
    assert "AIMModel 'nope' in namespace 'ml-team'" in res.health.message
    assert "AIMClusterModel 'nope'" in res.health.message
    assert res.issue is not None and res.issue.reason == "ModelNotFound"
    assert res.reference is None and res.create is None


def test_blank_name_is_invalid_spec():
    res = resolve(make_service().with_name("   "))

    assert (res.health.category, res.health.reason) == (Category.INVALID_SPEC, "InvalidSpec")


# ---------------------------------------------------------------- model.image


def test_by_image_single_match_is_used():
    res = resolve(make_service().with_image(f"  {QWEN} "), make_model("my-qwen"), make_model("llama", LLAMA))

    assert res.model["metadata"]["name"] == "my-qwen"
    assert res.health.reason == "ModelResolved"
    assert res.reference == {
        "kind": "AIMModel",
        "name": "my-qwen",
        "namespace": NS,
        "scope": "Namespace",
        "uid": "uid-my-qwen",
    }


def test_by_image_none_plans_unowned_namespaced_model_copying_service_settings():
    service = (
        make_service()
        .with_image(DUMMY)
        .with_spec(runtimeConfigName="team", imagePullSecrets=[{"name": "regcred"}], serviceAccountName="puller")
    )

    res = resolve(service, make_model("other", LLAMA))

    assert res.create == {
        "metadata": {
            "name": "aim-dummy-0-1-10-9bf80281",
            "namespace": NS,
            "labels": {"aim.eai.amd.com/origin": "auto-generated"},
        },
        "spec": {
            "image": DUMMY,
            "runtimeConfigName": "team",
            "imagePullSecrets": [{"name": "regcred"}],
            "serviceAccountName": "puller",
        },
    }
    assert res.health.state is State.PENDING
    assert res.health.reason == "CreatingModel"
    assert res.health.category is None
    assert res.health.message == f"creating AIMModel {NS}/aim-dummy-0-1-10-9bf80281 for image {DUMMY!r}"
    assert res.model is None and res.reference is None and res.issue is None

    plan = Plan()
    res.contribute(plan)
    assert plan.components["Model"] == res.health
    assert [(d.resource, d.owned, d.obj["metadata"]["name"]) for d in plan.apply] == [
        (MODELS, False, "aim-dummy-0-1-10-9bf80281")
    ]
    assert plan.issues == []


def test_by_image_minimal_service_copies_nothing_else():
    created = image_model(make_service().with_image(QWEN), QWEN)

    assert created["spec"] == {"image": QWEN}
    assert created["metadata"]["name"] == naming.model_name_from_image(QWEN)


def test_by_image_namespace_match_wins_over_cluster_matches():
    res = resolve(make_service().with_image(QWEN), cluster_model("c1"), cluster_model("c2"), make_model("mine"))

    assert (res.scope, res.model["metadata"]["name"]) == ("Namespace", "mine")


def test_by_image_single_cluster_match_is_used():
    res = resolve(make_service().with_image(QWEN), cluster_model("qwen-cluster"))

    assert res.scope == "Cluster"
    assert res.reference == {
        "kind": "AIMClusterModel",
        "name": "qwen-cluster",
        "scope": "Cluster",
        "uid": "uid-qwen-cluster",
    }


@pytest.mark.parametrize(
    ("models", "where", "names"),
    [
        pytest.param(
            [make_model("b"), make_model("a"), cluster_model("c")], "namespace 'ml-team'", "a, b", id="namespace"
        ),
        pytest.param([cluster_model("y"), cluster_model("x")], "the cluster", "x, y", id="cluster"),
    ],
)
def test_by_image_several_in_deciding_scope_is_ambiguous(models, where, names):
    res = resolve(make_service().with_image(QWEN), *models)

    assert res.health.state is State.FAILED
    assert (res.health.category, res.health.reason) == (Category.INVALID_SPEC, "AmbiguousModelImage")
    assert f"in {where} ({names})" in res.health.message
    assert "spec.model.name" in res.health.message
    assert res.issue is not None and res.create is None


def test_models_of_other_namespaces_are_not_image_matches():
    res = resolve(make_service().with_image(QWEN), make_model("elsewhere", namespace="other"))

    assert res.health.reason == "CreatingModel"


@pytest.mark.parametrize("image", ["", "   ", "repo/name:", "repo/name@sha256:xyz"])
def test_unusable_image_is_invalid_image_reference(image):
    res = resolve(make_service().with_image(image))

    assert res.health.state is State.FAILED
    assert (res.health.category, res.health.reason) == (Category.INVALID_SPEC, "InvalidImageReference")
    assert "invalid image reference" in res.health.message
    assert res.create is None and res.issue is not None


def test_auto_name_held_by_a_different_model_is_not_overwritten():
    squatter = make_model(naming.model_name_from_image(DUMMY), image=LLAMA)

    res = resolve(make_service().with_image(DUMMY), squatter)

    assert (res.health.category, res.health.reason) == (Category.INVALID_SPEC, "ModelNameConflict")
    assert res.create is None


def test_creating_model_found_not_ready_reports_model_not_ready():
    auto = make_model(naming.model_name_from_image(DUMMY), image=DUMMY, status="Progressing")

    res = resolve(make_service().with_image(DUMMY), auto)

    assert res.create is None
    assert (res.health.state, res.health.reason) == (State.PENDING, "ModelNotReady")
    assert res.reference is None


# ---------------------------------------------------------------- sticky resolution (F45)


def test_recorded_model_is_kept_while_ready_even_when_duplicates_appear():
    used = cluster_model("qwen-cluster")
    service = make_service().with_image(QWEN).resolved(used)

    res = resolve(service, used, make_model("dup-1"), make_model("dup-2"))

    assert (res.scope, res.model["metadata"]["name"]) == ("Cluster", "qwen-cluster")
    assert res.health.reason == "ModelResolved"


def test_recorded_model_is_dropped_when_not_ready_or_replaced():
    used = cluster_model("qwen-cluster", status="Failed")
    service = make_service().with_image(QWEN).resolved(cluster_model("qwen-cluster"))

    assert resolve(service, used, make_model("mine")).model["metadata"]["name"] == "mine"

    replaced = cluster_model("qwen-cluster")
    replaced["metadata"]["uid"] = "new-uid"
    assert resolve(service, replaced, make_model("mine")).model["metadata"]["name"] == "mine"


# ---------------------------------------------------------------- model.custom (F29)


def test_custom_none_plans_labelled_unowned_model_from_the_inline_definition():
    service = (
        make_service("chat")
        .with_custom()
        .with_spec(
            runtimeConfigName="team",
            imagePullSecrets=[{"name": "regcred"}],
            serviceAccountName="sa",
            env=[{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        )
    )

    res = resolve(service, make_model("unrelated", DUMMY))

    assert res.health.reason == "CreatingModel"
    assert res.create == {
        "metadata": {
            "name": "inline-test-model-2cfa2a00",
            "namespace": NS,
            "labels": {
                "aim.eai.amd.com/origin": "auto-generated",
                "aim.eai.amd.com/custom-model": "true",
                "aim.eai.amd.com/service": "chat",
            },
        },
        "spec": {
            "image": DUMMY,
            "modelSources": [{"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2"}],
            "custom": {"hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
            "runtimeConfigName": "team",
            "imagePullSecrets": [{"name": "regcred"}],
            "serviceAccountName": "sa",
            "env": [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}],
        },
    }


def _existing_custom(name: str, endpoint: str = "", image: str = DUMMY, status: str = "Ready") -> ModelBuilder:
    source: dict[str, Any] = {"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2", "size": "1Gi"}
    if endpoint:
        source["env"] = [{"name": "AWS_ENDPOINT_URL", "value": endpoint}]
    return make_model(name, image, status=status).with_sources(source)


@pytest.mark.parametrize(
    ("existing", "service_endpoint", "reused"),
    [
        pytest.param(_existing_custom("hand-made"), "", True, id="same-sources"),
        pytest.param(
            _existing_custom("hand-made", endpoint="http://minio:9000"), "http://minio:9000", True, id="same-endpoint"
        ),
        pytest.param(_existing_custom("hand-made", endpoint="http://minio:9000"), "", False, id="endpoint-differs"),
        pytest.param(_existing_custom("hand-made", image=QWEN), "", False, id="image-differs"),
    ],
)
def test_custom_reuses_a_model_with_same_image_and_sources(existing, service_endpoint, reused):
    res = resolve(make_service().with_custom(endpoint=service_endpoint), existing)

    if reused:
        assert res.model["metadata"]["name"] == "hand-made" and res.create is None
    else:
        assert res.model is None and res.create is not None
        assert res.health.reason == "CreatingModel"


def test_custom_prefers_the_model_it_would_have_created():
    auto = _existing_custom("inline-test-model-2cfa2a00", status="Progressing")

    res = resolve(make_service().with_custom(), _existing_custom("aaa-first"), auto)

    assert res.model["metadata"]["name"] == "inline-test-model-2cfa2a00"
    assert res.health.reason == "ModelNotReady"


def test_custom_cluster_models_never_match():
    cluster = cluster_model("c", DUMMY).with_sources(
        {"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2"}
    )

    assert resolve(make_service().with_custom(), cluster).create is not None


def test_custom_with_endpoint_hashes_endpoint_into_the_name():
    created = custom_model(make_service().with_custom(endpoint="http://minio:9000"))

    keys = [naming.ModelSourceKey("inline/test-model", "hf://sshleifer/tiny-gpt2", "http://minio:9000")]
    assert created["metadata"]["name"] == naming.custom_model_name(DUMMY, keys)
    assert created["metadata"]["name"] != "inline-test-model-2cfa2a00"


def test_custom_without_sources_is_invalid_spec():
    service = make_service().with_custom()
    service["spec"]["model"]["custom"]["modelSources"] = []

    res = resolve(service)

    assert (res.health.category, res.health.reason) == (Category.INVALID_SPEC, "InvalidSpec")


def test_custom_bad_base_image_is_invalid_image_reference():
    assert resolve(make_service().with_custom(base_image="repo:")).health.reason == "InvalidImageReference"


def test_custom_auto_name_held_by_a_different_model_conflicts():
    squatter = make_model("inline-test-model-2cfa2a00", DUMMY).with_sources(
        {"modelId": "inline/other", "sourceUri": "hf://other/model"}
    )

    assert resolve(make_service().with_custom(), squatter).health.reason == "ModelNameConflict"


# ---------------------------------------------------------------- health and references


@pytest.mark.parametrize(
    ("status", "state", "reason"),
    [
        ("Ready", State.READY, "ModelResolved"),
        ("Pending", State.PENDING, "ModelNotReady"),
        ("Progressing", State.PENDING, "ModelNotReady"),
        ("", State.PENDING, "ModelNotReady"),
        ("Failed", State.FAILED, "ModelNotReady"),
        ("Degraded", State.FAILED, "ModelNotReady"),
        ("NotAvailable", State.NOT_AVAILABLE, "ModelNotReady"),
    ],
)
def test_model_health_maps_model_status(status, state, reason):
    health = model_health(make_model("qwen", status=status))

    assert (health.state, health.reason, health.upstream) == (state, reason, True)
    assert health.category is None  # a not-ready model never blocks the service's writes


def test_model_health_message_carries_the_models_own_explanation():
    model = make_model("qwen").with_status("Failed", "image metadata could not be read")

    assert model_health(model).message == f"AIMModel {NS}/qwen is Failed: image metadata could not be read"
    assert model_health(cluster_model("q", status="")).message == "AIMClusterModel q is not reconciled yet"


def test_reference_only_when_ready():
    assert resolved_reference(make_model("qwen", status="Progressing")) is None
    no_uid = copy.deepcopy(cluster_model("c"))
    del no_uid["metadata"]["uid"]
    assert resolved_reference(no_uid) == {"kind": "AIMClusterModel", "name": "c", "scope": "Cluster"}


def test_scope_without_kind_falls_back_to_namespace():
    model = make_model("qwen")
    del model["kind"]
    cluster = cluster_model("c")
    del cluster["kind"]

    assert (model_scope(model), model_scope(cluster)) == ("Namespace", "Cluster")


def test_image_key_is_the_trimmed_exact_string():
    assert image_key(f"\t{QWEN} \n") == QWEN
    assert image_key("Docker.io/Foo:1") == "Docker.io/Foo:1"
