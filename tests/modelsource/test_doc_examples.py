"""Every example of the model-sources document, against a catalog holding matching images:
the AIMClusterModels it creates and the status it reports (F77-F80)."""

from __future__ import annotations

import pytest

from aim_core.modelsource.plan import plan_source
from aim_core.reconcile.naming import cluster_model_name_from_source
from tests.modelsource.docexamples import CATALOG, DEEPSEEK, EXAMPLES, QWEN, MemoryCatalog, example
from tests.modelsource.helpers import as_live, condition, created, images, observed, run, synced

IDS = [s["metadata"]["name"] for s, _ in EXAMPLES]


@pytest.mark.parametrize(("source", "expected"), EXAMPLES, ids=IDS)
async def test_each_example_creates_the_documented_models_and_is_ready(source, expected):
    plan, status = await run(source)

    assert images(plan) == expected
    assert status["status"] == "Ready"
    assert condition(status, "FiltersReady")["reason"] == "AllFiltersSucceeded"
    assert condition(status, "MaxModelsLimitReached")["status"] == "False"
    assert status["discoveredModels"] == len(expected)
    assert status["availableModels"] == len(expected)
    assert status["modelsLimitReached"] is False
    assert status["lastSyncTime"] == "2026-03-01T12:00:00Z"


@pytest.mark.parametrize(("source", "expected"), EXAMPLES, ids=IDS)
async def test_each_example_syncs_again_without_creating_anything(source, expected):
    plan, _ = await run(source)
    models = [as_live(obj) for obj in created(plan)]

    again, status = await run(source, models=models)

    assert again.apply == []
    assert status["discoveredModels"] == len(expected)


async def test_models_are_named_labelled_annotated_and_point_at_the_image():
    source, _ = example("amd-models")
    plan, _ = await run(source)

    qwen = next(obj for obj in created(plan) if obj["spec"]["image"] == f"{QWEN}:0.8.5")
    assert qwen["metadata"]["name"] == "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-72f726"  # spec 2.5 example
    assert qwen["metadata"]["labels"] == {
        "aim.eai.amd.com/model-source": "amd-models",
        "aim.eai.amd.com/origin": "auto-generated",
    }
    assert qwen["metadata"]["annotations"] == {
        "aim.eai.amd.com/source-registry": "docker.io",
        "aim.eai.amd.com/source-repository": QWEN,
        "aim.eai.amd.com/source-tag": "0.8.5",
    }
    assert qwen["spec"] == {"image": f"{QWEN}:0.8.5"}
    assert all(d.owned for d in plan.apply)  # owner reference to the source: deleted with it


async def test_other_registries_keep_the_host_in_the_image_and_the_hash():
    source, _ = example("specific-versions")
    plan, _ = await run(source)

    names = {obj["spec"]["image"]: obj["metadata"]["name"] for obj in created(plan)}
    image = f"ghcr.io/{QWEN}:0.8.5"
    assert names[image] == cluster_model_name_from_source("ghcr.io", QWEN, "0.8.5")
    assert names[image] != "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-72f726"  # docker.io's differs by registry


async def test_pull_secrets_of_the_source_go_to_its_models():
    source, _ = example("private-models")
    plan, _ = await run(source)

    assert {tuple(map(str, o["spec"]["imagePullSecrets"][0].values())) for o in created(plan)} == {
        ("private-registry-creds",)
    }


async def test_explicit_tags_need_no_registry_request():
    catalog = MemoryCatalog()
    source, _ = example("specific-versions")

    await synced(source, catalog)

    assert catalog.requests == []


async def test_the_filter_host_overrides_spec_registry():
    catalog = MemoryCatalog()
    source, _ = example("multi-registry-models")

    await synced(source, catalog)

    assert sorted(catalog.requests) == [("tags", "docker.io", QWEN), ("tags", "ghcr.io", DEEPSEEK)]


async def test_max_models_status_when_the_limit_bites():
    source, _ = example("ghcr-stable-models")  # 8 matching images
    source["spec"]["maxModels"] = 5

    plan, status = await run(source)

    assert len(created(plan)) == 5
    assert status["discoveredModels"] == 5
    assert status["availableModels"] == 8
    assert status["modelsLimitReached"] is True
    limit = condition(status, "MaxModelsLimitReached")
    assert (limit["status"], limit["reason"]) == ("True", "LimitReached")
    assert "3 available images not created as models" in limit["message"]
    assert status["status"] == "Ready"  # informational: all selectors succeeded


async def test_the_limit_counts_existing_models_and_prefers_newer_versions():
    source, _ = example("ghcr-stable-models")
    source["spec"]["maxModels"] = 3
    plan, _ = await run(source)
    first = [as_live(o) for o in created(plan)]

    again, status = await run(source, models=first)

    assert again.apply == []  # 3 exist, 3 allowed
    assert status["discoveredModels"] == 3
    tags = sorted(o["metadata"]["annotations"]["aim.eai.amd.com/source-tag"] for o in first)
    # entries in spec order (qwen first), newest version first
    assert tags == ["0.8.4", "0.8.5", "0.9.1"]


