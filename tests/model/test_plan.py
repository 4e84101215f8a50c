"""The model plan (F20-F28): what a user sees in status and which templates get created."""

from __future__ import annotations

import copy
import datetime
import json

import pytest

from aim_core.model.aggregate import (
    fails_on_its_own,
    fails_only_because_of_model,
    model_health_for_template,
    templates_health,
)
from aim_core.model.controller import ClusterModelController, ModelController
from aim_core.model.fetch import Lookup
from aim_core.model.plan import plan_model
from aim_core.model.templates import is_as_generated
from aim_core.reconcile.health import State
from aim_core.reconcile.resources import CLUSTER_TEMPLATES, TEMPLATES
from aim_core.registry import RegistryError
from aim_core.runtime.engine import build_status
from tests.model.builders import DIGEST, IMAGE, NS, info, model, observed, template

NOW = datetime.datetime(2026, 3, 1, 12, 0, 0, tzinfo=datetime.UTC)
LABELS = {
    "com.amd.aim.model.canonicalName": "org/dummy",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp16"},
            {"gpuModel": "MI300X", "gpuCount": 8, "metric": "throughput", "precision": "fp8"},
        ]
    ),
}


def run(m, ob):
    plan = plan_model(m, ob)
    controller = ModelController(None) if m["metadata"].get("namespace") else ClusterModelController(None)
    status, _ = build_status(controller, m, plan, list(plan.issues), now=NOW)
    return plan, status


def cond(status, type_):
    found = [c for c in status["conditions"] if c["type"] == type_]
    return (found[0]["status"], found[0]["reason"]) if found else None


def message(status, type_):
    return next(c["message"] for c in status["conditions"] if c["type"] == type_)


def test_metadata_read_from_the_registry_lands_in_status_and_templates_are_created():
    m = model()
    plan, status = run(m, observed(m, lookup=info(LABELS)))
    assert status["imageMetadata"]["model"]["canonicalName"] == "org/dummy"
    assert status["imageMetadata"]["originalLabels"] == LABELS
    assert status["resolvedImage"] == {"image": IMAGE, "digest": DIGEST, "source": "Registry"}
    assert status["sourceType"] == "Image"
    assert cond(status, "ImageMetadataReady") == ("True", "ImageMetadataFound")
    assert cond(status, "ServiceTemplatesReady") == ("False", "CreatingTemplates")
    assert status["status"] == "Progressing"
    assert sorted(d.obj["metadata"]["name"] for d in plan.apply) == [
        "ghcr-io-silogen-aim-dummy-0-1-10-1x-mi300x-lat-fp16-0823",
        "ghcr-io-silogen-aim-dummy-0-1-10-8x-mi300x-thr-fp8-" + plan.apply[1].obj["metadata"]["name"][-4:],
    ]
    assert all(d.resource == TEMPLATES and d.owned for d in plan.apply)


def test_cached_metadata_is_not_fetched_again_and_reads_image_found():
    m = model()
    first, status = run(m, observed(m, lookup=info(LABELS)))
    m["status"] = status
    ob = observed(m)  # no lookup: the source is the status
    assert ob.source == "cached"
    tpls = [template(d.obj["metadata"]["name"], owner=m, state="Ready", **d.obj["spec"]) for d in first.apply]
    plan, status = run(m, observed(m, templates=tpls))
    assert cond(status, "ImageMetadataReady") == ("True", "ImageFound")  # Q19
    assert cond(status, "ServiceTemplatesReady") == ("True", "AllTemplatesReady")
    assert message(status, "ServiceTemplatesReady") == "2 of 2 templates are Ready"
    assert status["status"] == "Ready" and plan.delete == []


def test_a_new_image_is_read_again():
    m = model()
    _, m["status"] = run(m, observed(m, lookup=info(LABELS)))
    m["spec"]["image"] = "ghcr.io/silogen/aim-dummy:0.2.0"
    assert observed(m).source == "registry"


def test_an_image_without_aim_labels_makes_a_ready_model_without_templates():
    m = model()
    plan, status = run(m, observed(m, lookup=info({"maintainer": "x"})))
    assert plan.apply == []
    assert cond(status, "ImageMetadataReady") == ("True", "ImageFound")
    assert cond(status, "ServiceTemplatesReady") == ("True", "NoTemplatesExpected")
    assert status["status"] == "Ready"


def test_spec_metadata_is_used_without_the_registry():
    given = {"model": {"canonicalName": "org/x", "recommendedDeployments": [{"gpuModel": "MI300X", "gpuCount": 1}]}}
    m = model(imageMetadata=given, imagePullSecrets=[{"name": "missing"}])
    ob = observed(m)
    assert ob.source == "spec"
    plan, status = run(m, ob)
    assert status["imageMetadata"] == given and status["resolvedImage"] == {"image": IMAGE, "source": "Spec"}
    assert len(plan.apply) == 1 and status["status"] == "Progressing"


