import sys

import pytest

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.plan import Desired, LabelPolicy
from aim_core.runtime.applyset import AppliedForms, is_subset, needs_apply, owned_fields, prepare

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")
PARENT = {
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "kind": "AIMService",
    "metadata": {
        "name": "svc",
        "namespace": "ns",
        "uid": "u-1",
        "labels": {"aim.eai.amd.com/team": "a", "env": "prod", "other": "x"},
    },
}


def test_prepare_sets_owner_identity_and_propagated_labels():
    desired = Desired(
        ISVC,
        {"metadata": {"name": "svc-1", "namespace": "ns", "labels": {"app.kubernetes.io/managed-by": "aim-engine"}}},
    )
    body = prepare(desired, PARENT, "service", LabelPolicy(enabled=True, patterns=("env",)))
    assert body["apiVersion"] == "serving.kserve.io/v1beta1" and body["kind"] == "InferenceService"
    assert body["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "name": "svc",
            "uid": "u-1",
            "controller": True,
        }
    ]
    labels = body["metadata"]["labels"]
    assert labels["app.kubernetes.io/managed-by"] == "aim-engine"  # the builder's value is kept
    assert labels["aim.eai.amd.com/service.name"] == "svc"
    assert labels["aim.eai.amd.com/team"] == "a"
    assert labels["env"] == "prod"
    assert "other" not in labels


def test_a_job_s_pod_template_gets_what_the_job_gained_and_keeps_its_own_labels():
    job = ResourceRef("batch/v1", "Job", "jobs")
    desired = Desired(
        job,
        {
            "metadata": {"name": "j", "namespace": "ns", "labels": {"app.kubernetes.io/component": "x"}},
            "spec": {"template": {"metadata": {"labels": {"env": "pod-own"}}, "spec": {}}},
        },
    )
    body = prepare(desired, PARENT, "artifact", LabelPolicy(enabled=True, patterns=("env",)))
    pod = body["spec"]["template"]["metadata"]["labels"]
    assert pod["aim.eai.amd.com/team"] == "a" and pod["aim.eai.amd.com/artifact.name"] == "svc"  # issue 18
    assert pod["env"] == "pod-own"  # the builder's pod label wins over a propagated one
    assert "app.kubernetes.io/component" not in pod and "other" not in pod  # only what the Job gained
    isvc = prepare(
        Desired(ISVC, {"metadata": {"name": "i", "namespace": "ns"}, "spec": {}}), PARENT, "service", LabelPolicy()
    )
    assert "template" not in isvc["spec"]  # other kinds are left as built


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
                {
                    "manager": "aim-service-controller",
                    "operation": "Apply",
                    "fieldsV1": {"f:metadata": {"f:annotations": {"f:a": {}, "f:b": {}}}},
                },
            ],
        }
    }
    assert owned_fields(live, "aim-service-controller") == {
        ("metadata",),
        ("metadata", "annotations"),
        ("metadata", "annotations", "a"),
        ("metadata", "annotations", "b"),
    }
    assert needs_apply(want, live, "aim-service-controller") is True
    # another manager owning b is not our business
    assert needs_apply(want, live, "someone-else") is False
    assert needs_apply(want, None, "m") is True


def test_prepare_leaves_out_what_the_server_never_stores():
    desired = Desired(
        ISVC,
        {
            "metadata": {"name": "r", "namespace": "ns", "annotations": {}, "finalizers": []},
            "spec": {"a": None, "b": {"c": None, "d": 1}, "e": {}},
        },
    )
    body = prepare(desired, PARENT, "service", LabelPolicy())
    assert "annotations" not in body["metadata"] and "finalizers" not in body["metadata"]
    assert body["spec"] == {"b": {"d": 1}, "e": {}}  # empty maps in the spec are data


def test_a_desired_empty_annotation_map_matches_a_live_object_without_one():
    body = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "x", "annotations": {}}, "spec": {"a": 1}}
    live = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {
            "name": "x",
            "managedFields": [
                {
                    "manager": "m",
                    "operation": "Apply",
                    "fieldsV1": {"f:metadata": {"f:annotations": {}}, "f:spec": {"f:a": {}}},
                }
            ],
        },
        "spec": {"a": 1},
    }
    assert needs_apply(body, live, "m") is False  # an owned field the server dropped is not "still carried"


def test_what_the_server_pruned_or_respelled_is_learned_from_its_answer():
    body = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "x"},
        "spec": {"size": 1, "typo": True, "memory": "1024Mi", "ports": [{"port": 80}]},
    }
    stored = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "x", "resourceVersion": "7"},
        "spec": {"size": 1, "memory": "1Gi", "mode": "fast", "ports": [{"port": 80, "protocol": "TCP"}]},
    }
    forms = AppliedForms()
    assert needs_apply(body, stored, "m", forms.get("k", body)) is True  # not learned yet: one write
    forms.remember("k", body, stored)
    assert forms.get("k", body) == {
        "metadata": {"name": "x"},
        "spec": {"size": 1, "memory": "1Gi", "ports": [{"port": 80}]},
    }
    assert needs_apply(body, stored, "m", forms.get("k", body)) is False
    # Drift of a field we set is still seen; a different desired body is compared afresh.
    drifted = {**stored, "spec": {**stored["spec"], "size": 2}}
    assert needs_apply(body, drifted, "m", forms.get("k", body)) is True
    changed = {**body, "spec": {**body["spec"], "size": 3}}
    assert forms.get("k", changed) is None
    forms.forget("k")
    assert forms.get("k", body) is None


def test_applied_forms_are_bounded():
    forms = AppliedForms(limit=2)
    for key in "abc":
        forms.remember(key, {"metadata": {"name": key}}, {"metadata": {"name": key}})
    assert len(forms) == 2 and forms.get("a", {"metadata": {"name": "a"}}) is None


def test_a_body_the_server_stored_as_sent_is_remembered_without_a_copy():
    body = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "spec": {"size": 1, "ports": [{"port": 80}]},
    }
    stored = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {"name": "x", "labels": {"a": "1"}, "uid": "u", "resourceVersion": "3"},
        "spec": {"size": 1, "ports": [{"port": 80}], "mode": "default"},
    }
    forms = AppliedForms()
    forms.remember("k", body, stored)
    assert forms.get("k", body) == {
        "metadata": {"name": "x", "labels": {"a": "1"}},
        "spec": {"size": 1, "ports": [{"port": 80}]},
    }
    assert needs_apply(body, stored, "m", forms.get("k", body)) is False
    assert forms.get("k", {**body, "spec": {"size": 2, "ports": [{"port": 80}]}}) is None
    assert sys.getsizeof(forms._forms["k"][0]) < 100 and forms._forms["k"][1] is None  # a digest, no body
