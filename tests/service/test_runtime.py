"""The runtime request of an AIMService (F47-F52, spec 2.6/2.7) and the objects plugins build from it."""

from __future__ import annotations

import copy
import json

import pytest

from aim_core.plugin.providers import ReplicaStatus, RuntimeRequest, ScalingRequest
from aim_core.reconcile.health import Category
from aim_core.reconcile.naming import inference_service_name
from aim_core.reconcile.plan import Issue
from aim_core.service.runtime import (
    cache_volumes,
    container_resources,
    engine_args_issue,
    env_layers,
    runtime_request,
    runtime_status,
    scaling_request,
    serving_labels,
)
from aim_testing.crdschema import third_party_crd, validate_against_crd

GPU = "amd.com/gpu"
ISVC_CRD = "serving.kserve.io_inferenceservices.yaml"
IMAGE = "docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "amd.com/gpu.device-id", "operator": "In", "values": ["74a1"]}]}
        ]
    }
}
POD_METRIC = {
    "type": "PodMetric",
    "podmetric": {
        "metric": {
            "backend": "opentelemetry",
            "metricNames": ["vllm:num_requests_running"],
            "query": "vllm:num_requests_running",
            "operationOverTime": "avg",
        },
        "target": {"type": "Value", "value": "1"},
    },
}


def env(**values: str) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in values.items()]


class Obj:
    """A fluent builder of a wire-format object: ``Obj("AIMService", "qwen-chat").spec(replicas=2).build()``."""

    def __init__(self, kind: str, name: str, namespace: str | None = "ml-team") -> None:
        meta = {"name": name, "uid": f"uid-{name}"}
        if namespace is not None:
            meta["namespace"] = namespace
        self.obj = {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": kind, "metadata": meta, "spec": {}}

    def meta(self, **fields) -> Obj:
        self.obj["metadata"].update(fields)
        return self

    def spec(self, **fields) -> Obj:
        self.obj["spec"].update(fields)
        return self

    def status(self, **fields) -> Obj:
        self.obj.setdefault("status", {}).update(fields)
        return self

    def build(self) -> dict:
        return copy.deepcopy(self.obj)


def service(name: str = "qwen-chat", namespace: str = "ml-team") -> Obj:
    return Obj("AIMService", name, namespace).spec(model={"name": "qwen3-32b"})


def template(gpus: int = 1, name: str = "qwen3-32b-mi300x-lat-fp8", namespace: str | None = "ml-team") -> Obj:
    kind = "AIMServiceTemplate" if namespace else "AIMClusterServiceTemplate"
    hardware = {"gpu": {"requests": gpus, "model": "MI300X"}} if gpus else {}
    return (
        Obj(kind, name, namespace)
        .spec(modelName="qwen3-32b", metric="latency", precision="fp8")
        .status(
            status="Ready", resolvedHardware=hardware, profile={"metadata": {"metric": "latency", "precision": "fp8"}}
        )
    )


MODEL = Obj("AIMModel", "qwen3-32b").spec(image=IMAGE).build()


def request(
    svc: dict | None = None,
    tpl: dict | None = None,
    *,
    config: dict | None = None,
    cache: dict | None = None,
    live: dict | None = None,
    scope: str = "Namespace",
    labels: dict | None = None,
) -> RuntimeRequest:
    result = runtime_request(
        svc or service().build(),
        MODEL,
        tpl or template().build(),
        scope,
        config or {},
        cache,
        live,
        labels,
        default_gpu_resource=GPU,
    )
    assert isinstance(result, RuntimeRequest), result
    return result


def by_name(entries) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in entries}


# ---------------------------------------------------------------- environment


