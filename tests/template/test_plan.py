"""The template plan, table by table: binding, inline sources, GPU gating, discovery, breaker, caching."""

from __future__ import annotations

import datetime
import json

import pytest

from aim_core.reconcile.health import State
from aim_core.reconcile.resources import JOBS, TEMPLATE_CACHES
from aim_core.reconcile.status import derive
from aim_core.template.observed import Slot
from aim_core.template.plan import plan_template
from tests.template.builders import (
    NOW,
    amd_node,
    job_from,
    make_model,
    make_template,
    nvidia_node,
    observed,
    pod_of,
)

OUTPUT = json.dumps(
    [
        {
            "filename": "p.yaml",
            "profile": {
                "model": "org/m",
                "metadata": {
                    "engine": "vllm",
                    "gpu": "MI300X",
                    "precision": "fp8",
                    "gpu_count": 1,
                    "metric": "latency",
                    "type": "optimized",
                },
                "engine_args": {"tp": 1},
                "env_vars": {"A": "1"},
            },
            "models": [{"name": "org/m", "source": "hf://org/m", "size_gb": 16}],
        }
    ]
)


def root(plan):
    derived = derive(plan.components, [(i.category, i.reason, i.message) for i in plan.issues], now=NOW)
    ready = next(c for c in derived.conditions if c.type == "Ready")
    return derived.status, ready.reason


def discovered(plan):
    return next(c for c in plan.conditions if c.type == "Discovered")


def jobs(plan):
    return [d.obj for d in plan.apply if d.resource == JOBS]


# ---------------------------------------------------------------- binding (F31, Q10)


def test_a_missing_model_fails_with_reference_not_found_and_no_job():
    t = make_template()
    plan = plan_template(t, observed(t, model=None, nodes=[amd_node()]))
    assert root(plan) == (State.FAILED, "ReferenceNotFound")
    assert plan.components["Model"].reason == "ReferenceNotFound" and not jobs(plan)


def test_a_namespaced_template_naming_a_cluster_model_says_why_it_is_not_used():
    t = make_template()
    plan = plan_template(t, observed(t, model=None, other_scope_model=True))
    assert "an AIMClusterModel of that name exists" in plan.components["Model"].message
    assert root(plan)[0] is State.FAILED


def test_a_cluster_template_binds_to_the_cluster_model_and_discovers_in_the_operator_namespace():
    t = make_template(cluster=True).with_gpu()
    plan = plan_template(t, observed(t, nodes=[amd_node()]))
    assert plan.components["ClusterModel"].reason == "ClusterModelFound"
    assert plan.status["resolvedModel"] == {
        "name": "m",
        "kind": "AIMClusterModel",
        "scope": "Cluster",
        "uid": "uid-model-m",
    }
    assert jobs(plan)[0]["metadata"]["namespace"] == "aim-system"


def test_a_model_failing_on_its_own_fails_the_template_but_not_one_waiting_for_templates():
    t = make_template()
    bad = make_model(status="Failed")
    bad["status"]["conditions"] = [
        {"type": "ImageMetadataReady", "status": "False", "reason": "ImageNotFound"},
        {"type": "Ready", "status": "False", "reason": "ImageNotFound", "message": "gone"},
    ]
    plan = plan_template(t, observed(t, model=bad))
    assert plan.components["Model"].reason == "ModelFailed" and not jobs(plan)
    waiting = make_model(status="Failed")
    waiting["status"]["conditions"] = [
        {"type": "ServiceTemplatesReady", "status": "False", "reason": "AllTemplatesFailed"},
        {"type": "Ready", "status": "False", "reason": "AllTemplatesFailed"},
    ]
    plan = plan_template(t, observed(t, model=waiting))
    assert plan.components["Model"].ready and jobs(plan)


def test_an_invalid_model_image_is_invalid_spec_and_no_job():
    t = make_template()
    plan = plan_template(t, observed(t, model=make_model(image="Not An Image!")))
    assert root(plan) == (State.FAILED, "InvalidSpec")
    assert any(i.reason == "InvalidImageReference" for i in plan.issues) and not jobs(plan)