def test_extraction_switched_off_asks_nothing_and_expects_no_templates():
    m = model(discovery={"extractMetadata": False})
    assert observed(m).source == "disabled"
    plan, status = run(m, observed(m))
    assert cond(status, "ImageMetadataReady") == ("True", "ImageFound") and status["status"] == "Ready"
    # the runtime config's model.autoDiscovery decides when the model does not say
    m2 = model()
    cfg = {"metadata": {"name": "default"}, "spec": {"model": {"autoDiscovery": False}}}
    assert observed(m2, configs=(None, cfg)).source == "disabled"


def test_create_service_templates_false_creates_none_and_deletes_what_it_made():
    m = model(discovery={"createServiceTemplates": False})
    old = template("old", owner=m, state="Ready")
    hand = template("hand-written", state="Ready")
    plan, status = run(m, observed(m, lookup=info(LABELS), templates=[old, hand]))
    assert plan.apply == [] and [d.name for d in plan.delete] == ["old"]
    assert cond(status, "ServiceTemplatesReady") == ("True", "AllTemplatesReady")  # the hand-written one


def test_a_missing_pull_secret_fails_the_model_before_any_registry_call():
    m = model(imagePullSecrets=[{"name": "regcred"}])
    msg = "image pull secret 'regcred' not found in namespace 'ml-team': create it"
    plan, status = run(m, observed(m, secret_problems=(("SecretNotFound", msg),)))
    assert cond(status, "ImageMetadataReady") == ("False", "SecretNotFound")
    assert cond(status, "ConfigValid") == ("False", "ReferenceNotFound")
    assert status["status"] == "Failed" and "imageMetadata" not in status
    assert message(status, "Ready").startswith("image pull secret 'regcred' not found")


@pytest.mark.parametrize("cluster,reason", [(False, "ConfigNotFound"), (True, "ReferenceNotFound")])
def test_a_missing_runtime_config_fails_the_model(cluster, reason):
    m = model(runtimeConfigName="team", namespace=None if cluster else NS)
    plan, status = run(m, observed(m))
    assert cond(status, "RuntimeConfigReady") == ("False", reason)
    assert cond(status, "ConfigValid") == ("False", "ReferenceNotFound")
    assert status["status"] == "Failed" and plan.apply == []


@pytest.mark.parametrize(
    "kind,state,framework",
    [
        ("not_found", "Degraded", None),  # Q8
        ("auth", "Failed", ("AuthValid", "AuthError")),
        ("invalid", "Failed", ("ConfigValid", "InvalidSpec")),
        ("unavailable", "Degraded", ("DependenciesReachable", "InfrastructureError")),
        ("rate_limited", "Degraded", ("DependenciesReachable", "InfrastructureError")),
    ],
)
def test_registry_errors_become_specific_conditions_and_a_later_look(kind, state, framework):
    m = model()
    existing = template("kept", owner=m, state="Ready")
    error = RegistryError(kind, f"registry ghcr.io: {kind} for {IMAGE}", registry="ghcr.io", image=IMAGE)
    plan, status = run(m, observed(m, lookup=error, templates=[existing]))
    assert cond(status, "ImageMetadataReady") == ("False", error.reason)
    assert status["status"] == state
    assert plan.requeue_after == 60.0
    assert plan.apply == [] and plan.delete == []  # templates are kept while the metadata cannot be read
    if framework:
        assert cond(status, framework[0]) == ("False", framework[1])
    assert "next attempt within 60s" in message(status, "ImageMetadataReady")
    # later reconciles in the same backoff say the same, so they write nothing
    later = observed(m, lookup=Lookup(error=error, retry_in=12.5, backoff=60.0), templates=[existing])
    assert run(m, later)[1]["conditions"] == status["conditions"]


def test_unreadable_labels_fail_the_model_with_a_way_out():
    m = model()
    plan, status = run(m, observed(m, lookup=info({"com.amd.aim.model.recommendedDeployments": "{{{"})))
    assert cond(status, "ImageMetadataReady") == ("False", "InvalidImageMetadata")
    assert "spec.imageMetadata" in message(status, "ImageMetadataReady")
    assert status["status"] == "Failed" and "resolvedImage" not in status


@pytest.mark.parametrize("image", ["ghcr.io/Org/Repo:1", "repo:tag\n", "ghcr.io/org/repo:", "a/b@sha256:12"])
def test_an_invalid_image_reference_is_invalid_spec(image):
    m = model(image=image)
    plan, status = run(m, observed(m))
    assert cond(status, "ImageMetadataReady") == ("False", "InvalidImageReference")
    assert cond(status, "ConfigValid") == ("False", "InvalidSpec") and status["status"] == "Failed"