def test_env_layers_in_f49_order_sorted_by_name():
    svc = service().spec(env=env(SVC="s")).build()
    tpl = (
        template()
        .spec(
            profileId="vllm-mi300x-fp8-tp1-latency",
            env=env(TPL="t"),
            modelSources=[{"modelId": "Qwen/Qwen3-32B", "sourceUri": "hf://Qwen/Qwen3-32B"}],
        )
        .build()
    )
    result = request(svc, tpl, config={"env": env(CFG="c")})
    assert result.env == env(
        AIM_CACHE_PATH="/workspace/cache",
        AIM_METRIC="latency",
        AIM_MODEL_ID="Qwen/Qwen3-32B",
        AIM_PRECISION="fp8",
        AIM_PROFILE_ID="vllm-mi300x-fp8-tp1-latency",
        CFG="c",
        SVC="s",
        TPL="t",
        VLLM_ENABLE_METRICS="true",
    )


# Which layers set variable X, and which value wins. Layers, low to high:
# config env, template spec (metric), template env, template modelSources (AIM_MODEL_ID), service env.
@pytest.mark.parametrize(
    ("variable", "config", "template_env", "service_env", "winner"),
    [
        ("VLLM_ENABLE_METRICS", "cfg", None, None, "cfg"),  # config over operator default
        ("VLLM_ENABLE_METRICS", "cfg", "tpl", None, "tpl"),
        ("VLLM_ENABLE_METRICS", "cfg", "tpl", "svc", "svc"),
        ("AIM_METRIC", "cfg", None, None, "latency"),  # template spec.metric over config env
        ("AIM_METRIC", None, "throughput", None, "throughput"),  # template env over template spec
        ("AIM_METRIC", None, None, "throughput", "throughput"),
        ("AIM_MODEL_ID", None, "org/env", None, "org/source"),  # modelSources over template env
        ("AIM_MODEL_ID", None, "org/env", "org/svc", "org/svc"),
        ("AIM_CACHE_PATH", None, None, None, "/workspace/cache"),
    ],
)
def test_env_precedence(variable, config, template_env, service_env, winner):
    svc = service().spec(env=env(**{variable: service_env}) if service_env else None).build()
    tpl = (
        template()
        .spec(
            env=env(**{variable: template_env}) if template_env else None,
            modelSources=[{"modelId": "org/source", "sourceUri": "hf://org/source"}],
        )
        .build()
    )
    result = request(svc, tpl, config={"env": env(**{variable: config})} if config else {})
    assert by_name(result.env)[variable] == winner
    assert [e["name"] for e in result.env].count(variable) == 1


def test_no_model_id_and_no_profile_variables_when_the_template_spec_has_none():
    tpl = template().spec(metric=None, precision=None).build()
    names = [e["name"] for e in request(tpl=tpl).env]
    assert names == ["AIM_CACHE_PATH", "VLLM_ENABLE_METRICS"]


def test_engine_args_deep_merge_across_config_template_and_service():
    config = {"env": env(AIM_ENGINE_ARGS='{"gpu-memory-utilization": 0.9, "kv": {"dtype": "fp8", "blocks": 16}}')}
    tpl = template().spec(env=env(AIM_ENGINE_ARGS='{"max-model-len": 4096, "kv": {"blocks": 32}}')).build()
    svc = service().spec(env=env(AIM_ENGINE_ARGS='{"max-model-len": 8192}')).build()
    merged = json.loads(by_name(request(svc, tpl, config=config).env)["AIM_ENGINE_ARGS"])
    assert merged == {"gpu-memory-utilization": 0.9, "kv": {"dtype": "fp8", "blocks": 32}, "max-model-len": 8192}


def test_secret_references_are_carried_whole():
    secret = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}
    result = request(service().spec(env=[secret]).build())
    assert secret in result.env


@pytest.mark.parametrize(
    ("where", "layer_text"),
    [
        ("config", "runtime config 'default' env"),
        ("template", "AIMServiceTemplate ml-team/qwen3-32b-mi300x-lat-fp8 spec.env"),
        ("service", "AIMService ml-team/qwen-chat spec.env"),
    ],
)
def test_malformed_engine_args_become_an_invalid_spec_issue_naming_the_layer(where, layer_text):
    bad = env(AIM_ENGINE_ARGS='{"max-model-len": 8192,')
    svc = service().spec(env=bad if where == "service" else None).build()
    tpl = template().spec(env=bad if where == "template" else None).build()
    result = runtime_request(
        svc,
        MODEL,
        tpl,
        "Namespace",
        {"env": bad} if where == "config" else {},
        None,
        None,
        None,
        default_gpu_resource=GPU,
    )
    assert isinstance(result, Issue)
    assert (result.category, result.reason) == (Category.INVALID_SPEC, "InvalidEngineArgs")
    assert layer_text in result.message
    assert "not valid JSON" in result.message and "Expecting" in result.message  # the parser's own words


