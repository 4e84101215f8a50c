"""What the engine writes, built purely: the status merge patch and Event bodies."""

import datetime

import pytest

from aim_core.reconcile.events import EventSpec
from aim_core.reconcile.writes import event_body, rfc3339, status_patch

NOW = datetime.datetime(2026, 11, 24, 15, 4, 5, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # unchanged: nothing to write
        ({"status": "Running", "routing": {"path": "/a"}}, {"status": "Running", "routing": {"path": "/a"}}, {}),
        # a changed value is written
        ({"status": "Pending"}, {"status": "Running"}, {"status": "Running"}),
        # a key the engine owns and the plan no longer sets is removed
        ({"status": "Running", "routing": {"path": "/a"}}, {"status": "Running"}, {"routing": None}),
        # a key someone else wrote (a download pod's progress) is left alone
        ({"status": "Running", "progress": {"percent": 40}}, {"status": "Running"}, {}),
        # nested objects: changed sub-keys written, dropped sub-keys removed
        (
            {"runtime": {"image": "a", "replicas": 1}},
            {"runtime": {"image": "b"}},
            {"runtime": {"image": "b", "replicas": None}},
        ),
        # an object replaced by an empty one is written whole
        ({"cache": {"name": "c"}}, {"cache": {}}, {"cache": {}}),
    ],
)
def test_status_patch(old, new, expected):
    assert status_patch(old, new) == expected


def _obj(namespace):
    meta = {"name": "svc", "uid": "u-1"} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMService", "metadata": meta}


def test_an_event_names_the_object_its_reason_and_the_reporting_controller():
    spec = EventSpec("Warning", "ModelNotFound", "model m not found", "ModelReady", recurring=True)

    body = event_body(_obj("team"), spec, "aim-service-controller", NOW)

    assert body["metadata"] == {"generateName": "svc.", "namespace": "team"}
    assert body["involvedObject"] == {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "name": "svc",
        "namespace": "team",
        "uid": "u-1",
    }
    assert (body["type"], body["reason"], body["message"]) == ("Warning", "ModelNotFound", "model m not found")
    assert body["reportingComponent"] == body["source"]["component"] == "aim-service-controller"
    assert body["firstTimestamp"] == body["lastTimestamp"] == rfc3339(NOW) == "2026-11-24T15:04:05Z"


def test_an_event_of_a_cluster_scoped_object_goes_to_default_with_its_message_cut_to_1024():
    body = event_body(_obj(None), EventSpec("Normal", "Ready", "x" * 5000), "aim-model-controller", NOW)

    assert body["metadata"]["namespace"] == "default"
    assert body["involvedObject"]["namespace"] is None
    assert body["message"] == "x" * 1024
