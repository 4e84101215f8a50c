"""The CRD schema helper must reject what the API server would reject, or tests built on it prove nothing."""

import pytest

from aim_testing.crdschema import CrdValidationError, crd_errors, third_party_crd, validate_against_crd

ISVC = "serving.kserve.io_inferenceservices.yaml"
ROUTE = "gateway.networking.k8s.io_httproutes.yaml"
SCALEDOBJECT = "keda.sh_scaledobjects.yaml"


def _isvc(predictor):
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "m", "namespace": "ns"},
        "spec": {"predictor": predictor},
    }


def _container(**extra):
    return {"name": "kserve-container", "image": "img", **extra}


def test_valid_object_has_no_errors():
    validate_against_crd(_isvc({"containers": [_container()], "minReplicas": 1}), third_party_crd(ISVC))


@pytest.mark.parametrize(
    ("predictor", "expected"),
    [
        ({"containers": [_container()], "podMetric": {}}, "$.spec.predictor: Additional properties"),
        ({"containers": [_container()], "minReplicas": "1"}, "$.spec.predictor.minReplicas: '1' is not of type"),
        ({"containers": [{"image": "img"}]}, "$.spec.predictor.containers[0]: 'name' is a required property"),
        (
            {"containers": [_container(env=[{"name": "A", "value": "1"}, {"name": "A", "value": "2"}])]},
            "duplicate entry with name='A'",
        ),
        (
            # protocol defaults to TCP, so these two ports collide
            {"containers": [_container(ports=[{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 80}])]},
            "duplicate entry with containerPort=80, protocol='TCP'",
        ),
        (
            {"containers": [_container(resources={"requests": {"cpu": [1]}})]},
            "$.spec.predictor.containers[0].resources.requests.cpu",
        ),
        (
            {
                "containers": [_container()],
                "autoScaling": {"metrics": [{"type": "PodMetric", "podmetric": {"metric": {"backend": "prometheus"}}}]},
            },
            "'target' is a required property",
        ),
    ],
)
def test_wrong_inference_services_fail(predictor, expected):
    errors = crd_errors(_isvc(predictor), third_party_crd(ISVC))
    assert any(expected in e for e in errors), errors
    with pytest.raises(CrdValidationError):
        validate_against_crd(_isvc(predictor), third_party_crd(ISVC))


def test_int_or_string_quantities_accept_both():
    predictor = {"containers": [_container(resources={"requests": {"cpu": 4, "memory": "32Gi"}})]}
    assert crd_errors(_isvc(predictor), third_party_crd(ISVC)) == []


def test_kind_and_version_are_checked():
    obj = _isvc({"containers": [_container()]})
    obj["kind"] = "InferenceGraph"
    assert "$.kind: expected 'InferenceService'" in crd_errors(obj, third_party_crd(ISVC))[0]
    obj = _isvc({"containers": [_container()]})
    obj["apiVersion"] = "serving.kserve.io/v1alpha9"
    with pytest.raises(ValueError, match="no version 'v1alpha9'"):
        crd_errors(obj, third_party_crd(ISVC))


def test_route_duration_pattern_is_enforced():
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r"},
        "spec": {"rules": [{"timeouts": {"request": "1.5s"}}]},
    }
    assert crd_errors(route, third_party_crd(ROUTE)) == [
        "$.spec.rules[0].timeouts.request: '1.5s' does not match '^([0-9]{1,5}(h|m|s|ms)){1,4}$'"
    ]


def test_scaledobject_without_triggers_fails():
    so = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": "s"},
        "spec": {"scaleTargetRef": {"name": "d"}},
    }
    assert crd_errors(so, third_party_crd(SCALEDOBJECT)) == ["$.spec: 'triggers' is a required property"]


def test_missing_crd_file_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("AIM_THIRD_PARTY_CRDS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        third_party_crd("nope.yaml")