def test_engine_args_issue_lists_every_bad_layer_and_names_cluster_templates_without_namespace():
    svc = service().spec(env=env(AIM_ENGINE_ARGS="--max-model-len 8192"), runtimeConfigName="team").build()
    tpl = template(namespace=None).spec(env=env(AIM_ENGINE_ARGS='["--tp", "2"]')).build()
    issue = engine_args_issue(env_layers(svc, tpl, "Cluster", {"env": env(AIM_ENGINE_ARGS="{}")}))
    assert issue is not None
    assert "AIMClusterServiceTemplate qwen3-32b-mi300x-lat-fp8 spec.env is JSON but not an object" in issue.message
    assert "AIMService ml-team/qwen-chat spec.env is not valid JSON" in issue.message
    assert "runtime config" not in issue.message  # '{}' is a fine object


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "AIM_ENGINE_ARGS", "value": ""},
        {"name": "AIM_ENGINE_ARGS", "valueFrom": {"configMapKeyRef": {"name": "args", "key": "json"}}},
        {"name": "OTHER", "value": "{not json"},
    ],
)
def test_engine_args_not_checked(entry):
    layers = env_layers(service().spec(env=[entry]).build(), template().build(), "Namespace", {})
    assert engine_args_issue(layers) is None


# ---------------------------------------------------------------- resources


@pytest.mark.parametrize(
    ("gpus", "template_resources", "service_resources", "expected"),
    [
        (0, None, None, {}),
        (0, {"requests": {"cpu": "2", "memory": "8Gi"}}, None, {"requests": {"cpu": "2", "memory": "8Gi"}}),
        (
            1,
            None,
            None,
            {"requests": {"cpu": "4", "memory": "32Gi", GPU: "1"}, "limits": {"memory": "48Gi", GPU: "1"}},
        ),
        (
            2,
            None,
            None,
            {"requests": {"cpu": "8", "memory": "64Gi", GPU: "2"}, "limits": {"memory": "96Gi", GPU: "2"}},
        ),
        (  # template overrides per resource name, requests and limits separately
            2,
            {"requests": {"memory": "100Gi"}, "limits": {"cpu": "16"}},
            None,
            {
                "requests": {"cpu": "8", "memory": "100Gi", GPU: "2"},
                "limits": {"memory": "96Gi", GPU: "2", "cpu": "16"},
            },
        ),
        (  # service wins over template
            1,
            {"requests": {"memory": "40Gi"}},
            {"requests": {"memory": "50Gi"}},
            {"requests": {"cpu": "4", "memory": "50Gi", GPU: "1"}, "limits": {"memory": "48Gi", GPU: "1"}},
        ),
        (  # service changes the GPU count in both sections
            1,
            None,
            {"requests": {GPU: "4"}, "limits": {GPU: "4"}},
            {"requests": {"cpu": "4", "memory": "32Gi", GPU: "4"}, "limits": {"memory": "48Gi", GPU: "4"}},
        ),
        (  # ... or in one: the other follows, since Kubernetes needs request == limit for GPUs; written as
            # Kubernetes prints quantities (issue 18)
            1,
            None,
            {"limits": {GPU: 2}},
            {"requests": {"cpu": "4", "memory": "32Gi", GPU: "2"}, "limits": {"memory": "48Gi", GPU: "2"}},
        ),
        (0, None, {"requests": {GPU: "1"}}, {"requests": {GPU: "1"}, "limits": {GPU: "1"}}),
    ],
)
def test_resources(gpus, template_resources, service_resources, expected):
    tpl = template(gpus).spec(resources=template_resources).build()
    svc = service().spec(resources=service_resources).build()
    assert container_resources(svc, tpl, GPU) == expected
    assert request(svc, tpl).resources == expected


