"""The KServe runtime builder: the InferenceService shape of wire-facts section 2, and its health (F53)."""

from __future__ import annotations

import attrs
import pytest
from aim_plugin_kserve.inferenceservice import InferenceServiceBuilder

from aim_core import RuntimeBuilder, RuntimeRequest, State
from aim_testing.crdschema import third_party_crd, validate_against_crd

ISVC_CRD = "serving.kserve.io_inferenceservices.yaml"
NAME = "qwen-chat-1080a608"
IMAGE = "docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"

SERVICE = {
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "kind": "AIMService",
    "metadata": {"name": "qwen-chat", "namespace": "default", "uid": "0b5c7d2e-svc"},
    "spec": {"model": {"image": IMAGE}},
}
ENV = (
    {"name": "AIM_CACHE_PATH", "value": "/workspace/cache"},
    {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
    {"name": "VLLM_ENABLE_METRICS", "value": "true"},
)
RESOURCES = {
    "requests": {"cpu": "4", "memory": "32Gi", "amd.com/gpu": "1"},
    "limits": {"memory": "48Gi", "amd.com/gpu": "1"},
}
CACHE_VOLUME = {"name": "qwen-qwen3-32b", "persistentVolumeClaim": {"claimName": "aim-artifact-qwen-7f3a"}}
CACHE_MOUNT = {"name": "qwen-qwen3-32b", "mountPath": "/workspace/cache/Qwen/Qwen3-32B"}
AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "amd.com/gpu.device-id", "operator": "In", "values": ["74a1", "74b5"]}]}
        ]
    }
}


def make_request(**changes) -> RuntimeRequest:
    base = RuntimeRequest(
        service=SERVICE,
        name=NAME,
        namespace="default",
        image=IMAGE,
        labels={
            "aim.eai.amd.com/service": "qwen-chat",
            "aim.eai.amd.com/template": "qwen3-32b-mi300x-fp8-lat",
            "aim.eai.amd.com/service.name": "qwen-chat",
        },
        env=ENV,
        resources=RESOURCES,
        volumes=(CACHE_VOLUME,),
        volume_mounts=(CACHE_MOUNT,),
        replicas=2,
    )
    return attrs.evolve(base, **changes)


def build(request: RuntimeRequest) -> dict:
    objects = InferenceServiceBuilder().build(request)
    assert len(objects) == 1
    return objects[0]


def test_is_a_runtime_builder():
    builder = InferenceServiceBuilder()
    assert isinstance(builder, RuntimeBuilder)
    assert builder.name == "kserve"
    assert (builder.resource.api_version, builder.resource.kind, builder.resource.plural) == (
        "serving.kserve.io/v1beta1",
        "InferenceService",
        "inferenceservices",
    )


def test_fixed_replicas_wire_shape():
    assert build(make_request()) == {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": NAME,
            "namespace": "default",
            "labels": {
                "aim.eai.amd.com/service": "qwen-chat",
                "aim.eai.amd.com/template": "qwen3-32b-mi300x-fp8-lat",
                "aim.eai.amd.com/service.name": "qwen-chat",
                "app.kubernetes.io/component": "inference",
                "app.kubernetes.io/managed-by": "aim-engine",
            },
            "annotations": {"serving.kserve.io/autoscalerClass": "none"},
        },
        "spec": {
            "predictor": {
                "minReplicas": 2,
                "maxReplicas": 2,
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": IMAGE,
                        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
                        "env": [dict(e) for e in ENV],
                        "resources": RESOURCES,
                        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, CACHE_MOUNT],
                    }
                ],
                "volumes": [
                    {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
                    CACHE_VOLUME,
                ],
            }
        },
    }


@pytest.mark.parametrize(
    ("changes", "min_max", "annotations"),
    [
        ({"replicas": 3}, (3, 3), {"serving.kserve.io/autoscalerClass": "none"}),
        ({"replicas": None}, (1, 1), {"serving.kserve.io/autoscalerClass": "none"}),
        # Autoscaling: bounds only; the autoscaler adds its class next.
        ({"replicas": None, "min_replicas": 1, "max_replicas": 4}, (1, 4), {}),
        ({"replicas": None, "min_replicas": 2}, (2, 2), {}),
        ({"replicas": None, "max_replicas": 3}, (1, 3), {}),
    ],
)
def test_replicas(changes, min_max, annotations):
    isvc = build(make_request(**changes))
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == min_max
    assert isvc["metadata"]["annotations"] == annotations