async def test_wildcards_list_repositories_then_tags_and_honour_exclusions():
    source = example("exclusions")[0]
    source["spec"]["filters"] = [
        {
            "image": "amdenterpriseai/aim-*",
            "versions": ["~0.8.0"],
            "exclude": ["amdenterpriseai/aim-base", "amdenterpriseai/aim-experimental"],
        }
    ]

    plan, status = await run(source)

    assert images(plan) == {f"{QWEN}:0.8.4", f"{QWEN}:0.8.5", f"{DEEPSEEK}:0.8.4", f"{DEEPSEEK}:0.8.5"}
    assert status["status"] == "Ready"


async def test_a_wildcard_with_a_registry_host_matches_only_there():
    source = example("exclusions")[0]
    source["spec"]["filters"] = [{"image": "ghcr.io/silogen/aim-*"}]

    plan, _ = await run(source)

    assert images(plan) == {f"ghcr.io/silogen/aim-google-gemma-3-1b-it:{t}" for t in ("0.8.0", "0.8.1-rc1")}


async def test_overlapping_filters_count_each_image_once():
    source = example("exclusions")[0]
    source["spec"]["filters"] = [{"image": f"{QWEN}:0.8.5"}, {"image": QWEN, "versions": ["=0.8.5"]}]

    plan, status = await run(source)

    assert images(plan) == {f"{QWEN}:0.8.5"}
    assert status["availableModels"] == 1  # Q27: upstream would say 2 and report the limit as reached
    assert status["modelsLimitReached"] is False


async def test_a_model_whose_name_is_taken_by_someone_else_is_left_alone():
    source, _ = example("amd-models")
    plan, _ = await run(source)
    mine = next(o for o in created(plan) if o["spec"]["image"] == f"{QWEN}:0.8.5")
    foreign = {"metadata": {"name": mine["metadata"]["name"], "labels": {}}, "spec": {"image": "someone/else:1"}}

    sync = await synced(source)
    again = plan_source(source, observed(source, sync, [], others=[foreign]))

    assert images(again) == {f"{DEEPSEEK}:0.8.5"}
    assert any("is not this source's" in note for note in again.notes)


def test_the_catalog_holds_every_repository_the_examples_name():
    for _source, expected in EXAMPLES:
        for image in expected:
            registry = image.split("/")[0] if image.count("/") == 2 else "docker.io"
            repo_tag = image.split("/", 1)[1] if registry != "docker.io" else image
            repository, tag = repo_tag.rsplit(":", 1)
            assert tag in CATALOG[registry][repository], image


async def test_a_source_beside_another_matching_the_same_images_counts_what_its_filters_matched():
    # upstream's aimclustermodelsource/wildcard run beside another source with the same filters (issue 18):
    # the models the other source made are left alone but count, for discoveredModels and for maxModels.
    first, _ = example("amd-models")
    plan, _ = await run(first)
    theirs = [as_live(obj) for obj in created(plan)]
    assert len(theirs) >= 2

    second = {
        **first,
        "metadata": {**first["metadata"], "name": "second"},
        "spec": {**first["spec"], "maxModels": len(theirs) - 1},
    }
    again, status = await run(second, others=theirs)
    assert again.apply == []  # nothing of theirs is made twice or taken over
    assert status["discoveredModels"] == len(theirs) - 1  # capped by maxModels
    assert status["modelsLimitReached"] is True
    assert condition(status, "MaxModelsLimitReached")["status"] == "True"

    roomy = {**second, "spec": {**second["spec"], "maxModels": 50}}
    _, status = await run(roomy, others=theirs)
    assert status["discoveredModels"] == len(theirs) and status["modelsLimitReached"] is False


async def test_another_source_s_models_are_reported_by_name_and_source_and_never_applied():
    # A model belongs to the source that made it: the second source creates nothing under those names
    # (creations are POSTs, never forced applies) and its ExistingModels message says whose they are.
    first, _ = example("amd-models")
    plan, _ = await run(first)
    assert all(d.create_only for d in plan.apply)
    theirs = [as_live(obj) for obj in created(plan)]
    assert theirs  # else the message below would have no one to name

    second = {**first, "metadata": {**first["metadata"], "name": "second"}}
    again, status = await run(second, others=theirs)

    assert again.apply == []
    listed = condition(status, "ExistingModelsReady")
    assert listed["message"].startswith("0 AIMClusterModels carry aim.eai.amd.com/model-source=second")
    for model in theirs:
        assert f"{model['metadata']['name']} (source amd-models)" in listed["message"]
    assert status["discoveredModels"] == len(theirs)