@pytest.mark.parametrize(
    ("resolved", "declared", "expected"),
    [
        ("vendor.example/gpu-a", "vendor.example/gpu-b", "vendor.example/gpu-a"),
        (None, "vendor.example/gpu-b", "vendor.example/gpu-b"),
        (None, None, "default.example/gpu"),
    ],
)
def test_gpu_resource_name_resolution(resolved, declared, expected):
    tpl = template().spec(hardware={"gpu": {"requests": 1, **({"resourceName": declared} if declared else {})}})
    tpl.status(resolvedHardware={"gpu": {"requests": 1, **({"resourceName": resolved} if resolved else {})}})
    resources = container_resources(service().build(), tpl.build(), "default.example/gpu")
    assert resources["limits"] == {"memory": "48Gi", expected: "1"}


# ---------------------------------------------------------------- cache volumes


def artifact(name: str, model: str, status: str = "Ready", pvc: str | None = "pvc", **extra) -> dict:
    entry = {"name": name, "uid": f"uid-{name}", "model": model, "status": status, **extra}
    if pvc:
        entry["persistentVolumeClaim"] = pvc
    return entry


def cache(*artifacts: dict) -> dict:
    return (
        Obj("AIMTemplateCache", "qwen3-32b-1080a608")
        .status(status="Ready", artifacts={a["name"]: a for a in artifacts})
        .build()
    )


def test_cache_volumes_only_for_ready_artifacts_with_a_claim():
    volumes, mounts = cache_volumes(
        cache(
            artifact("hf---qwen-qwen3-32b-fc6a9647bb", "Qwen/Qwen3-32B", pvc="hf-qwen-cache-1a2b3c4d"),
            artifact("hf---other-downloading", "org/downloading", status="Progressing"),
            artifact("hf---other-failed", "org/failed", status="Failed"),
            artifact("hf---no-claim", "org/no-claim", pvc=None),
        )
    )
    assert volumes == [
        {"name": "hf---qwen-qwen3-32b-fc6a9647bb", "persistentVolumeClaim": {"claimName": "hf-qwen-cache-1a2b3c4d"}}
    ]
    assert mounts == [{"name": "hf---qwen-qwen3-32b-fc6a9647bb", "mountPath": "/workspace/cache/Qwen/Qwen3-32B"}]


@pytest.mark.parametrize(
    ("entry", "volume", "path"),
    [
        (artifact("s3---bucket.models-ab", "org/m"), "s3---bucket-models-ab", "/workspace/cache/org/m"),
        (artifact("a", "../../etc/passwd"), "a", "/workspace/cache/etc/passwd"),  # '..' removed
        (artifact("a", "org/m", mountPoint="/models/m"), "a", "/models/m"),
    ],
)
def test_cache_volume_names_and_mount_paths(entry, volume, path):
    volumes, mounts = cache_volumes(cache(entry))
    assert volumes[0]["name"] == volume and mounts == [{"name": volume, "mountPath": path}]


def test_cache_volumes_skip_a_second_artifact_for_the_same_mount_path():
    volumes, mounts = cache_volumes(cache(artifact("b", "org/m", pvc="pvc-b"), artifact("a", "org/m", pvc="pvc-a")))
    assert volumes == [{"name": "a", "persistentVolumeClaim": {"claimName": "pvc-a"}}]
    assert len(mounts) == 1


def test_no_cache_means_no_cache_volumes():
    assert cache_volumes(None) == ([], [])
    result = request()
    assert (list(result.volumes), list(result.volume_mounts)) == ([], [])


# ---------------------------------------------------------------- labels, names, pod settings


def test_labels_are_sanitised_and_empty_ones_left_out():
    tpl = template(name="Qwen3.32B_MI300X").spec(modelName="Org/Qwen3 32B")
    tpl.status(profile={"metadata": {"metric": "latency", "precision": ""}})
    assert serving_labels(service("Qwen-Chat").build(), tpl.build()) == {
        "aim.eai.amd.com/template": "qwen3.32b_mi300x",
        "aim.eai.amd.com/service": "qwen-chat",
        "aim.eai.amd.com/model": "org_qwen3_32b",
        "aim.eai.amd.com/metric": "latency",
    }