@pytest.mark.parametrize(
    "source,reason",
    [
        ({"modelId": "org/..", "sourceUri": "hf://org/x"}, "InvalidModelSource"),
        ({"modelId": "org/x", "sourceUri": "hf://org/x\x00y"}, "InvalidModelSource"),
        ({"modelId": "org/x", "sourceUri": "ftp://host/x"}, "InvalidModelSource"),
    ],
)
def test_hostile_model_sources_fail_the_model_and_create_nothing(source, reason):
    m = model(modelSources=[source], custom={"hardware": {"gpu": {"requests": 1}}})
    plan, status = run(m, observed(m, lookup=info()))
    assert plan.apply == [] and status["status"] == "Failed"
    assert cond(status, "ConfigValid") == ("False", "InvalidSpec")
    assert reason in [i.reason for i in plan.issues]


def test_custom_model_gets_its_template_after_the_image_is_validated():
    source = {"modelId": "inline/test-model", "sourceUri": "hf://sshleifer/tiny-gpt2"}
    m = model("auto-gen-template-test", modelSources=[source], custom={"hardware": {"gpu": {"requests": 1}}})
    plan, status = run(m, observed(m, lookup=info(LABELS)))
    assert status["sourceType"] == "Custom"
    assert [d.obj["metadata"]["name"] for d in plan.apply] == ["auto-gen-template-test-custom-60ba3f14"]


def test_templates_not_wanted_any_more_are_deleted_and_foreign_ones_left_alone():
    m = model()
    first, _ = run(m, observed(m, lookup=info(LABELS)))
    wanted = first.apply[0].obj
    mine = template(wanted["metadata"]["name"], owner=m, state="Ready", **wanted["spec"])
    stale = template("stale", owner=m, state="Ready")
    other_owner = model("someone-else")
    foreign = template(first.apply[1].obj["metadata"]["name"], owner=other_owner, state="Ready")
    plan, _ = run(m, observed(m, lookup=info(LABELS), templates=[mine, stale, foreign]))
    assert [d.name for d in plan.delete] == ["stale"]
    assert [d.obj["metadata"]["name"] for d in plan.apply] == [wanted["metadata"]["name"]]


def test_templates_a_user_cloned_from_the_model_s_are_never_deleted():
    # upstream's aimmodel/clone-templates-for-gpu (hack/clone-templates-for-gpu.sh MI300X MI308X): the copies
    # keep the model's ownerReference, origin label and annotations, but their spec is not what the model made.
    m = model()
    first, _ = run(m, observed(m, lookup=info(LABELS)))
    made = [d.obj for d in first.apply]
    live = [template(t["metadata"]["name"], owner=m, state="Ready", **t["spec"]) for t in made]
    clone = copy.deepcopy(live[0])
    clone["metadata"]["name"] = clone["metadata"]["name"].replace("mi300x", "mi308x") + "-clone"
    clone["spec"]["hardware"]["gpu"]["model"] = "MI308X"
    bare = copy.deepcopy(clone)  # a copy without our annotation
    bare["metadata"]["name"] += "-bare"
    del bare["metadata"]["annotations"]
    plan, _ = run(m, observed(m, lookup=info(LABELS), templates=[*live, clone, bare]))
    assert plan.delete == []
    assert sorted(d.obj["metadata"]["name"] for d in plan.apply) == sorted(t["metadata"]["name"] for t in made)
    # the model's own templates carry the digest of what it chose
    assert all(is_as_generated({**t, "spec": t["spec"]}) for t in made)


def test_a_template_whose_immutable_fields_changed_is_replaced():
    m = model(customTemplates=[{"name": "a", "hardware": {"gpu": {"requests": 1, "minVram": "64Gi"}}}])
    first, _ = run(m, observed(m, lookup=info()))
    tpl = first.apply[0].obj
    live = template(
        tpl["metadata"]["name"],
        owner=m,
        state="Ready",
        **{**tpl["spec"], "hardware": {"gpu": {"requests": 1, "minVram": "32Gi", "resourceName": "amd.com/gpu"}}},
    )
    plan, _ = run(m, observed(m, lookup=info(), templates=[live]))
    assert [d.name for d in plan.delete] == [tpl["metadata"]["name"]] and plan.apply == []
    same = template(
        tpl["metadata"]["name"],
        owner=m,
        state="Ready",
        **{**tpl["spec"], "hardware": {"gpu": {"requests": 1, "minVram": "64Gi", "resourceName": "amd.com/gpu"}}},
    )
    plan, _ = run(m, observed(m, lookup=info(), templates=[same]))
    assert plan.delete == [] and len(plan.apply) == 1


def test_cluster_models_create_cluster_templates():
    m = model("q", namespace=None)
    plan, status = run(m, observed(m, lookup=info(LABELS)))
    assert {d.resource for d in plan.apply} == {CLUSTER_TEMPLATES}
    assert cond(status, "ClusterServiceTemplatesReady") == ("False", "CreatingTemplates")