# ---------------------------------------------------------------- inline sources (F32)


def test_inline_sources_are_ready_without_a_job():
    t = make_template().with_gpu().inline()
    plan = plan_template(t, observed(t, nodes=[amd_node()]))
    assert root(plan) == (State.READY, "AllComponentsReady") and not jobs(plan)
    assert plan.status["modelSources"][0]["sourceUri"] == "hf://org/model"
    assert plan.status["profile"]["metadata"] == {
        "gpu": "MI300X",
        "gpuCount": 1,
        "metric": "latency",
        "precision": "fp8",
    }
    cond = discovered(plan)
    assert (cond.status, cond.reason, cond.message) == (
        "True",
        "InlineModelSources",
        "Model sources provided in-line in spec",
    )
    assert plan.status["discovery"] is None and plan.status["hardwareSummary"] == "1 x MI300X"
    assert "DiscoveryJob" not in plan.components


# ---------------------------------------------------------------- GPU gating (F40)


@pytest.mark.parametrize(
    "gpu, nodes, reason",
    [
        ({"model": "MI325X", "requests": 1}, [amd_node()], "GPUNotAvailable"),
        ({"model": None, "requests": 1}, [], "GPUNotAvailable"),
        ({"model": None, "requests": 1, "minVram": "256Gi"}, [amd_node()], "VRAMNotAvailable"),
        ({"model": "MI300X", "requests": 16}, [amd_node(count=8)], "GPUNotAvailable"),
        ({"model": "MI300X", "requests": 2_147_483_647}, [amd_node(count=None)], "GPUNotAvailable"),
        ({"model": "H100", "requests": 1}, [amd_node()], "GPUNotAvailable"),
    ],
)
def test_templates_that_no_node_can_run_are_not_available_and_start_no_job(gpu, nodes, reason):
    t = make_template().with_gpu(**gpu)
    plan = plan_template(t, observed(t, nodes=nodes))
    assert root(plan) == (State.NOT_AVAILABLE, reason)
    assert plan.components["GPU"].reason == reason and not jobs(plan)


@pytest.mark.parametrize(
    "gpu, nodes",
    [
        ({"model": "mi300x", "requests": 2}, [amd_node()]),
        ({"model": "AMD Instinct MI300X", "requests": 1}, [amd_node()]),
        ({"model": None, "requests": 1, "minVram": "192Gi"}, [amd_node()]),
        ({"model": None, "requests": 1, "minVram": "100G"}, [amd_node()]),
        ({"model": "MI300X", "requests": 4}, [amd_node(count=None)]),  # labels only: the count is unknown
    ],
)
def test_templates_a_node_can_run_are_gpu_available(gpu, nodes):
    t = make_template().with_gpu(**gpu)
    plan = plan_template(t, observed(t, nodes=nodes))
    assert plan.components["GPU"].reason == "GPUAvailable" and jobs(plan)


def test_an_unparsable_min_vram_is_invalid_spec():
    t = make_template().with_gpu(model=None, minVram="lots")
    plan = plan_template(t, observed(t, nodes=[amd_node()]))
    assert plan.components["GPU"].reason == "InvalidSpec" and root(plan)[0] is State.FAILED


def test_a_cpu_template_has_no_gpu_condition():
    t = make_template().with_spec(hardware={"cpu": {"requests": "4"}})
    plan = plan_template(t, observed(t))
    assert "GPU" not in plan.components and plan.status["hardwareSummary"] == "CPU"


def test_an_h100_template_is_available_on_an_h100_node_with_nvidia_resources_and_affinity():
    t = make_template().with_gpu(model="H100", requests=2, resourceName="amd.com/gpu").inline()
    plan = plan_template(t, observed(t, nodes=[nvidia_node(), amd_node()]))
    assert root(plan) == (State.READY, "AllComponentsReady")
    assert plan.status["resolvedHardware"]["gpu"]["resourceName"] == "nvidia.com/gpu"
    term = plan.status["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-H100-80GB-HBM3"]}]}
    ]
    plan = plan_template(t, observed(t, nodes=[nvidia_node(product="NVIDIA-A100-SXM4-80GB")]))
    assert root(plan) == (State.NOT_AVAILABLE, "GPUNotAvailable")


