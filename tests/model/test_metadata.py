"""Image labels → status.imageMetadata (F21, 2.9, Q8 inputs)."""

from __future__ import annotations

import json

import pytest

from aim_core.model.metadata import InvalidMetadata, from_object, parse_deployments, parse_labels

DEPLOYMENTS = [
    {
        "gpuModel": "MI300X",
        "gpuCount": 1,
        "precision": "fp8",
        "metric": "latency",
        "profileId": "p1",
        "description": "fast",
    },
    {"gpuModel": "MI325X", "gpuCount": 8, "precision": "fp16", "metric": "throughput"},
]


def test_aim_labels_oci_labels_and_the_raw_labels_all_land_in_status():
    labels = {
        "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
        "com.amd.aim.model.source": "https://huggingface.co/Qwen/Qwen3-32B",
        "com.amd.aim.title": " Qwen3 32B ",
        "com.amd.aim.description.full": "long text",
        "com.amd.aim.release.notes": "notes",
        "com.amd.aim.model.tags": "chat, reasoning,,",
        "com.amd.aim.model.versions": "0.8.5",
        "com.amd.aim.model.variants": "a,b",
        "com.amd.aim.hfToken.required": "TRUE",
        "com.amd.aim.model.recommendedDeployments": json.dumps(DEPLOYMENTS),
        "org.opencontainers.image.vendor": "AMD",
        "org.opencontainers.image.created": "2025-05-20T11:02:37Z",
        "unrelated": "x",
    }
    parsed = parse_labels(labels)
    model = parsed.metadata["model"]
    assert model["canonicalName"] == "Qwen/Qwen3-32B" and parsed.canonical_name == "Qwen/Qwen3-32B"
    assert model["title"] == "Qwen3 32B" and model["descriptionFull"] == "long text"
    assert model["releaseNotes"] == "notes"
    assert model["tags"] == ["chat", "reasoning"] and model["variants"] == ["a", "b"]
    assert model["versions"] == ["0.8.5"] and model["hfTokenRequired"] is True
    assert model["recommendedDeployments"] == DEPLOYMENTS
    assert parsed.metadata["oci"] == {"vendor": "AMD", "created": "2025-05-20T11:02:37Z"}
    assert parsed.metadata["originalLabels"] == labels
    assert list(parsed.deployments) == DEPLOYMENTS and parsed.problems == ()


def test_the_new_prefix_wins_over_the_old_one_which_is_still_read():
    parsed = parse_labels(
        {
            "org.amd.silogen.model.canonicalName": "old/name",
            "org.amd.silogen.title": "Old",
            "com.amd.aim.model.canonicalName": "new/name",
        }
    )
    assert parsed.metadata["model"] == {"canonicalName": "new/name", "title": "Old"}


def test_an_image_without_labels_has_empty_metadata_and_no_deployments():
    parsed = parse_labels({})
    assert parsed.metadata == {"originalLabels": {}}
    assert parsed.deployments == () and parsed.canonical_name == ""
    assert parse_labels(None).metadata == {"originalLabels": {}}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(DEPLOYMENTS),
        ", ".join(json.dumps(d) for d in DEPLOYMENTS),
        str(DEPLOYMENTS),  # Python-style dicts: single quotes
        "[{'gpuModel': 'MI300X', 'gpuCount': 1, 'precision': 'fp8', 'metric': 'latency', 'profileId': 'p1', "
        "'description': 'fast'}, {'gpuModel': 'MI325X', 'gpuCount': 8, 'precision': 'fp16', 'metric': 'throughput'}]",
    ],
)
def test_recommended_deployments_are_read_in_all_three_spellings(text):
    assert parse_deployments(text) == DEPLOYMENTS


def test_single_quoted_text_with_an_apostrophe_in_double_quotes_survives():
    text = """[{'gpuModel': 'MI300X', 'description': "it's fast", 'flag': True}]"""
    assert parse_deployments(text) == [{"gpuModel": "MI300X", "description": "it's fast", "flag": True}]


def test_unreadable_deployments_raise_with_a_message_naming_the_label():
    with pytest.raises(InvalidMetadata, match="recommendedDeployments"):
        parse_labels({"com.amd.aim.model.recommendedDeployments": "gpu=MI300X;count=1"})


def test_labels_too_large_for_a_status_are_refused():
    with pytest.raises(InvalidMetadata, match="bytes"):
        parse_labels({"big": "x" * 300_000})


def test_entries_a_template_could_not_carry_are_kept_in_status_but_not_used():
    labels = {
        "com.amd.aim.model.recommendedDeployments": json.dumps(
            [
                {"gpuModel": "MI300X", "gpuCount": "2", "precision": "FP8", "metric": "Latency"},
                {"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp9"},
                {"gpuModel": "MI300X", "gpuCount": -1},
                {"gpuModel": "M" * 70, "gpuCount": 1},
                "not an object",
                {"gpuModel": "MI300X", "gpuCount": True},
            ]
        )
    }
    parsed = parse_labels(labels)
    assert list(parsed.deployments) == [{"gpuModel": "MI300X", "gpuCount": 2, "precision": "fp8", "metric": "latency"}]
    assert len(parsed.problems) == 5
    assert "#2 precision 'fp9' is not one of" in parsed.problems[0]
    assert "#3 gpuCount -1" in parsed.problems[1]
    assert "#5 is a str" in parsed.problems[3]


def test_the_older_deployments_label_is_read_when_the_new_one_is_absent():
    parsed = parse_labels({"org.amd.silogen.model.deployments": json.dumps(DEPLOYMENTS[:1])})
    assert list(parsed.deployments) == DEPLOYMENTS[:1]


def test_metadata_from_the_spec_is_used_as_is_and_its_deployments_checked():
    given = {
        "model": {
            "canonicalName": "x/y",
            "recommendedDeployments": [
                {"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8"},
                {"precision": "nope"},
            ],
        }
    }
    parsed = from_object(given)
    assert parsed.metadata == given
    assert list(parsed.deployments) == [{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8"}]
    assert parsed.problems == (
        "spec.imageMetadata recommended deployment #2 precision 'nope' is not one of "
        "auto, fp4, fp8, fp16, fp32, bf16, int4, int8",
    )
