"""A replica across several nodes (``hardware.nodes``): the builder is chosen per service.

One node: KServe's InferenceService, bit for bit as without the lws plugin. Several: the lws
plugin's LeaderWorkerSet and its leaders' Service, with the engine layout in ``AIM_ENGINE_ARGS``;
refused with a specific reason (and nothing applied) when no multi-node builder is installed,
when the layout does not fit the GPUs, and when the group's arguments are written by hand.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from aim_core.plugin.manager import get_plugin_manager
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.labels import COMPONENT_LABEL
from aim_core.reconcile.naming import inference_service_name
from aim_core.reconcile.resources import ResourceRef
from aim_core.service.observed import Providers
from aim_core.service.plan import plan_service
from aim_core.template.hardware import check_gpu, hardware_summary, resolved_hardware
from aim_testing.crdschema import third_party_crd, validate_against_crd
from tests.service.builders import (
    GATEWAY,
    NS,
    POD_METRIC,
    amd_node,
    applied,
    live,
    observed,
    providers,
    qwen_model,
    qwen_template,
    ready_cache,
    ready_world,
    reason,
    run,
    service,
    status_of,
)

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")
LWS = "leaderworkerset.x-k8s.io_leaderworkersets.yaml"
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}


def two_node_world(svc: dict[str, Any], gpus: int = 8, nodes: int = 2) -> tuple[Any, ...]:
    tpl = qwen_template(gpus=gpus)
    tpl["spec"]["hardware"]["nodes"] = nodes
    tpl["status"]["resolvedHardware"]["nodes"] = nodes
    tpl["status"]["hardwareSummary"] = f"{nodes} x {gpus} x MI300X"
    return qwen_model(), tpl, ready_cache(svc, tpl)


def refused(status: dict[str, Any], why: str) -> str:
    """ConfigValid False (its reason is the category, as for every spec error) and the runtime component
    naming the specific reason; the message that says what to fix."""
    assert reason(status, "ConfigValid") == ("False", "InvalidSpec")
    assert reason(status, "InferenceServiceReady") == ("False", why)
    return next(c["message"] for c in status["conditions"] if c["type"] == "ConfigValid")


def without_lws() -> Providers:
    return Providers.from_plugins(get_plugin_manager(disabled=["lws"]))


def engine_args(container: dict[str, Any]) -> dict[str, Any]:
    [value] = [e["value"] for e in container["env"] if e["name"] == "AIM_ENGINE_ARGS"]
    return json.loads(value)


def pod_specs(lws: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    template = lws["spec"]["leaderWorkerTemplate"]
    return template["leaderTemplate"]["spec"], template["workerTemplate"]["spec"]


@pytest.fixture
def svc() -> dict[str, Any]:
    return service("big").model_name("qwen3-32b").routing(gateway=GATEWAY)


def test_lws_is_installed_and_offers_multi_node():
    names = [b.name for b in providers().all_runtimes()]
    assert names[0] == "kserve" and "lws" in names
    assert providers().runtime_for(1).name == "kserve"
    assert providers().runtime_for(2).name == "lws"
    assert providers().runtime_for(16).name == "lws"
    assert providers().runtime_for(17) is None


def test_every_single_node_plan_is_the_same_with_the_lws_plugin_installed(svc):
    for spec in ({}, {"replicas": 3}, {"minReplicas": 1, "maxReplicas": 4, "autoScaling": {"metrics": [POD_METRIC]}}):
        s = service("one").model_name("qwen3-32b").routing(gateway=GATEWAY)
        s["spec"].update(spec)
        world = ready_world(s, gpus=8)
        with_lws = plan_service(dict(s), observed(s, *world))
        without = plan_service(dict(s), observed(s, *world, with_providers=without_lws()))
        assert [(d.resource, d.obj) for d in with_lws.apply] == [(d.resource, d.obj) for d in without.apply]
        assert with_lws.status == without.status and with_lws.components == without.components
        assert [d.resource.kind for d in with_lws.apply if d.resource.kind == "InferenceService"]
        assert status_of(s, with_lws) == status_of(s, without)


def test_two_nodes_get_one_leaderworkerset_of_size_two_and_no_inferenceservice(svc):
    svc["spec"]["tolerations"] = [TOLERATION]
    plan, status = run(svc, *two_node_world(svc))
    assert not applied(plan, "InferenceService")
    [lws] = applied(plan, "LeaderWorkerSet")
    name = inference_service_name("big", NS)
    assert lws["metadata"]["name"] == name
    spec = lws["spec"]
    assert spec["replicas"] == 1
    assert spec["leaderWorkerTemplate"]["size"] == 2
    assert spec["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
    assert spec["startupPolicy"] == "LeaderCreated"
    assert spec["rolloutStrategy"]["type"] == "RollingUpdate"
    for pod in pod_specs(lws):
        [container] = pod["containers"]
        assert container["resources"]["requests"]["amd.com/gpu"] == "8"
        assert container["resources"]["limits"]["amd.com/gpu"] == "8"
        assert TOLERATION in pod["tolerations"]
        assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
        assert claims == ["qwen-qwen3-32b-fp8-cache-bcc76768"]
        assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in pod["volumes"]
        assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    validate_against_crd(lws, third_party_crd(LWS))
    assert status["status"] != "Failed"


def test_the_engine_arguments_tie_the_group_together(svc):
    plan, _ = run(svc, *two_node_world(svc))
    [lws] = applied(plan, "LeaderWorkerSet")
    leader, worker = pod_specs(lws)
    name = lws["metadata"]["name"]
    for pod, headless in ((leader, False), (worker, True)):
        [container] = pod["containers"]
        env = container["env"]
        names = [e["name"] for e in env]
        # the variables the arguments reference come first, so Kubernetes expands them
        assert names.index("AIM_NODE_RANK") < names.index("AIM_ENGINE_ARGS")
        assert names.index("AIM_GROUP_INDEX") < names.index("AIM_ENGINE_ARGS")
        rank = next(e for e in env if e["name"] == "AIM_NODE_RANK")
        assert (
            rank["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']"
        )
        args = engine_args(container)
        assert args["tensor-parallel-size"] == 8 and args["pipeline-parallel-size"] == 2
        assert args["nnodes"] == 2 and args["node-rank"] == "$(AIM_NODE_RANK)"
        assert args["master-addr"] == f"{name}-$(AIM_GROUP_INDEX).{name}.{NS}"
        assert isinstance(args["master-port"], int)
        assert args.get("headless", False) is headless
        assert ("ports" in container) is not headless
    assert any("tensor parallel 8" in n and "pipeline parallel 2" in n for n in plan.notes)


def test_the_route_goes_to_the_leaders_only(svc):
    plan, _ = run(svc, *two_node_world(svc))
    [route] = applied(plan, "HTTPRoute")
    [backend] = route["spec"]["rules"][0]["backendRefs"]
    name = inference_service_name("big", NS)
    assert backend["name"] == f"{name}-leader"
    [leaders] = [s for s in applied(plan, "Service") if s["metadata"]["name"] == f"{name}-leader"]
    assert leaders["spec"]["selector"] == {
        "leaderworkerset.sigs.k8s.io/name": name,
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
    }
    assert leaders["spec"]["ports"][0]["targetPort"] == 8000
    assert leaders["metadata"]["labels"][COMPONENT_LABEL] == "runtime"


def test_autoscaled_groups_get_a_scaledobject_on_the_leaderworkerset(svc):
    svc["spec"].update(minReplicas=1, maxReplicas=3)
    plan, _ = run(svc, *two_node_world(svc))
    [lws] = applied(plan, "LeaderWorkerSet")
    assert "replicas" not in lws["spec"]  # the scaler's
    [scaled] = applied(plan, "ScaledObject")
    assert scaled["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": lws["metadata"]["name"],
    }
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["maxReplicaCount"]) == (1, 3)
    assert scaled["spec"]["triggers"]
    validate_against_crd(scaled, third_party_crd("keda.sh_scaledobjects.yaml"))


def test_a_multi_node_service_without_a_multi_node_builder_is_failed_naming_the_plugin(svc):
    plan, status = run(svc, *two_node_world(svc), with_providers=without_lws())
    assert not applied(plan, "InferenceService") and not applied(plan, "LeaderWorkerSet")
    assert status["status"] == "Failed"
    message = refused(status, "MultiNodeRuntimeMissing")
    assert "lws plugin" in message and "2 nodes" in message


@pytest.mark.parametrize(
    ("args", "numbers"),
    [
        ({"tensor-parallel-size": 4, "pipeline-parallel-size": 2}, "16"),
        ({"tensor-parallel-size": 3}, "16"),
        ({"pipeline-parallel-size": "two"}, "'two'"),
    ],
)
def test_a_layout_that_does_not_fit_the_gpus_is_refused_with_the_numbers(svc, args, numbers):
    svc.env("AIM_ENGINE_ARGS", json.dumps(args))
    plan, status = run(svc, *two_node_world(svc))
    assert not applied(plan, "LeaderWorkerSet") and not applied(plan, "InferenceService")
    message = refused(status, "InvalidParallelism")
    assert numbers in message and "2 nodes x 8 GPUs" in message


def test_cross_node_tensor_parallelism_is_accepted(svc):
    svc.env("AIM_ENGINE_ARGS", json.dumps({"tensor-parallel-size": 16, "max-model-len": 8192}))
    plan, _ = run(svc, *two_node_world(svc))
    [lws] = applied(plan, "LeaderWorkerSet")
    args = engine_args(pod_specs(lws)[0]["containers"][0])
    assert (args["tensor-parallel-size"], args["pipeline-parallel-size"], args["max-model-len"]) == (16, 1, 8192)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2  # the node count, never a parallel degree


@pytest.mark.parametrize("key", ["nnodes", "node-rank", "master-addr"])
def test_hand_written_group_arguments_are_refused(svc, key):
    svc.env("AIM_ENGINE_ARGS", json.dumps({key: "1"}))
    plan, status = run(svc, *two_node_world(svc))
    assert not applied(plan, "LeaderWorkerSet")
    assert key in refused(status, "MultiNodeArgsSet")


def test_status_follows_the_leaderworkerset_conditions(svc):
    world = two_node_world(svc)
    plan, _ = run(svc, *world)
    [lws] = applied(plan, "LeaderWorkerSet")
    on_server = live(lws)
    on_server["status"] = {
        "readyReplicas": 1,
        "replicas": 1,
        "conditions": [{"type": "Available", "status": "True", "reason": "AllGroupsReady"}],
    }
    ob = attrs.evolve(observed(svc, *world), live={"runtime": None, "runtime:lws": on_server, "route": None})
    plan = plan_service(dict(svc), ob)
    assert plan.components["InferenceService"].reason == "RuntimeReady"
    assert "1/1 groups ready" in plan.components["InferenceService"].message
    on_server["status"]["conditions"] = [
        {"type": "Available", "status": "False", "reason": "GroupsNotReady"},
        {"type": "Progressing", "status": "True", "reason": "GroupsProgressing", "message": "Replicas are progressing"},
    ]
    plan = plan_service(dict(svc), ob)
    health = plan.components["InferenceService"]
    assert not health.ready and "GroupsProgressing" in health.message


def test_going_from_one_node_to_two_prunes_the_inferenceservice(svc):
    one_node = ready_world(svc, gpus=8)
    plan, _ = run(svc, *one_node)
    [isvc] = applied(plan, "InferenceService")
    mine = live(isvc)
    mine["metadata"]["ownerReferences"] = [
        {"kind": "AIMService", "name": "big", "uid": svc["metadata"]["uid"], "controller": True}
    ]
    plan, _ = run(svc, *two_node_world(svc), owned={ISVC: [mine]})
    assert applied(plan, "LeaderWorkerSet")
    assert [(d.resource.kind, d.name) for d in plan.delete] == [("InferenceService", isvc["metadata"]["name"])]


# ---------------------------------------------------------------- hardware


def test_hardware_summary_leads_with_the_node_count():
    assert hardware_summary({"gpu": {"requests": 8, "model": "MI300X"}, "nodes": 2}) == "2 x 8 x MI300X"
    assert hardware_summary({"gpu": {"requests": 8, "model": "MI300X"}}) == "8 x MI300X"


def test_resolved_hardware_carries_nodes_only_above_one():
    check = check_gpu({"hardware": {"gpu": {"requests": 8}}}, GpuInventory(()))
    assert "nodes" not in (resolved_hardware({"hardware": {"gpu": {"requests": 8}, "nodes": 1}}, None, check) or {})
    assert resolved_hardware({"hardware": {"gpu": {"requests": 8}, "nodes": 2}}, None, check)["nodes"] == 2


def test_gpu_availability_counts_the_nodes_that_can_host_a_pod():
    from tests.service.builders import providers as installed

    vendors = installed().gpu_vendors
    two = GpuInventory.from_nodes([amd_node("a"), amd_node("b")], vendors)
    spec = {"hardware": {"gpu": {"requests": 8, "model": "MI300X"}, "nodes": 3}}
    check = check_gpu(spec, two)
    assert not check.available and check.health.reason == "GPUNotAvailable"
    assert "3 nodes" in check.health.message and "only 2" in check.health.message
    spec["hardware"]["nodes"] = 2
    assert check_gpu(spec, two).available
    small = GpuInventory.from_nodes([amd_node("a"), amd_node("b", gpus=4)], vendors)
    assert not check_gpu(spec, small).available


def test_selection_prefers_fewer_nodes_when_everything_else_ties():
    s = service("auto").model_name("qwen3-32b")
    model, two, cache = two_node_world(s, gpus=1)
    two["metadata"]["name"] = "qwen-2x1"
    one = qwen_template(gpus=1)
    plan, status = run(s, model, two, one, cache, ready_cache(s, one))
    assert status["resolvedTemplate"]["name"] == one["metadata"]["name"]
    assert applied(plan, "InferenceService") and not applied(plan, "LeaderWorkerSet")
    assert any("nodes: 1 node(s) before 2 node(s)" in n for n in plan.notes), plan.notes


def test_pods_of_a_group_serve_only_when_every_pod_is_ready(svc):
    from aim_core.service.serving import pods_health
    from tests.service.builders import pod

    world = two_node_world(svc)
    ready, stuck = pod("x", index=0), pod("x", ready=False, index=1)
    stuck["status"]["phase"] = "Pending"
    ob = observed(svc, *world, pods=[ready, stuck])
    assert not pods_health(ob, 2).ready
    assert pods_health(ob, 1).ready  # one node: any ready replica serves, as always


def test_a_runtime_kind_the_cluster_does_not_serve_is_reported_and_nothing_is_applied(svc):
    world = two_node_world(svc)
    lws_kind = providers().runtime_for(2).resource
    ob = attrs.evolve(observed(svc, *world), unserved=frozenset({lws_kind}))
    plan = plan_service(dict(svc), ob)
    status = status_of(svc, plan)
    assert not applied(plan, "LeaderWorkerSet") and not applied(plan, "InferenceService")
    assert reason(status, "InferenceServiceReady") == ("False", "RuntimeKindNotServed")
    assert plan.requeue_after is not None  # a CRD installed later is found
    # a single-node service in the same cluster is not affected
    one = service("one").model_name("qwen3-32b")
    plan = plan_service(dict(one), attrs.evolve(observed(one, *ready_world(one)), unserved=frozenset({lws_kind})))
    assert applied(plan, "InferenceService")


def test_a_custom_models_nodes_reach_its_templates_and_a_templates_own_win():
    from aim_core.model.templates import merge_hardware

    base = {"gpu": {"requests": 8, "model": "MI300X"}, "nodes": 2}
    assert merge_hardware(base, {"gpu": {"requests": 4}})["nodes"] == 2
    assert merge_hardware(base, {"nodes": 4})["nodes"] == 4
    assert "nodes" not in merge_hardware({"gpu": {"requests": 8}}, {"gpu": {"model": "MI300X"}})


def test_overrides_ask_for_a_node_count():
    from aim_core.service.overrides import Overrides

    _, two, _ = two_node_world(service("x"), gpus=8)
    one = qwen_template(gpus=8)
    wanted = Overrides.read({"hardware": {"nodes": 2}})
    assert wanted.mismatches(two) == [] and wanted.mismatches(one) == ["1 node(s) per replica (overrides ask 2)"]
    assert not Overrides.read({"hardware": {"nodes": 1}}).change(one)


def test_a_sweep_counts_every_gpu_of_a_multi_node_replica():
    from aim_core.benchmarksweep.plan import _facts

    _, two, _ = two_node_world(service("x"), gpus=8)
    assert _facts(two, "Cluster")["gpuCount"] == 16
    assert _facts(qwen_template(gpus=8), "Cluster")["gpuCount"] == 8


def test_group_pods_are_admitted_wherever_the_inferenceservice_pod_is(svc):
    """Pod Security Admission looks at the pod-level and container-level security fields and the volume
    types: the leader and worker templates carry exactly what the KServe predictor carries (baseline)."""
    one = service("one").model_name("qwen3-32b")
    plan, _ = run(one, *ready_world(one, gpus=8))
    [isvc] = applied(plan, "InferenceService")
    predictor = isvc["spec"]["predictor"]
    plan, _ = run(svc, *two_node_world(svc))
    [lws] = applied(plan, "LeaderWorkerSet")
    checked = ("securityContext", "hostNetwork", "hostPID", "hostIPC", "hostUsers")
    for pod in pod_specs(lws):
        assert {k: pod.get(k) for k in checked} == {k: predictor.get(k) for k in checked}
        assert pod["containers"][0].get("securityContext") == predictor["containers"][0].get("securityContext")
        kinds = {key for volume in pod["volumes"] for key in volume if key != "name"}
        assert kinds <= {"emptyDir", "persistentVolumeClaim"}  # no hostPath: baseline admits them
        shm = next(v for v in pod["volumes"] if v["name"] == "dshm")
        assert shm["emptyDir"]["medium"] == "Memory"


def test_an_inference_pool_of_a_two_node_service_selects_the_leaders_only():
    s = service("pooled").model_name("qwen3-32b").routing(gateway=GATEWAY, inferencePool={"enabled": True})
    plan, _ = run(s, *two_node_world(s))
    [pool] = applied(plan, "InferencePool")
    name = inference_service_name("pooled", NS)
    selector = pool["spec"]["selector"]
    labels = selector.get("matchLabels", selector)
    assert labels == {"leaderworkerset.sigs.k8s.io/name": name, "leaderworkerset.sigs.k8s.io/worker-index": "0"}
