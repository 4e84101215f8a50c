"""`aim-engine inspect IMAGE` reads an image's metadata through the same facade as the model controller."""

import json

from aim_core.cli import main

LABELS = {
    "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
    "com.amd.aim.model.recommendedDeployments": '[{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]',
    "org.opencontainers.image.version": "0.8.5",
}


def test_text_output_names_model_deployments_and_labels(oci_registry, unique_repo, capsys):
    pushed = oci_registry.push_index(unique_repo, "0.8.5", {"linux/amd64": LABELS, "linux/arm64": {}})
    assert main(["inspect", pushed.reference]) == 0
    out = capsys.readouterr().out
    assert f"digest:    {pushed.children['linux/amd64']}" in out
    assert f"index:     {pushed.digest} (linux/amd64 chosen)" in out
    assert "model:     Qwen/Qwen3-32B" in out
    assert "recommended deployments: 1\n  - gpuModel=MI300X gpuCount=1 metric=latency precision=fp8" in out
    assert "  org.opencontainers.image.version=0.8.5" in out
    assert "registry requests: 3" in out


def test_json_output_is_the_status_image_metadata(oci_registry, unique_repo, capsys):
    pushed = oci_registry.push_image(unique_repo, "1.0", labels=LABELS)
    assert main(["inspect", "--json", pushed.reference]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["digest"] == pushed.digest and out["client"] == "oci" and out["registryRequests"] == 2
    assert out["imageMetadata"]["model"]["canonicalName"] == "Qwen/Qwen3-32B"
    assert out["imageMetadata"]["oci"] == {"version": "0.8.5"}
    assert out["imageMetadata"]["originalLabels"] == LABELS


def test_credentials_from_a_docker_config_file(oci_registry_basic, unique_repo, capsys, tmp_path):
    pushed = oci_registry_basic.push_image(unique_repo, "1.0", labels={"a": "b"})
    config = tmp_path / "config.json"
    import base64

    config.write_bytes(base64.b64decode(oci_registry_basic.pull_secret()["data"][".dockerconfigjson"]))
    assert main(["inspect", pushed.reference, "--pull-secret", str(config)]) == 0
    assert "  a=b" in capsys.readouterr().out
    assert main(["inspect", pushed.reference]) == 1
    err = capsys.readouterr().err
    assert err.startswith("aim-engine: Unauthorized: ") and pushed.reference in err


def test_missing_image_and_bad_reference_exit_non_zero_with_a_reason(oci_registry, unique_repo, capsys):
    assert main(["inspect", oci_registry.image(unique_repo, "nope")]) == 1
    assert "ImageNotFound" in capsys.readouterr().err
    assert main(["inspect", "Not A Reference"]) == 2
    assert "whitespace" in capsys.readouterr().err