# ---------------------------------------------------------------- aggregation (F24) and the guard (F25)


def tpls(*states):
    return [template(f"t{i}", state=s) for i, s in enumerate(states)]


@pytest.mark.parametrize(
    "states,known,expected,state,reason",
    [
        ((), False, True, State.PROGRESSING, "AwaitingMetadata"),
        ((), True, True, State.PROGRESSING, "CreatingTemplates"),
        ((), True, False, State.READY, "NoTemplatesExpected"),
        (("Ready", "Ready"), True, True, State.READY, "AllTemplatesReady"),
        (("Failed", "Degraded"), True, True, State.FAILED, "AllTemplatesFailed"),
        (("NotAvailable", "NotAvailable"), True, True, State.NOT_AVAILABLE, "NoTemplatesAvailable"),
        (("Ready", "Failed", "Pending"), True, True, State.DEGRADED, "SomeTemplatesDegraded"),
        (("Ready", "Progressing"), True, True, State.PROGRESSING, "TemplatesProgressing"),
        (("Ready", "NotAvailable"), True, True, State.READY, "SomeTemplatesReady"),
        (("Ready", None), True, True, State.PROGRESSING, "TemplatesProgressing"),
    ],
)
def test_template_aggregation(states, known, expected, state, reason):
    health = templates_health(tpls(*states), metadata_known=known, expected=expected)
    assert (health.state, health.reason) == (state, reason)


def failed_model(*conditions):
    return {
        "status": {
            "status": "Failed",
            "conditions": [{"type": t, "status": s, "reason": r, "message": "m"} for t, s, r in conditions],
        }
    }


def test_a_model_failing_only_because_of_its_templates_is_found_by_them():
    because_of_templates = failed_model(
        ("Ready", "False", "AllTemplatesFailed"),
        ("ServiceTemplatesReady", "False", "AllTemplatesFailed"),
        ("ImageMetadataReady", "True", "ImageFound"),
    )
    assert not fails_on_its_own(because_of_templates)
    assert model_health_for_template(because_of_templates, "AIMModel ns/m").reason == "ModelFound"
    own = failed_model(("ImageMetadataReady", "False", "ImageNotFound"))
    health = model_health_for_template(own, "AIMClusterModel m", failed_reason="ClusterModelFailed")
    assert (health.state, health.reason) == (State.FAILED, "ClusterModelFailed")
    assert fails_on_its_own(failed_model(("ConfigValid", "False", "InvalidSpec")))
    assert not fails_on_its_own({"status": {"status": "Progressing"}})


def test_a_degraded_model_makes_its_templates_degraded_not_failed():
    # upstream's aimmodel/custom-models/nonexistent-image: the registry does not answer for the image
    degraded = failed_model(("ImageMetadataReady", "False", "ImageNotFound"))
    degraded["status"]["status"] = "Degraded"
    health = model_health_for_template(degraded, "AIMModel ns/m")
    assert (health.state, health.reason) == (State.DEGRADED, "ModelFailed")


def waiting_on_model(name, state="Degraded", *others):
    tpl = template(name, state=state)
    tpl["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "ModelFailed", "message": "m"},
        {"type": "ModelReady", "status": "False", "reason": "ModelFailed", "message": "m"},
        {"type": "Discovered", "status": "True", "reason": "InlineModelSources", "message": "m"},
        *({"type": t, "status": "False", "reason": "X", "message": "m"} for t in others),
    ]
    return tpl


def test_templates_unhealthy_only_because_of_their_model_do_not_count_against_it():
    # the guard the other way round: else a Degraded model turns Failed through its own templates
    assert fails_only_because_of_model(waiting_on_model("a"))
    assert not fails_only_because_of_model(waiting_on_model("a", "Degraded", "GpuReady"))
    assert not fails_only_because_of_model(waiting_on_model("a", "Degraded", "ConfigValid"))
    assert not fails_only_because_of_model(template("ok", state="Ready"))
    cluster = waiting_on_model("c")
    cluster["status"]["conditions"][1]["type"] = "ClusterModelReady"  # a cluster template of a cluster model
    assert fails_only_because_of_model(cluster)

    alone = templates_health([waiting_on_model("a")], metadata_known=False, expected=True)
    assert alone.state == State.PROGRESSING and "wait for this model" in alone.message
    beside_ready = templates_health(
        [waiting_on_model("a"), template("b", state="Ready")], metadata_known=True, expected=True
    )
    assert beside_ready.state == State.PROGRESSING
    own_failure = templates_health(
        [waiting_on_model("a", "Failed", "GpuReady"), waiting_on_model("b")], metadata_known=True, expected=True
    )
    assert (own_failure.state, own_failure.reason) == (State.DEGRADED, "SomeTemplatesDegraded")