def test_builder_labels_win_over_request_labels():
    labels = build(make_request(labels={"app.kubernetes.io/managed-by": "someone", "team": "a"}))["metadata"]["labels"]
    assert labels == {
        "team": "a",
        "app.kubernetes.io/component": "inference",
        "app.kubernetes.io/managed-by": "aim-engine",
    }


def test_optional_pod_fields_are_set_only_when_given():
    plain = build(make_request(volumes=(), volume_mounts=(), env=(), resources={}))["spec"]["predictor"]
    assert set(plain) == {"minReplicas", "maxReplicas", "containers", "volumes"}
    assert set(plain["containers"][0]) == {"name", "image", "ports", "volumeMounts"}
    assert plain["volumes"] == [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]

    full = build(
        make_request(
            image_pull_secrets=({"name": "ghcr-pull"},),
            service_account_name="inference",
            priority_class_name="llm-high",
            node_affinity=AFFINITY,
        )
    )["spec"]["predictor"]
    assert full["imagePullSecrets"] == [{"name": "ghcr-pull"}]
    assert full["serviceAccountName"] == "inference"
    assert full["priorityClassName"] == "llm-high"
    assert full["affinity"] == {"nodeAffinity": AFFINITY}
    validate_against_crd(
        build(make_request(node_affinity=AFFINITY, priority_class_name="x")), third_party_crd(ISVC_CRD)
    )


def test_built_object_shares_nothing_with_the_request():
    env = [{"name": "A", "value": "1"}]
    isvc = build(make_request(env=env))
    env[0]["value"] = "changed"
    assert isvc["spec"]["predictor"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


# ---------------------------------------------------------------------------
# Storage carried over from the live object (F51, Q16)
# ---------------------------------------------------------------------------

OLD_VOLUME = {"name": "old-cache", "persistentVolumeClaim": {"claimName": "aim-artifact-old"}}
OLD_MOUNT = {"name": "old-cache", "mountPath": "/workspace/cache/Qwen/Old"}


def live_isvc(volumes, mounts) -> dict:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": NAME, "namespace": "default", "uid": "isvc-uid-1"},
        "spec": {
            "predictor": {
                "containers": [{"name": "kserve-container", "image": IMAGE, "volumeMounts": mounts}],
                "volumes": volumes,
            }
        },
    }