def test_min_vram_affinity_spans_vendors_with_enough_memory():
    t = make_template().with_gpu(model=None, requests=1, minVram="80Gi").inline()
    plan = plan_template(t, observed(t, nodes=[nvidia_node(), amd_node()]))
    terms = plan.status["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {e["key"] for term in terms for e in term["matchExpressions"]} == {
        "amd.com/gpu.device-id",
        "nvidia.com/gpu.product",
    }


# ---------------------------------------------------------------- the discovery Job (F33)


def test_the_discovery_job_runs_the_model_image_locked_down():
    t = (
        make_template()
        .with_gpu()
        .with_spec(
            env=[{"name": "HF_TOKEN", "value": "x"}],
            imagePullSecrets=[{"name": "tpl-pull"}],
            profileId="p1",
            customProfile={"engineArgs": {"tp": 2}, "envVars": {"X": "1"}},
        )
    )
    model = make_model(imagePullSecrets=[{"name": "model-pull"}], serviceAccountName="model-sa")
    plan = plan_template(t, observed(t, model=model, nodes=[amd_node()]))
    job = jobs(plan)[0]
    assert len(job["metadata"]["name"]) <= 63 and job["metadata"]["name"].startswith("discover-tpl-")
    labels = job["metadata"]["labels"]
    assert labels == {
        "app.kubernetes.io/name": "aim-discovery",
        "app.kubernetes.io/component": "discovery",
        "app.kubernetes.io/managed-by": "aim-controller",
        "aim.eai.amd.com/template": "tpl",
    }
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["ttlSecondsAfterFinished"] == 60
    pod = job["spec"]["template"]["spec"]
    assert job["spec"]["template"]["metadata"]["labels"]["aim.eai.amd.com/template"] == "tpl"
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = pod["containers"]
    assert container["image"] == model["spec"]["image"] and container["args"] == ["dry-run", "--format=json"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    env = [(e["name"], e.get("value")) for e in container["env"]]
    assert env == [
        ("AIM_LOG_LEVEL_ROOT", "CRITICAL"),
        ("AIM_LOG_LEVEL", "CRITICAL"),
        ("HF_TOKEN", "x"),
        ("AIM_METRIC", "latency"),
        ("AIM_PRECISION", "fp8"),
        ("AIM_GPU_MODEL", "MI300X"),
        ("AIM_GPU_COUNT", "1"),
        ("AIM_PROFILE_ID", "p1"),
    ]
    assert pod["imagePullSecrets"] == [{"name": "tpl-pull"}, {"name": "model-pull"}]
    assert pod["serviceAccountName"] == "model-sa"  # its own namespace's account
    assert pod["automountServiceAccountToken"] is False  # discovery never talks to the API server
    config_maps = [d.obj for d in plan.apply if d.resource.kind == "ConfigMap"]
    assert pod["volumes"][0]["configMap"]["name"] == config_maps[0]["metadata"]["name"]
    assert json.loads(config_maps[0]["data"]["profile.yaml"])["profile"]["engine_args"] == {"tp": 2}


def test_a_long_template_name_gives_a_job_name_and_labels_that_fit():
    t = make_template("t" * 200).with_gpu()
    job = jobs(plan_template(t, observed(t, nodes=[amd_node()])))[0]
    assert len(job["metadata"]["name"]) <= 63
    assert len(job["metadata"]["labels"]["aim.eai.amd.com/template"]) <= 63


@pytest.mark.parametrize(
    "slot, reason, requeue", [(Slot.LIMIT_REACHED, "JobNotCreated", 5.0), (Slot.LOCK_BUSY, "JobNotCreated", 2.0)]
)
def test_no_slot_means_no_job_pending_and_a_look_again(slot, reason, requeue):
    t = make_template().with_gpu()
    plan = plan_template(t, observed(t, nodes=[amd_node()], slot=slot))
    assert not jobs(plan) and plan.components["DiscoveryJob"].reason == reason
    assert root(plan)[0] is State.PENDING and plan.requeue_after == requeue


# ---------------------------------------------------------------- output (F35)


def _succeeded(t, output, nodes=None):
    first = plan_template(t, observed(t, nodes=nodes or [amd_node()]))
    job = job_from(jobs(first)[0], created=-30, state="Complete")
    return plan_template(
        t, observed(t, nodes=nodes or [amd_node()], jobs=[job], pods=[pod_of(job)], output=output, slot=Slot.NOT_ASKED)
    ), job


def test_a_successful_discovery_fills_profile_sources_and_hardware():
    t = make_template().with_gpu()
    plan, _ = _succeeded(t, "INFO starting\n" + OUTPUT + "\nbye\n")
    assert root(plan) == (State.READY, "AllComponentsReady")
    assert plan.status["modelSources"] == [{"modelId": "org/m", "sourceUri": "hf://org/m", "size": "16Gi"}]
    assert plan.status["profile"]["metadata"] == {
        "engine": "vllm",
        "gpu": "MI300X",
        "gpuCount": 1,
        "metric": "latency",
        "precision": "fp8",
        "type": "optimized",
    }
    assert plan.status["profile"]["engine_args"] == {"tp": 1}
    assert (discovered(plan).status, discovered(plan).reason) == ("True", "DiscoveryComplete")  # Q1


def test_once_discovered_the_template_stays_ready_without_reading_again():
    t = make_template().with_gpu()
    plan, _ = _succeeded(t, OUTPUT)
    t.with_status(**{k: v for k, v in plan.status.items() if v is not None})
    again = plan_template(t, observed(t, nodes=[amd_node()], slot=Slot.NOT_ASKED))
    assert root(again) == (State.READY, "AllComponentsReady") and not jobs(again)
    assert again.status["modelSources"] == plan.status["modelSources"]


@pytest.mark.parametrize(
    "output, reason",
    [
        ("", "DiscoveryOutputEmpty"),
        ("[]", "DiscoveryOutputEmpty"),
        ("Traceback (most recent call last):\n  boom", "DiscoveryOutputMalformed"),
        (OUTPUT[: len(OUTPUT) // 2], "DiscoveryOutputIncomplete"),
        (json.dumps([{"profile": {"metadata": {}}}]), "DiscoveryOutputIncomplete"),
        (json.dumps([{"profile": {}, "models": [{"name": "org/m"}]}]), "DiscoveryOutputIncomplete"),
        (
            json.dumps([{"profile": {}, "models": [{"name": "org/..", "source": "hf://org/m"}]}]),
            "DiscoveryOutputInvalid",
        ),
        (
            json.dumps([{"profile": {}, "models": [{"name": "org/m", "source": "file:///etc"}]}]),
            "DiscoveryOutputInvalid",
        ),
    ],
)
def test_unusable_output_fails_the_attempt_with_a_specific_reason(output, reason):
    t = make_template().with_gpu()
    plan, _ = _succeeded(t, output)
    assert root(plan) == (State.FAILED, reason)
    assert plan.status["discovery"]["attempts"] == 1
    assert plan.status["discovery"]["lastFailureReason"].startswith(reason)
    assert "modelSources" not in plan.status and plan.requeue_after == 60


def test_profile_values_outside_the_api_enums_are_dropped_not_written():
    odd = json.loads(OUTPUT)
    odd[0]["profile"]["metadata"].update(precision="FP8", metric="speed", type="fast")
    plan, _ = _succeeded(make_template().with_gpu(), json.dumps(odd))
    assert plan.status["profile"]["metadata"]["precision"] == "fp8"
    assert "metric" not in plan.status["profile"]["metadata"] and "type" not in plan.status["profile"]["metadata"]


# ---------------------------------------------------------------- breaker (F36)


def _failed_once(t):
    first = plan_template(t, observed(t, nodes=[amd_node()]))
    job = job_from(jobs(first)[0], created=-30, state="Failed")
    plan = plan_template(
        t, observed(t, nodes=[amd_node()], jobs=[job], pods=[pod_of(job, "Failed")], slot=Slot.NOT_ASKED)
    )
    return plan, job


def test_a_failed_job_is_counted_once_and_backs_off_exponentially():
    t = make_template().with_gpu()
    plan, job = _failed_once(t)
    assert root(plan)[0] is State.FAILED and plan.components["DiscoveryJob"].reason == "JobBackoffLimitExceeded"
    state = plan.status["discovery"]
    assert state["attempts"] == 1 and state["lastAttemptTime"] == "2026-01-01T12:00:00Z"
    assert "Waiting 1m00s before retry (attempt 1 failed)" == discovered(plan).message
    t.with_status(discovery=state)
    later = datetime.timedelta(seconds=30)
    again = plan_template(t, observed(t, nodes=[amd_node()], jobs=[job], now=NOW + later, slot=Slot.NOT_ASKED))
    assert again.status["discovery"]["attempts"] == 1 and not jobs(again)  # not counted twice
    due = plan_template(t, observed(t, nodes=[amd_node()], jobs=[job], now=NOW + 2 * later, slot=Slot.NOT_ASKED))
    assert [d.name for d in due.delete] == [job["metadata"]["name"]]  # the old Job goes so a new one can start
    retry = plan_template(t, observed(t, nodes=[amd_node()], now=NOW + 2 * later))
    assert jobs(retry)
    # a second failure doubles the wait
    second = job_from(jobs(retry)[0], created=61, state="Failed")
    after = plan_template(
        t, observed(t, nodes=[amd_node()], jobs=[second], now=NOW + datetime.timedelta(seconds=90), slot=Slot.NOT_ASKED)
    )
    assert after.status["discovery"]["attempts"] == 2 and after.requeue_after == 120


def test_a_changed_spec_resets_the_breaker():
    t = make_template().with_gpu()
    plan, _ = _failed_once(t)
    t.with_status(discovery=plan.status["discovery"]).with_spec(profileId="another")
    fresh = plan_template(t, observed(t, nodes=[amd_node()]))
    assert fresh.status["discovery"]["attempts"] == 0 and jobs(fresh)


def test_a_job_of_an_older_spec_is_deleted():
    t = make_template().with_gpu()
    old = job_from(jobs(plan_template(t, observed(t, nodes=[amd_node()])))[0])
    t.with_spec(profileId="new")
    plan = plan_template(t, observed(t, nodes=[amd_node()], jobs=[old]))
    assert [d.name for d in plan.delete] == [old["metadata"]["name"]] and jobs(plan)


# ---------------------------------------------------------------- caching (F37)


def test_a_caching_template_gets_its_cache_once_sources_are_known():
    t = make_template().with_gpu().inline().with_spec(caching={"enabled": True, "env": [{"name": "A", "value": "1"}]})
    plan = plan_template(t, observed(t, nodes=[amd_node()]))
    (cache,) = [d for d in plan.apply if d.resource == TEMPLATE_CACHES]
    assert cache.owned and cache.obj["metadata"] == {"name": "tpl", "namespace": "team"}
    assert cache.obj["spec"] == {
        "templateName": "tpl",
        "templateScope": "Namespace",
        "mode": "Shared",
        "env": [{"name": "A", "value": "1"}],
    }
    waiting = make_template().with_gpu().with_spec(caching={"enabled": True})
    assert not [
        d for d in plan_template(waiting, observed(waiting, nodes=[amd_node()])).apply if d.resource == TEMPLATE_CACHES
    ]


def test_a_cache_of_the_same_name_made_by_someone_else_is_left_alone():
    t = make_template().inline().with_spec(caching={"enabled": True})
    theirs = {"metadata": {"name": "tpl", "namespace": "team", "ownerReferences": [{"uid": "someone"}]}}
    plan = plan_template(t, observed(t, cache=theirs))
    assert not [d for d in plan.apply if d.resource == TEMPLATE_CACHES]
    assert plan.status["resolvedCache"]["name"] == "tpl"


@pytest.mark.parametrize("hardware", ["x", {"gpu": {"requests": "many"}}, {"gpu": "MI300X"}])
def test_a_spec_the_schema_would_refuse_is_invalid_spec_not_a_crash(hardware):
    t = make_template().with_spec(hardware=hardware)
    plan = plan_template(t, observed(t, nodes=[amd_node()]))
    assert root(plan) == (State.FAILED, "InvalidSpec") and not jobs(plan)
    assert "$.spec.hardware" in plan.issues[0].message


# ---------------------------------------------------------------- a third-party GPU vendor


def test_a_third_party_gpu_vendor_gates_and_pins_templates_like_the_builtin_ones():
    from tests.template.acme import AcmeVendor, acme_node
    from tests.template.builders import vendors

    all_vendors = (*vendors(), AcmeVendor())
    t = make_template().with_gpu(model="x9", requests=2, resourceName="amd.com/gpu").inline()
    plan = plan_template(t, observed(t, nodes=[acme_node(), amd_node()], vendors=all_vendors))
    assert root(plan) == (State.READY, "AllComponentsReady")
    assert plan.status["resolvedHardware"]["gpu"]["resourceName"] == "acme.example/accel"
    terms = plan.status["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "acme.example/accel.model", "operator": "In", "values": ["x9"]}]}]
    too_many = make_template().with_gpu(model="x9", requests=8).inline()
    plan = plan_template(too_many, observed(too_many, nodes=[acme_node()], vendors=all_vendors))
    assert root(plan) == (State.NOT_AVAILABLE, "GPUNotAvailable")
    plan = plan_template(t, observed(t, nodes=[amd_node()], vendors=all_vendors))
    assert root(plan) == (State.NOT_AVAILABLE, "GPUNotAvailable")


def test_a_derived_template_may_use_the_cluster_model_its_base_used():
    t = make_template().inline()
    t["metadata"]["labels"] = {"aim.eai.amd.com/origin": "derived"}
    plan = plan_template(t, observed(t, model=make_model(cluster=True), model_is_cluster=True))
    assert root(plan) == (State.READY, "AllComponentsReady")
    assert plan.status["resolvedModel"]["kind"] == "AIMClusterModel" and "namespace" not in plan.status["resolvedModel"]


def test_model_sources_written_by_hand_while_discovery_runs_are_kept():
    # upstream's waits-for-service-template-readiness writes a Ready status with sources by hand (merge patch:
    # our record of the running discovery stays); the Job reporting progress must not undo it (issue 18).
    t = make_template().with_gpu()
    first = plan_template(t, observed(t, nodes=[amd_node()]))
    running = job_from(jobs(first)[0], created=-5)
    t.with_status(**{k: v for k, v in first.status.items() if v is not None})
    t.with_status(status="Ready", modelSources=[{"modelId": "org/m", "sourceUri": "hf://org/m"}])
    again = plan_template(t, observed(t, nodes=[amd_node()], jobs=[running], slot=Slot.NOT_ASKED))
    assert root(again)[0] is State.READY
    assert again.status["modelSources"] == [{"modelId": "org/m", "sourceUri": "hf://org/m"}]
    # sources that were inline before (spec.modelSources removed since) are not taken for hand-written ones
    inline = make_template().with_gpu().inline()
    first = plan_template(inline, observed(inline, nodes=[amd_node()]))
    inline.with_status(
        **{k: v for k, v in first.status.items() if v is not None},
        status="Ready",
        conditions=[{"type": "Discovered", "status": "True", "reason": "InlineModelSources"}],
    )
    del inline["spec"]["modelSources"]
    assert jobs(plan_template(inline, observed(inline, nodes=[amd_node()])))
    # a status with no record of ours and no results is still discovered
    fresh = make_template().with_gpu()
    assert jobs(plan_template(fresh, observed(fresh, nodes=[amd_node()])))