def test_extra_labels_are_kept_but_the_f48_labels_win():
    result = request(labels={"team": "nlp", "aim.eai.amd.com/service": "spoofed"})
    assert result.labels["team"] == "nlp" and result.labels["aim.eai.amd.com/service"] == "qwen-chat"


@pytest.mark.parametrize(
    ("name", "namespace"),
    [("qwen-chat", "ml-team"), ("a-very-long-service-name-for-the-qwen3-32b-model-x", "research-team-42")],
)
def test_name_fits_predictor_host_label(name, namespace):
    result = request(service(name, namespace).build())
    assert result.name == inference_service_name(name, namespace)
    assert len(f"{result.name}-predictor-{namespace}") <= 63
    assert result.namespace == namespace


def test_too_long_namespace_is_an_issue_not_a_crash():
    namespace = "n" * 43
    result = runtime_request(
        service("qwen-chat", namespace).build(),
        MODEL,
        template().build(),
        "Namespace",
        {},
        None,
        None,
        None,
        default_gpu_resource=GPU,
    )
    assert isinstance(result, Issue)
    assert (result.category, result.reason) == (Category.INVALID_SPEC, "NamespaceTooLong")
    assert namespace in result.message


def test_pod_settings_come_from_the_service_and_affinity_from_the_template():
    svc = (
        service()
        .spec(imagePullSecrets=[{"name": "regcred"}], serviceAccountName="inference", priorityClassName="high")
        .build()
    )
    tpl = template().spec(imagePullSecrets=[{"name": "template-secret"}], serviceAccountName="template-sa")
    result = request(svc, tpl.status(resolvedNodeAffinity=AFFINITY).build())
    # issue 20: the template's (and model's) pull secrets join the service's; upstream used the service's only
    assert (result.image, list(result.image_pull_secrets)) == (
        IMAGE,
        [{"name": "regcred"}, {"name": "template-secret"}],
    )
    assert (result.service_account_name, result.priority_class_name) == ("inference", "high")
    assert result.node_affinity == AFFINITY
    bare = request()
    assert (list(bare.image_pull_secrets), bare.service_account_name, bare.priority_class_name) == ([], None, None)
    assert bare.node_affinity is None


# ---------------------------------------------------------------- replicas and runtime status


@pytest.mark.parametrize(
    ("spec", "replicas", "scaling"),
    [
        ({}, 1, None),
        ({"replicas": 3}, 3, None),
        ({"replicas": 0}, 0, None),
        ({"minReplicas": 2}, None, ScalingRequest(2, 2)),
        ({"maxReplicas": 5}, None, ScalingRequest(1, 5)),
        ({"minReplicas": 4, "maxReplicas": 2}, None, ScalingRequest(4, 4)),  # max never below min
        ({"autoScaling": {}}, None, ScalingRequest(1, 1)),
        (
            {"replicas": 3, "minReplicas": 1, "maxReplicas": 3, "autoScaling": {"metrics": [POD_METRIC]}},
            None,
            ScalingRequest(1, 3, (POD_METRIC,)),
        ),
    ],
)
def test_replicas(spec, replicas, scaling):
    svc = service().spec(**spec).build()
    assert scaling_request(svc) == scaling
    result = request(svc)
    assert result.replicas == replicas
    assert (result.min_replicas, result.max_replicas) == (
        (scaling.min_replicas, scaling.max_replicas) if scaling else (None, None)
    )


