"""Templates a model creates: recommended deployments (F23) and custom templates (F27, F28, Q12, Q13)."""

from __future__ import annotations

from aim_core.model.templates import custom_templates, generated_digest, merge_hardware, recommended_templates
from aim_core.reconcile.naming import custom_template_name
from tests.model.builders import model

SOURCE = {"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2"}
HW = {"gpu": {"requests": 1, "model": "MI300X"}, "cpu": {"requests": "4"}}


def test_one_template_per_recommended_deployment_with_the_upstream_name_and_spec():
    m = model("m", imagePullSecrets=[{"name": "regcred"}], serviceAccountName="sa", runtimeConfigName="team")
    (tpl, cpu_only) = recommended_templates(
        m,
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp16", "profileId": "p1"},
            {"metric": "throughput"},
        ],
    )
    assert tpl["metadata"] == {
        "name": "ghcr-io-silogen-aim-dummy-0-1-10-1x-mi300x-lat-fp16-0823",  # spec 2.5 example
        "namespace": "ml-team",
        "labels": {"aim.eai.amd.com/model": "m", "aim.eai.amd.com/origin": "auto-generated"},
        "annotations": {"aim.eai.amd.com/generated-spec": generated_digest(tpl["spec"])},  # issue 18: clones kept
    }
    assert tpl["spec"] == {
        "modelName": "m",
        "metric": "latency",
        "precision": "fp16",
        "profileId": "p1",
        "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
        "imagePullSecrets": [{"name": "regcred"}],
        "serviceAccountName": "sa",
        "runtimeConfigName": "team",
    }
    assert "hardware" not in cpu_only["spec"]  # the GPU block needs both model and count


def test_cluster_model_templates_have_no_namespace_and_long_model_names_get_a_hashed_label():
    long_name = "a" * 70
    (tpl,) = recommended_templates(model(long_name, namespace=None), [{"gpuModel": "MI300X", "gpuCount": 1}])
    assert "namespace" not in tpl["metadata"] and len(tpl["metadata"]["name"]) <= 63
    label = tpl["metadata"]["labels"]["aim.eai.amd.com/model"]
    assert len(label) <= 63 and label.startswith("aaaa") and label != "a" * 63


def test_a_custom_model_without_custom_templates_gets_one_template():
    m = model(
        "auto-gen-template-test",
        modelSources=[SOURCE],
        custom={"hardware": HW, "type": "preview"},
        env=[{"name": "A", "value": "1"}],
    )
    (tpl,) = custom_templates(m)
    assert tpl["metadata"]["name"] == "auto-gen-template-test-custom-60ba3f14"  # spec 2.5 example
    assert tpl["spec"]["modelSources"] == [SOURCE] and tpl["spec"]["type"] == "preview"
    assert tpl["spec"]["hardware"] == HW and tpl["spec"]["resources"] == {"requests": {"cpu": "4"}}
    assert tpl["spec"]["env"] == [{"name": "A", "value": "1"}]
    assert "aim.eai.amd.com/template.alias" not in tpl["metadata"]["labels"]


def test_custom_templates_merge_hardware_type_env_and_carry_the_alias_label():
    m = model(
        "custom-model-test",
        namespace=None,
        modelSources=[SOURCE],
        custom={"hardware": HW, "type": "optimized"},
        env=[{"name": "A", "value": "model"}, {"name": "B", "value": "model"}],
        customTemplates=[
            {"name": "single", "profile": {"metric": "latency", "precision": "fp8"}},
            {
                "name": "multi-gpu",
                "type": "unoptimized",
                "hardware": {"gpu": {"requests": 2}},
                "env": [{"name": "B", "value": "tpl"}],
            },
        ],
    )
    first, second = custom_templates(m)
    assert first["spec"]["type"] == "optimized"  # Q12: custom.type reaches listed templates
    assert first["spec"]["metric"] == "latency" and first["spec"]["precision"] == "fp8"
    assert first["metadata"]["labels"]["aim.eai.amd.com/template.alias"] == "single"
    assert second["metadata"]["name"] == custom_template_name("custom-model-test", 1, "multi-gpu", gpu=(2, "MI300X"))
    assert second["metadata"]["name"].startswith("custom-model-test-custom-multi-gpu-mi300x-")
    assert second["spec"]["type"] == "unoptimized"
    assert second["spec"]["hardware"] == {"gpu": {"requests": 2, "model": "MI300X"}, "cpu": {"requests": "4"}}
    # Q13: the cluster model's templates get the merged env too (template wins by name)
    assert second["spec"]["env"] == [{"name": "A", "value": "model"}, {"name": "B", "value": "tpl"}]
    assert "namespace" not in second["metadata"]


def test_an_image_model_declares_no_template_from_sources_it_does_not_have():
    assert custom_templates(model("m")) == []
    (tpl,) = custom_templates(model("m", customTemplates=[{"hardware": HW}]))
    assert "modelSources" not in tpl["spec"] and tpl["spec"]["type"] == "unoptimized"


def test_hardware_merge_keeps_model_and_min_vram_exclusive():
    base = {"gpu": {"requests": 1, "model": "MI300X"}, "cpu": {"requests": "2", "limits": "4"}}
    assert merge_hardware(base, {"gpu": {"minVram": "128Gi"}}) == {
        "gpu": {"requests": 1, "minVram": "128Gi"},
        "cpu": {"requests": "2", "limits": "4"},
    }
    assert merge_hardware({"gpu": {"minVram": "64Gi"}}, {"gpu": {"model": "MI325X", "requests": 0}}) == {
        "gpu": {"model": "MI325X"}
    }
    assert merge_hardware(None, {"cpu": {"requests": "1"}}) == {"cpu": {"requests": "1"}}
    assert merge_hardware(base, {"cpu": {"limits": "8"}})["cpu"] == {"requests": "2", "limits": "8"}
    assert merge_hardware(base, None) == base


def test_label_values_stand_for_any_name_and_never_collide():
    from aim_core.reconcile.naming import hashed_label_value

    assert hashed_label_value("qwen3-32b") == "qwen3-32b"  # valid values are kept as they are
    long_a, long_b = "m" * 63 + "-a", "m" * 63 + "-b"
    assert hashed_label_value(long_a) != hashed_label_value(long_b)
    assert all(len(hashed_label_value(v)) <= 63 for v in (long_a, long_b, "Multi GPU!", "..", ""))
    assert hashed_label_value("Multi GPU!").startswith("multi_gpu-")
    assert hashed_label_value("..") and hashed_label_value("") and hashed_label_value("..") != hashed_label_value("")
