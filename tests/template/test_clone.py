"""`aim-engine templates clone` (F87): copies of the cluster templates of one GPU for another, as YAML."""

from __future__ import annotations

from pathlib import Path

import yaml

from aim_core.cli import main
from aim_core.template.clone import clone_name, clone_templates

ROOT = Path(__file__).resolve().parents[2]
MI300X_LATENCY = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"


def test_names_have_the_gpu_replaced_or_a_suffix():
    assert clone_name("qwen-1x-mi300x-lat", "MI300X", "MI308X") == "qwen-1x-mi308x-lat"
    assert clone_name("my-template", "MI300X", "MI308X") == "my-template-mi308x"
    assert len(clone_name("x" * 253, "MI300X", "MI308X")) == 253


def test_the_examples_mi300x_templates_are_cloned_for_mi308x_from_files(capsys):
    assert (
        main(
            [
                "templates",
                "clone",
                "--from-gpu",
                "MI300X",
                "--to-gpu",
                "MI308X",
                "-f",
                str(ROOT / "examples" / "templates.yaml"),
            ]
        )
        == 0
    )
    clones = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    by_name = {c["metadata"]["name"]: c for c in clones}
    clone = by_name[MI300X_LATENCY.replace("mi300x", "mi308x")]
    assert clone["kind"] == "AIMClusterServiceTemplate" and "status" not in clone
    assert clone["spec"]["hardware"]["gpu"]["model"] == "MI308X"
    assert {"name": "AIM_GPU_MODEL", "value": "MI300X"} in clone["spec"]["env"]
    assert clone["spec"]["modelName"] == "qwen3-32b" and clone["spec"]["profileId"] == "vllm-mi300x-fp8-tp1-latency"
    assert "ownerReferences" not in clone["metadata"] and "uid" not in clone["metadata"]
    assert "app.kubernetes.io/managed-by" not in clone["metadata"].get("labels", {})
    assert all(c["spec"]["hardware"]["gpu"]["model"] == "MI308X" for c in clones)


def test_no_template_of_that_gpu_is_an_error(capsys):
    assert (
        main(
            [
                "templates",
                "clone",
                "--from-gpu",
                "H100",
                "--to-gpu",
                "H200",
                "-f",
                str(ROOT / "examples" / "templates.yaml"),
            ]
        )
        == 1
    )
    assert "no AIMClusterServiceTemplate for GPU H100" in capsys.readouterr().err


def test_copies_that_exist_already_are_not_printed_again():
    original = {
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": "t-mi300x"},
        "spec": {"modelName": "m", "hardware": {"gpu": {"model": "MI300X", "requests": 1}}},
    }
    [clone] = clone_templates([original], "mi300x", "MI308X")
    assert clone["metadata"]["name"] == "t-mi308x"
    assert clone_templates([original, clone], "MI300X", "MI308X") == []