@pytest.mark.parametrize(
    ("spec", "counts", "expected"),
    [
        ({}, None, (1, 1, 1, 1, "1")),
        ({"replicas": 3}, None, (3, 3, 3, 3, "3")),
        ({"minReplicas": 2}, None, (2, 2, 2, 2, "2")),
        ({"minReplicas": 1, "maxReplicas": 3}, None, (1, 1, 1, 3, "1/1 (1-3)")),  # Q14: bounds, not min = max
        ({"minReplicas": 1, "maxReplicas": 3}, ReplicaStatus(1, 3, 2, 3), (2, 3, 1, 3, "2/3 (1-3)")),
        ({"minReplicas": 2, "maxReplicas": 2}, ReplicaStatus(2, 2, 1, 2), (1, 2, 2, 2, "1")),
    ],
)
def test_runtime_status(spec, counts, expected):
    status = runtime_status(service().spec(**spec).build(), counts)
    assert status == dict(
        zip(("currentReplicas", "desiredReplicas", "minReplicas", "maxReplicas", "replicas"), expected)
    )


# ---------------------------------------------------------------- the plugins' objects


def build_isvc(req: RuntimeRequest, scaling: ScalingRequest | None) -> dict:
    from aim_plugin_keda.autoscaler import KedaAutoscaler
    from aim_plugin_kserve.inferenceservice import InferenceServiceBuilder

    objects = InferenceServiceBuilder().build(req)
    if scaling is not None:
        KedaAutoscaler().apply(objects, scaling)
    return objects[0]


def test_fixed_service_with_cache_and_affinity_builds_a_valid_inference_service():
    svc = (
        service()
        .spec(replicas=2, env=env(AIM_ENGINE_ARGS='{"max-model-len": 8192}'), imagePullSecrets=[{"name": "regcred"}])
        .build()
    )
    tpl = template(2).status(resolvedNodeAffinity=AFFINITY).build()
    req = request(svc, tpl, cache=cache(artifact("hf---qwen", "Qwen/Qwen3-32B", pvc="qwen-pvc")))
    isvc = build_isvc(req, scaling_request(svc))
    validate_against_crd(isvc, third_party_crd(ISVC_CRD))
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (2, 2)
    container = predictor["containers"][0]
    assert container["resources"]["limits"][GPU] == "2"
    assert {"name": "hf---qwen", "mountPath": "/workspace/cache/Qwen/Qwen3-32B"} in container["volumeMounts"]
    assert {"name": "hf---qwen", "persistentVolumeClaim": {"claimName": "qwen-pvc"}} in predictor["volumes"]
    assert predictor["affinity"] == {"nodeAffinity": AFFINITY}
    assert isvc["metadata"]["labels"]["aim.eai.amd.com/precision"] == "fp8"


def test_autoscaled_service_builds_a_valid_inference_service():
    svc = service().spec(minReplicas=1, maxReplicas=3, autoScaling={"metrics": [POD_METRIC]}).build()
    isvc = build_isvc(request(svc), scaling_request(svc))
    validate_against_crd(isvc, third_party_crd(ISVC_CRD))
    predictor = isvc["spec"]["predictor"]
    assert (predictor["minReplicas"], predictor["maxReplicas"]) == (1, 3)
    assert predictor["autoScaling"]["metrics"][0]["podmetric"]["metric"]["query"] == "vllm:num_requests_running"
    assert isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "keda"


def test_cpu_only_service_builds_a_valid_inference_service():
    tpl = template(0).spec(resources={"requests": {"cpu": "2", "memory": "8Gi"}}).build()
    isvc = build_isvc(request(tpl=tpl), None)
    validate_against_crd(isvc, third_party_crd(ISVC_CRD))
    assert isvc["spec"]["predictor"]["containers"][0]["resources"] == {"requests": {"cpu": "2", "memory": "8Gi"}}


def test_cache_volumes_of_the_live_object_survive_a_build_without_the_cache():
    """Q16: the builder carries the live object's volumes over, so a lost cache does not unmount the weights."""
    first = build_isvc(request(cache=cache(artifact("hf---qwen", "Qwen/Qwen3-32B", pvc="qwen-pvc"))), None)
    again = build_isvc(request(live=first), None)
    assert again["spec"]["predictor"]["volumes"] == first["spec"]["predictor"]["volumes"]
    assert (
        again["spec"]["predictor"]["containers"][0]["volumeMounts"]
        == first["spec"]["predictor"]["containers"][0]["volumeMounts"]
    )
