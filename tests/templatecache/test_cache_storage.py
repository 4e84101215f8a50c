"""A template cache's own model sources and storage settings (issue 20): spec.modelSources is used, and
downloadFilter / pvcHeadroomPercent reach the artifacts it creates, which carry them out."""

from __future__ import annotations

from aim_core.artifact.plan import plan_artifact
from aim_core.reconcile import naming
from tests.artifact.builders import make_artifact as artifact_spec
from tests.artifact.builders import observed as artifact_observed
from tests.artifact.builders import wanted
from tests.templatecache.test_templatecaches import QWEN, TINY, make_artifact, make_cache, make_template, observed, run

FILTER = {"include": ["*.safetensors", "*.json"]}


def created(plan) -> list[dict]:
    return [d.obj for d in plan.apply if d.resource.kind == "AIMArtifact"]


def test_a_caches_own_model_sources_are_used_instead_of_the_templates():
    cache = make_cache().with_spec(modelSources=[QWEN])
    plan, _, _ = run(cache, observed(make_template(sources=[TINY])))
    [art] = created(plan)
    assert art["spec"]["sourceUri"] == QWEN["sourceUri"]


def test_storage_settings_of_the_cache_reach_new_artifacts_and_their_names():
    cache = make_cache().with_spec(downloadFilter=FILTER, pvcHeadroomPercent=40)
    plan, _, _ = run(cache, observed(make_template(sources=[TINY])))
    [art] = created(plan)
    assert art["spec"]["downloadFilter"] == FILTER and art["spec"]["pvcHeadroomPercent"] == 40
    assert art["metadata"]["name"] != naming.artifact_name(TINY["sourceUri"])  # not the unfiltered artifact's
    assert art["metadata"]["name"].startswith("hf---sshleifer-tiny-gpt2-")


def test_a_cache_with_a_filter_does_not_reuse_an_unfiltered_artifact():
    plain = make_artifact(naming.artifact_name(TINY["sourceUri"]))
    plan, _, _ = run(make_cache().with_spec(downloadFilter=FILTER), observed(make_template(sources=[TINY]), [plain]))
    assert len(created(plan)) == 1
    plan, _, _ = run(make_cache(), observed(make_template(sources=[TINY]), [plain]))
    assert created(plan) == []  # without settings of its own, the existing artifact is reused as before


def test_an_artifacts_own_headroom_wins_over_the_runtime_configs():
    art = artifact_spec(size="100Gi", pvcHeadroomPercent=50)
    plan = plan_artifact(art, artifact_observed({"storage": {"pvcHeadroomPercent": 10}}))
    [pvc] = wanted(plan, "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "150Gi"
