"""Model accessors, the kind registry, and the fields only the newer API has."""

import attrs
import pytest

from aim_core.api import (
    KINDS,
    AIMArtifactSpec,
    AIMClusterModelSourceSpec,
    AIMClusterRuntimeConfigSpec,
    AIMClusterServiceTemplateSpec,
    AIMCustomTemplate,
    AIMRuntimeConfigSpec,
    AIMServiceCachingConfig,
    AIMServiceModel,
    AIMServiceSpec,
    AIMServiceTemplateSpec,
    AIMStorageConfig,
    ModelError,
    info_for,
    kind_info,
    parse,
    unstructure,
)
from aim_core.api.fields import class_meta, meta_of


def fields_of(cls) -> dict:
    return {a.name: meta_of(a) for a in attrs.fields(cls)}


# --- accessors -------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "effective"),
    [
        (None, "Shared"),
        ("Shared", "Shared"),
        ("Dedicated", "Dedicated"),
        ("Always", "Shared"),
        ("Auto", "Shared"),
        ("Never", "Dedicated"),
    ],
)
def test_caching_mode_is_normalised(mode, effective):
    spec = AIMServiceSpec(model=AIMServiceModel(name="m"), caching=AIMServiceCachingConfig(mode=mode))
    assert spec.effective_caching_mode() == effective


def test_caching_mode_defaults_to_shared_without_caching_block():
    assert AIMServiceSpec(model=AIMServiceModel(name="m")).effective_caching_mode() == "Shared"


def test_effective_replicas_and_autoscaling():
    spec = AIMServiceSpec(model=AIMServiceModel(name="m"))
    assert spec.effective_replicas() == 1
    assert not spec.autoscaling_enabled()
    assert attrs.evolve(spec, replicas=0).effective_replicas() == 0
    assert attrs.evolve(spec, min_replicas=2).autoscaling_enabled()


def test_deprecated_runtime_config_storage_fields_fill_the_gaps():
    old = AIMRuntimeConfigSpec(default_storage_class_name="slow", pvc_headroom_percent=25)
    assert old.effective_storage() == AIMStorageConfig(default_storage_class_name="slow", pvc_headroom_percent=25)
    both = attrs.evolve(old, storage=AIMStorageConfig(default_storage_class_name="fast", pvc_headroom_percent=0))
    assert both.effective_storage() == AIMStorageConfig(default_storage_class_name="fast", pvc_headroom_percent=0)
    assert AIMRuntimeConfigSpec().effective_storage() == AIMStorageConfig()


# --- registry --------------------------------------------------------------


def test_twelve_kinds_with_their_scope():
    scopes = {k.kind: k.scope for k in KINDS}
    assert scopes == {
        "AIMService": "Namespaced",
        "AIMModel": "Namespaced",
        "AIMClusterModel": "Cluster",
        "AIMServiceTemplate": "Namespaced",
        "AIMClusterServiceTemplate": "Cluster",
        "AIMRuntimeConfig": "Namespaced",
        "AIMClusterRuntimeConfig": "Cluster",
        "AIMTemplateCache": "Namespaced",
        "AIMArtifact": "Namespaced",
        "AIMClusterModelSource": "Cluster",
        "AIMBenchmark": "Namespaced",  # beyond upstream (issue 23)
        "AIMBenchmarkSweep": "Namespaced",  # beyond upstream (issue 23)
    }


def test_kind_lookup_and_names():
    info = kind_info("AIMArtifact")
    assert (info.plural, info.singular, info.short_names) == ("aimartifacts", "aimartifact", ("aimart",))
    assert [c.name for c in info.printer_columns if c.priority == 1] == ["Protocol", "Attempt"]
    assert kind_info("Pod") is None
    assert all(k.categories == ("aim", "all") and k.status_subresource for k in KINDS)


def test_every_class_knows_its_kind():
    for info in KINDS:
        obj = parse({"apiVersion": info.api_version, "kind": info.kind, "spec": _minimal_spec(info.kind)})
        assert type(obj) is info.cls
        assert obj.kind == info.cls(spec=obj.spec).kind == info.kind
        assert info_for(obj) is info is info_for(info.cls)


def _minimal_spec(kind: str) -> dict:
    return {
        "AIMService": {"model": {"name": "m"}},
        "AIMModel": {"image": "i"},
        "AIMClusterModel": {"image": "i"},
        "AIMServiceTemplate": {"modelName": "m"},
        "AIMClusterServiceTemplate": {"modelName": "m"},
        "AIMTemplateCache": {"templateName": "t", "templateScope": "Namespace"},
        "AIMArtifact": {"sourceUri": "hf://a/b"},
        "AIMClusterModelSource": {"images": ["a/b"]},
        "AIMBenchmark": {"target": {"serviceName": "s"}, "scenarios": ["D(8,8)"], "concurrency": [1], "maxRequests": 1},
        "AIMBenchmarkSweep": {
            "model": "m",
            "benchmark": {"scenarios": ["D(8,8)"], "concurrency": [1], "maxRequests": 1},
        },
    }.get(kind, {})


# --- newer API (seed S0, S4) -------------------------------------------------


def test_artifact_retention_and_download_filter():
    meta = fields_of(AIMArtifactSpec)
    assert meta["retention_priority"].minimum == 0
    assert not meta["download_filter"].required
    assert meta["source_uri"].immutable == "sourceUri is immutable"


def test_runtime_config_artifact_defaults_and_cluster_only_quota():
    assert fields_of(AIMRuntimeConfigSpec)["artifact"].description
    assert "artifact_storage_quota" not in fields_of(AIMRuntimeConfigSpec)
    assert "artifact_storage_quota" in fields_of(AIMClusterRuntimeConfigSpec)
    doc = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": "default"},
        "spec": {
            "artifact": {"defaultRetentionPriority": 0},
            "artifactStorageQuota": {"clusterLimit": "10Ti", "defaultNamespaceLimit": 500},
            "storage": {"downloadFilter": {"include": ["*.safetensors"], "exclude": []}},
        },
    }
    assert unstructure(parse(doc)) == doc
    doc["kind"] = "AIMRuntimeConfig"
    with pytest.raises(ModelError, match=r"\$\.spec\.artifactStorageQuota: unknown field"):
        parse(doc)


@pytest.mark.parametrize("cls", [AIMServiceTemplateSpec, AIMClusterServiceTemplateSpec, AIMCustomTemplate])
def test_templates_take_aim_id_model_id_and_custom_profile(cls):
    names = fields_of(cls)
    assert {"aim_id", "model_id", "custom_profile"} <= set(names)


def test_custom_profile_keeps_free_json():
    doc = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": "t"},
        "spec": {
            "modelName": "m",
            "aimId": "meta-llama/Llama-3-8B",
            "modelId": "Qwen/Qwen3-32B-FP8",
            "customProfile": {"engineArgs": {"max-model-len": 8192, "flags": [True, None]}, "envVars": {"A": "1"}},
        },
    }
    assert unstructure(parse(doc)) == doc


def test_service_priority_class():
    assert "priority_class_name" in fields_of(AIMServiceSpec)


def test_model_source_images_or_filters():
    meta = fields_of(AIMClusterModelSourceSpec)
    assert not meta["filters"].required
    assert (meta["filters"].min_items, meta["filters"].max_items) == (1, 100)
    ((rule, message),) = class_meta(AIMClusterModelSourceSpec).cel
    assert "self.images" in rule and "self.filters" in rule and "exactly one" in message