def test_cache_volumes_of_the_live_object_are_kept_when_the_cache_is_gone():
    shm = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}
    live = live_isvc([shm, CACHE_VOLUME], [{"name": "dshm", "mountPath": "/dev/shm"}, CACHE_MOUNT])
    isvc = build(make_request(volumes=(), volume_mounts=(), live=live))
    predictor = isvc["spec"]["predictor"]
    assert predictor["volumes"] == [shm, CACHE_VOLUME]
    assert predictor["containers"][0]["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}, CACHE_MOUNT]
    validate_against_crd(isvc, third_party_crd(ISVC_CRD))


def test_carry_over_adds_only_what_is_missing():
    clash = {"name": "other", "mountPath": CACHE_MOUNT["mountPath"]}  # same path, other name
    live = live_isvc([CACHE_VOLUME, OLD_VOLUME], [CACHE_MOUNT, OLD_MOUNT, clash])
    isvc = build(make_request(live=live))
    predictor = isvc["spec"]["predictor"]
    assert [v["name"] for v in predictor["volumes"]] == ["dshm", "qwen-qwen3-32b", "old-cache"]
    assert [m["name"] for m in predictor["containers"][0]["volumeMounts"]] == ["dshm", "qwen-qwen3-32b", "old-cache"]
    validate_against_crd(isvc, third_party_crd(ISVC_CRD))


# ---------------------------------------------------------------------------
# Health (F53)
# ---------------------------------------------------------------------------

UID = "isvc-uid-1"


def with_ready(status: str, reason: str = "", message: str = "") -> dict:
    live = live_isvc([], [])
    live["status"] = {"conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message}]}
    return live


def isvc_event(reason: str, message: str, at: str, *, uid: str = UID, type_: str = "Warning") -> dict:
    return {
        "kind": "Event",
        "metadata": {"name": f"{NAME}.{at}", "namespace": "default"},
        "involvedObject": {"kind": "InferenceService", "name": NAME, "namespace": "default", "uid": uid},
        "reason": reason,
        "message": message,
        "type": type_,
        "lastTimestamp": at,
    }


SERVERLESS = "Serverless mode requires Knative Serving; it is not installed"
CONFLICT = (
    'Operation cannot be fulfilled on deployments.apps "qwen-chat-1080a608-predictor": '
    "the object has been modified; please apply your changes to the latest version and try again"
)
STORAGE_CONFLICT = (
    'Operation cannot be fulfilled on inferenceservices.serving.kserve.io "qwen-chat-1080a608": '
    "StorageError: invalid object, Code: 4"
)
SCALEDOBJECT_INVALID = 'ScaledObject.keda.sh "qwen-chat-1080a608-predictor" is invalid: spec.triggers: Required value'


@pytest.mark.parametrize(
    ("live", "events", "state", "reason", "category", "in_message"),
    [
        (None, [], State.PROGRESSING, "CreatingRuntime", None, "Creating"),
        (with_ready("True"), [], State.READY, "RuntimeReady", None, NAME),
        (
            with_ready("False", "PredictorNotReady", "Deployment does not have minimum availability"),
            [],
            State.PROGRESSING,
            "CreatingRuntime",
            None,
            "minimum availability",
        ),
        (live_isvc([], []), [], State.PROGRESSING, "CreatingRuntime", None, "not ready"),
        (
            live_isvc([], []),
            [isvc_event("ServerlessModeRejected", SERVERLESS, "2025-01-01T10:00:00Z")],
            State.FAILED,
            "ServerlessModeRejected",
            None,  # upstream: Failed with this reason, no error category (so no ConfigValid)
            "RawDeployment",
        ),
        (
            live_isvc([], []),
            [isvc_event("InternalError", SCALEDOBJECT_INVALID, "2025-01-01T10:00:00Z")],
            State.FAILED,
            "InternalError",
            None,
            "spec.triggers",
        ),
        (
            live_isvc([], []),
            [isvc_event("InternalError", CONFLICT, "2025-01-01T10:00:00Z")],
            State.PROGRESSING,
            "CreatingRuntime",
            None,
            "",
        ),
        (
            # Any optimistic-lock conflict is transient, whatever follows "Operation cannot be fulfilled".
            live_isvc([], []),
            [isvc_event("InternalError", STORAGE_CONFLICT, "2025-01-01T10:00:00Z")],
            State.PROGRESSING,
            "CreatingRuntime",
            None,
            "",
        ),
        (
            # Events of an earlier InferenceService with the same name do not count.
            live_isvc([], []),
            [isvc_event("ServerlessModeRejected", SERVERLESS, "2025-01-01T10:00:00Z", uid="previous-uid")],
            State.PROGRESSING,
            "CreatingRuntime",
            None,
            "",
        ),
        (
            live_isvc([], []),
            [isvc_event("ServerlessModeRejected", SERVERLESS, "2025-01-01T10:00:00Z", type_="Normal")],
            State.PROGRESSING,
            "CreatingRuntime",
            None,
            "",
        ),
        (
            # The newest relevant warning decides.
            live_isvc([], []),
            [
                isvc_event("InternalError", SCALEDOBJECT_INVALID, "2025-01-01T10:00:00Z"),
                isvc_event("ServerlessModeRejected", SERVERLESS, "2025-01-01T10:05:00Z"),
            ],
            State.FAILED,
            "ServerlessModeRejected",
            None,
            "",
        ),
        (
            # Once Ready, old warnings no longer matter.
            with_ready("True"),
            [isvc_event("InternalError", SCALEDOBJECT_INVALID, "2025-01-01T10:00:00Z")],
            State.READY,
            "RuntimeReady",
            None,
            "",
        ),
    ],
)
def test_health(live, events, state, reason, category, in_message):
    health = InferenceServiceBuilder().health(live, [], events)
    assert (health.state, health.reason, health.category) == (state, reason, category), health
    assert in_message in health.message


def test_backend_service_and_pod_selector():
    builder = InferenceServiceBuilder()
    assert builder.backend_service(NAME) == f"{NAME}-predictor"
    assert builder.pod_selector(NAME) == {"serving.kserve.io/inferenceservice": NAME}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"replicas": None},
        {"replicas": None, "min_replicas": 1, "max_replicas": 4},
        {"image_pull_secrets": ({"name": "p"},), "service_account_name": "sa", "node_affinity": AFFINITY},
        {"env": (), "resources": {}, "volumes": (), "volume_mounts": ()},
    ],
)
def test_every_variant_fits_the_kserve_crd(changes):
    validate_against_crd(build(make_request(**changes)), third_party_crd(ISVC_CRD))
