import pytest

from aim_core.applyset import is_subset, needs_apply, owned_fields, prepare
from aim_core.providers import ResourceRef
from aim_core.reconcile.plan import Desired, LabelPolicy

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")
PARENT = {
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "kind": "AIMService",
    "metadata": {"name": "svc", "namespace": "ns", "uid": "u-1", "labels": {"aim.eai.amd.com/team": "a", "env": "prod", "other": "x"}},
}


def test_prepare_sets_owner_identity_and_propagated_labels():
    desired = Desired(ISVC, {"metadata": {"name": "svc-1", "namespace": "ns", "labels": {"app.kubernetes.io/managed-by": "aim-engine"}}})
    body = prepare(desired, PARENT, "service", LabelPolicy(enabled=True, patterns=("env",)))
    assert body["apiVersion"] == "serving.kserve.io/v1beta1" and body["kind"] == "InferenceService"
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMService", "name": "svc", "uid": "u-1", "controller": True}
    ]
    labels = body["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "aim-engine"  # the builder's value is kept
    assert labels["aim.eai.amd.com/service.name"] == "svc"
    assert labels["aim.eai.amd.com/team"] == "a"
    assert labels["env"] == "prod"
    assert "other" not in labels


def test_unowned_children_get_no_owner_reference():
    desired = Desired(ISVC, {"metadata": {"name": "m", "namespace": "ns"}}, owned=False)
    assert "ownerReferences" not in prepare(desired, PARENT, "service", LabelPolicy())["metadata"]


@pytest.mark.parametrize(
    "want,have,expected",
    [
        ({"a": 1}, {"a": 1, "b": 2}, True),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 2], "c": 0}}, True),
        ({"a": [1, 2]}, {"a": [1]}, False),
        ({"cpu": 4}, {"cpu": "4"}, True),
        ({"a": None}, {}, False),
        ({"a": "x"}, {"a": "y"}, False),
    ],
)
def test_is_subset(want, have, expected):
    assert is_subset(want, have) is expected


def test_needs_apply_detects_dropped_owned_fields():
    want = {"metadata": {"name": "x", "annotations": {"a": "1"}}}
    live = {
        "metadata": {
            "name": "x",
            "annotations": {"a": "1", "b": "2"},
            "managedFields": [
                {"manager": "aim-service-controller", "operation": "Apply",
                 "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}, "f:b": {}}}}},
            ],
        }
    }
    assert owned_fields(live, "aim-service-controller") == {("metadata",), ("metadata", "annotations"),
                                                             ("metadata", "annotations", "a"), ("metadata", "annotations", "b")}
    assert needs_apply(want, live, "aim-service-controller") is True
    # another manager owning b is not our business
    assert needs_apply(want, live, "someone-else") is False
    assert needs_apply(want, None, "m") is True
