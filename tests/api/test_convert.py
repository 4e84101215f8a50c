"""The converter: wire names, omit-unset, strict JSON types and error paths."""

import copy

import pytest

from aim_core.api import (
    AIMArtifact,
    AIMGpuRequirements,
    AIMService,
    AIMServiceModel,
    AIMServiceSpec,
    AIMServiceStatus,
    ModelError,
    ResourceRequirements,
    parse,
    structure,
    unstructure,
)

V = "aim.eai.amd.com/v1alpha1"


def service(**spec):
    return {
        "apiVersion": V,
        "kind": "AIMService",
        "metadata": {"name": "svc", "namespace": "ns"},
        "spec": {"model": {"name": "m"}, **spec},
    }


def errors_of(document) -> list[str]:
    with pytest.raises(ModelError) as caught:
        parse(document)
    return caught.value.errors


def roundtrip(document):
    return unstructure(parse(copy.deepcopy(document)))


# --- error messages ----------------------------------------------------------


def test_mistyped_nested_field_names_the_wire_path():
    doc = service(overrides={"hardware": {"gpu": {"requests": "two", "minVram": "64Gi"}}})
    assert errors_of(doc) == ["$.spec.overrides.hardware.gpu.requests: expected int, got 'two'"]


def test_paths_use_camel_case_and_odd_wire_names():
    doc = service(
        autoScaling={"metrics": [{"type": "PodMetric", "podmetric": {"metric": {}, "target": 5}}]},
        imagePullSecrets=[{"name": 1}],
    )
    assert sorted(errors_of(doc)) == [
        "$.spec.autoScaling.metrics[0].podmetric.target: expected object, got 5",
        "$.spec.imagePullSecrets[0].name: expected str, got 1",
    ]


def test_unknown_fields_are_reported_one_per_key():
    doc = service(foo=1, replica=2)
    doc["spec"]["model"]["ref"] = "x"
    assert sorted(errors_of(doc)) == [
        "$.spec.foo: unknown field",
        "$.spec.model.ref: unknown field",
        "$.spec.replica: unknown field",
    ]


def test_python_names_are_not_accepted_on_the_wire():
    doc = service(image_pull_secrets=[])
    assert errors_of(doc) == ["$.spec.image_pull_secrets: unknown field"]


def test_missing_required_field():
    doc = service()
    doc["spec"]["model"] = {"custom": {"baseImage": "img", "modelSources": []}}
    assert errors_of(doc) == ["$.spec.model.custom.hardware: required field missing"]


def test_all_problems_are_collected():
    doc = service(replicas="3", env=[{"name": "A"}, {"value": "x"}], storage={"pvcHeadroomPercent": 1.5})
    assert sorted(errors_of(doc)) == [
        "$.spec.env[1].name: required field missing",
        "$.spec.replicas: expected int, got '3'",
        "$.spec.storage.pvcHeadroomPercent: expected int, got 1.5",
    ]


def test_map_values_are_addressed_by_key():
    doc = service(resources={"limits": {"cpu": 0.5, "memory": "8Gi"}})
    assert errors_of(doc) == ["$.spec.resources.limits['cpu']: expected int or str, got 0.5"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"replicas": True}, "$.spec.replicas: expected int, got True"),
        ({"replicas": 1.0}, "$.spec.replicas: expected int, got 1.0"),
        ({"cacheModel": "false"}, "$.spec.cacheModel: expected bool, got 'false'"),
        ({"serviceAccountName": 7}, "$.spec.serviceAccountName: expected str, got 7"),
        ({"env": "A=1"}, "$.spec.env: expected list, got 'A=1'"),
        ({"routing": ["x"]}, "$.spec.routing: expected object, got ['x']"),
        ({"routing": {"annotations": {"a": 1}}}, "$.spec.routing.annotations['a']: expected str, got 1"),
    ],
)
def test_json_types_are_enforced(spec, message):
    assert errors_of(service(**spec)) == [message]


def test_enums_and_bounds_are_left_to_the_api_server():
    doc = service(caching={"mode": "Sometimes"}, minReplicas=0, overrides={"precision": "fp64"})
    assert roundtrip(doc) == doc


def test_structure_reports_paths_from_the_given_class():
    with pytest.raises(ModelError) as caught:
        structure(AIMGpuRequirements, {"requests": "1", "model": "MI300X"})
    assert caught.value.errors == ["$.requests: expected int, got '1'"]


