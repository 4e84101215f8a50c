"""Hostile artifact specs end in a specific condition, with nothing sent to the server and no retry loop."""

from __future__ import annotations

import pytest

from aim_core.artifact.plan import plan_artifact
from aim_core.artifact.quantities import QuantityError, parse_bytes
from aim_core.artifact.validation import filter_problems, source_problems
from tests.artifact.builders import cond, make_artifact, observed, status_after, wanted


def _invalid(art, ob=None):
    plan = plan_artifact(art, ob or observed())
    status = status_after(art, plan)
    assert not plan.apply and not plan.delete, "nothing may be sent for an invalid spec"
    assert plan.requeue_after is None
    assert status["status"] == "Failed"
    return status


@pytest.mark.parametrize(
    "size, why",
    [
        ("-1Gi", "negative"),
        (-5, "negative"),
        ("9999999999Ei", "more than"),
        (2**63, "more than"),
        ("1e40", "larger than any volume"),
        ("lots", "not a quantity"),
    ],
)
def test_bad_size_is_invalid_spec(size, why):
    status = _invalid(make_artifact(size=size))
    assert cond(status, "Ready")["reason"] == "InvalidSpec"
    assert cond(status, "ConfigValid")["reason"] == "InvalidSpec"
    assert why in cond(status, "Ready")["message"] and "spec.size" in cond(status, "Ready")["message"]


@pytest.mark.parametrize("size", [0, "0", "0Gi"])
def test_zero_size_means_unknown_and_is_measured(size):
    plan = plan_artifact(make_artifact(size=size), observed())
    assert [j["spec"]["template"]["spec"]["containers"][0]["name"] for j in wanted(plan, "Job")] == ["check-size"]


def test_size_that_overflows_with_headroom_is_invalid_spec():
    status = _invalid(make_artifact(size=str(2**63 - 1)), observed({"storage": {"pvcHeadroomPercent": 50}}))
    assert "headroom" in cond(status, "Ready")["message"]


@pytest.mark.parametrize(
    "uri",
    [
        "hf://org/../secrets",
        "hf://../x",
        "s3://bucket/a/../../b",
        "hf://org/./model",
        "hf://org//model",
        "hf://",
        "s3://",
        "hf://a/b/c",
        "s3://B!/key",
        "hf://org/mo del",
        "hf://org\\model",
        "ftp://x/y",
    ],
)
def test_bad_source_uri_is_invalid_spec(uri):
    status = _invalid(make_artifact(uri=uri))
    assert "spec.sourceUri" in cond(status, "Ready")["message"]


@pytest.mark.parametrize(
    "uri", ["hf://Qwen/Qwen3-32B", "hf://gpt2", "s3://models/llama/7b", "s3://my.bucket", "hf://org/model@main"]
)
def test_good_source_uris_pass(uri):
    assert source_problems(uri) == []


@pytest.mark.parametrize(
    "flt, why",
    [
        ({"include": [""]}, "empty pattern"),
        ({"exclude": ["  "]}, "empty pattern"),
        ({"include": ["[abc"]}, "unclosed"),
        ({"include": ["model-[!x.bin"]}, "unclosed"),
        ({"include": ["../*"]}, "outside the repository"),
        ({"exclude": ["/etc/*"]}, "outside the repository"),
        ({"include": ["a/../../b"]}, "outside the repository"),
        ({"include": ["x" * 600]}, "longer than"),
        ({"include": ["*"] * 101}, "more than 100"),
    ],
)
def test_bad_download_filter_is_invalid_spec(flt, why):
    status = _invalid(make_artifact(downloadFilter=flt))
    assert why in cond(status, "Ready")["message"] and "spec.downloadFilter" in cond(status, "Ready")["message"]


def test_bad_filter_in_the_runtime_config_is_reported_on_the_artifact():
    status = _invalid(make_artifact(size="1Gi"), observed({"storage": {"downloadFilter": {"include": ["[x"]}}}))
    assert "runtime config 'default' storage.downloadFilter" in cond(status, "Ready")["message"]


@pytest.mark.parametrize(
    "flt", [{}, {"include": ["*.json", "[]]x", "[!]]y", "model-?.safetensors"]}, {"exclude": ["*/*", "original/**"]}]
)
def test_good_filters_pass(flt):
    assert filter_problems(flt, "f") == []


def test_missing_named_runtime_config_is_reference_not_found_and_sends_nothing():
    art = make_artifact(size="1Gi", runtimeConfigName="gone")
    plan = plan_artifact(art, observed(None, "gone"))
    status = status_after(art, plan)
    assert status["status"] == "Failed" and cond(status, "Ready")["reason"] == "ReferenceNotFound"
    assert cond(status, "RuntimeConfigReady")["reason"] == "ReferenceNotFound"
    assert plan.issues and plan.requeue_after is None


def test_missing_default_runtime_config_is_fine():
    status = status_after(make_artifact(size="1Gi"), plan_artifact(make_artifact(size="1Gi"), observed()))
    assert cond(status, "RuntimeConfigReady")["reason"] == "DefaultConfigNotFound"


@pytest.mark.parametrize(
    "value, expected",
    [
        ("100Mi", 100 * 1024**2),
        ("1.5Gi", 1536 * 1024**2),
        ("1G", 10**9),
        ("5e3", 5000),
        ("0.5", 1),
        ("100m", 1),
        (2048, 2048),
        ("+7Ki", 7168),
    ],
)
def test_parse_bytes(value, expected):
    assert parse_bytes(value) == expected


@pytest.mark.parametrize("value", ["", "Gi", "1.2.3", "-1", True, float("inf"), "1Zi"])
def test_parse_bytes_refuses(value):
    with pytest.raises(QuantityError):
        parse_bytes(value)


@pytest.mark.parametrize(
    "spec, config, why",
    [
        ({"env": [{"name": "1BAD", "value": "x"}]}, None, "spec.env: '1BAD' is not a valid environment variable name"),
        ({"env": [{"name": "A=B", "value": "x"}]}, None, "'A=B'"),
        ({}, {"env": [{"name": "has space", "value": "x"}]}, "runtime config 'default' env"),
        ({"storageClassName": "Fast_SSD"}, None, "spec.storageClassName 'Fast_SSD'"),
        ({}, {"storage": {"defaultStorageClassName": "-x"}}, "storage.defaultStorageClassName"),
        ({"imagePullSecrets": [{"name": "My Secret"}]}, None, "spec.imagePullSecrets"),
        ({"modelDownloadImage": "registry/img :1"}, None, "spec.modelDownloadImage"),
    ],
)
def test_values_the_api_server_would_refuse_in_a_job_or_pvc_are_invalid_spec(spec, config, why):
    status = _invalid(make_artifact(size="1Gi", **spec), observed(config))
    assert why in cond(status, "Ready")["message"]


def test_valid_env_names_pass():
    art = make_artifact(
        size="1Gi",
        env=[{"name": "HF_TOKEN", "value": "x"}, {"name": "my.var-1", "value": "y"}],
        storageClassName="nfs.csi",
        imagePullSecrets=[{"name": "pull-secret"}],
    )
    assert not plan_artifact(art, observed()).issues