# --- parse ----------------------------------------------------------------


def test_parse_picks_the_class_from_kind():
    obj = parse(service())
    assert isinstance(obj, AIMService)
    assert obj.spec.model.name == "m"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"apiVersion": V, "kind": "AIMWidget"}, "$.kind: unknown kind 'AIMWidget'"),
        ({"apiVersion": V}, "$.kind: unknown kind None"),
        (
            {"apiVersion": "aim.silogen.ai/v1alpha1", "kind": "AIMModel", "spec": {"image": "x"}},
            "$.apiVersion: expected 'aim.eai.amd.com/v1alpha1', got 'aim.silogen.ai/v1alpha1'",
        ),
        ("kind: AIMService", "$: expected object, got 'kind: AIMService'"),
    ],
)
def test_parse_rejects_what_is_not_an_aim_object(document, message):
    assert errors_of(document) == [message]


def test_model_error_message_joins_all_errors():
    err = ModelError(["$.a: x", "$.b: y"])
    assert str(err) == "$.a: x; $.b: y"
    assert err.errors == ["$.a: x", "$.b: y"]


# --- round trip -------------------------------------------------------------


def test_explicit_empty_objects_and_lists_survive():
    doc = service(storage={"downloadFilter": {}}, routing={}, env=[], imagePullSecrets=[])
    doc["status"] = {"routing": {}, "conditions": []}
    assert roundtrip(doc) == doc


def test_false_and_zero_survive():
    doc = service(cacheModel=False, replicas=0, routing={"enabled": False})
    doc["spec"]["overrides"] = {"hardware": {"gpu": {"requests": 0}}}
    assert roundtrip(doc) == doc


def test_quantities_keep_their_json_type():
    doc = service(resources={"limits": {"cpu": 4, "memory": "32Gi"}, "requests": {"cpu": "500m"}})
    out = roundtrip(doc)
    assert out["spec"]["resources"]["limits"] == {"cpu": 4, "memory": "32Gi"}
    assert out == doc


def test_free_form_json_is_kept_verbatim():
    profile = {
        "engine_args": {"tensor-parallel-size": 2, "x": [1, 2.5, None, {"y": True}]},
        "env_vars": {"VLLM_USE_V1": "1"},
        "metadata": {"engine": "vllm", "gpuCount": 2},
        "originalDiscoveryOutput": [{"anything": "goes"}, 3],
    }
    doc = {
        "apiVersion": V,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "t", "annotations": {"a": "b"}, "generation": 3},
        "spec": {"modelName": "m", "customProfile": {"engineArgs": {"a": {"b": [1]}}}},
        "status": {"profile": profile},
    }
    assert roundtrip(doc) == doc


def test_unset_fields_are_omitted():
    obj = AIMService(metadata={"name": "svc"}, spec=AIMServiceSpec(model=AIMServiceModel(image="img")))
    assert unstructure(obj) == {
        "apiVersion": V,
        "kind": "AIMService",
        "metadata": {"name": "svc"},
        "spec": {"model": {"image": "img"}},
    }


def test_unstructure_uses_wire_names():
    obj = AIMService(
        spec=AIMServiceSpec(
            model=AIMServiceModel(name="m"),
            resources=ResourceRequirements(limits={"amd.com/gpu": 1}),
            image_pull_secrets=[],
        ),
        status=AIMServiceStatus(status="Running"),
    )
    data = unstructure(obj)
    assert data["spec"] == {
        "model": {"name": "m"},
        "resources": {"limits": {"amd.com/gpu": 1}},
        "imagePullSecrets": [],
    }
    assert data["status"] == {"status": "Running"}


def test_every_kind_round_trips_a_minimal_document():
    minimal = {
        "AIMArtifact": {"sourceUri": "hf://org/model"},
        "AIMClusterModelSource": {"images": ["org/repo:1.0"]},
        "AIMRuntimeConfig": {},
    }
    for kind, spec in minimal.items():
        doc = {"apiVersion": V, "kind": kind, "metadata": {"name": "x"}, "spec": spec}
        assert roundtrip(doc) == doc
    assert isinstance(parse({"apiVersion": V, "kind": "AIMArtifact", "spec": minimal["AIMArtifact"]}), AIMArtifact)
