"""A replica across two nodes on both backends: a LeaderWorkerSet the real CRD accepts, the leaders'
Service behind the route, status from the LeaderWorkerSet and its pods; and a cluster without the
LeaderWorkerSet CRD, where the operator keeps running and the service says why it cannot start.

No LWS controller runs: the objects are accepted and the service waits, as it waits for KServe;
the tests then write what the controller and the kubelet would.
"""

from __future__ import annotations

import asyncio
import copy
import json

import pytest

from aim_core.cli import main
from aim_core.reconcile.naming import inference_service_name, shared_cache_name
from aim_testing.crdschema import third_party_crd, validate_against_crd
from tests.wire.conftest import eventually
from tests.wire.serving import accept_route
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, condition, create  # noqa: F401 - fixture

LWS = "leaderworkerset.x-k8s.io/v1/leaderworkersets"
SERVICES = "v1/services"
TEMPLATES = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"
CACHES = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
BASE = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"
TWO_NODES = "qwen3-32b-2x1-mi300x"
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
WORKER_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"


def two_node_template(kube) -> None:
    """A Ready copy of the examples' 1 x MI300X template that spans two nodes, and its Ready shared cache."""
    base = kube.get(TEMPLATES, None, BASE)
    tpl = copy.deepcopy(base)
    meta = tpl["metadata"]
    tpl["metadata"] = {"name": TWO_NODES, "annotations": meta.get("annotations") or {}}
    tpl["spec"]["hardware"]["nodes"] = 2
    tpl["status"]["resolvedHardware"]["nodes"] = 2
    tpl["status"]["hardwareSummary"] = "2 x 1 x MI300X"
    kube.put_object(tpl)
    [shared] = [c for c in kube.list(CACHES, NS) if c["spec"]["templateName"] == BASE]
    cache = copy.deepcopy(shared)
    cache["metadata"] = {
        "name": shared_cache_name(TWO_NODES, NS),
        "namespace": NS,
        "annotations": shared["metadata"].get("annotations") or {},
    }
    cache["spec"]["templateName"] = TWO_NODES
    kube.put_object(cache)


def big_service(cluster) -> dict:
    svc = copy.deepcopy(cluster["qwen-chat"])
    svc["metadata"] = {"name": "qwen-big", "namespace": NS}
    svc["spec"]["template"] = {"name": TWO_NODES}
    return svc


def lws_pod(lws: dict, worker: int, *, ready: bool = True, scheduled: bool = True) -> dict:
    """A pod of group 0 as the LWS controller and its webhook make it, running (or not scheduled)."""
    name = lws["metadata"]["name"]
    status: dict = {"phase": "Running" if scheduled else "Pending", "conditions": []}
    if scheduled:
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
        status["containerStatuses"] = [{"name": "aim-inference", "ready": ready, "state": {"running": {}}}]
    else:
        status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-0" + (f"-{worker}" if worker else ""),
            "namespace": NS,
            "labels": {NAME_LABEL: name, GROUP_LABEL: "0", WORKER_LABEL: str(worker)},
        },
        "spec": {"containers": [{"name": "aim-inference", "image": "x"}]},
        "status": status,
    }


async def test_a_two_node_service_runs_on_a_leaderworkerset_behind_its_leaders(
    kube, api, cluster, operator, kubeconfig, capsys
):
    two_node_template(kube)
    await create(api, kube, big_service(cluster))
    name = inference_service_name("qwen-big", NS)

    lws = await eventually(lambda: kube.get(LWS, NS, name), timeout=15)
    validate_against_crd(lws, third_party_crd("leaderworkerset.x-k8s.io_leaderworkersets.yaml"))
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2 and lws["spec"]["replicas"] == 1
    assert lws["metadata"]["ownerReferences"][0]["name"] == "qwen-big"
    for role in ("leaderTemplate", "workerTemplate"):
        pod = lws["spec"]["leaderWorkerTemplate"][role]["spec"]
        [container] = pod["containers"]
        assert str(container["resources"]["limits"]["amd.com/gpu"]) == "1"
        assert any(v.get("persistentVolumeClaim") for v in pod["volumes"])  # the cache on both
        args = json.loads(next(e["value"] for e in container["env"] if e["name"] == "AIM_ENGINE_ARGS"))
        assert (args["tensor-parallel-size"], args["pipeline-parallel-size"], args["nnodes"]) == (1, 2, 2)
    leaders = await eventually(lambda: kube.get(SERVICES, NS, f"{name}-leader"))
    assert leaders["spec"]["selector"] == {NAME_LABEL: name, WORKER_LABEL: "0"}
    route = await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-big")[0])
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == f"{name}-leader"
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-big") == []

    def waiting():
        runtime = condition(kube.get(SVC, NS, "qwen-big"), "InferenceServiceReady")
        assert runtime is not None and (runtime["status"], runtime["reason"]) == ("False", "CreatingRuntime"), runtime
        assert "LeaderWorkerSet" in runtime["message"]
        return True

    await eventually(waiting)

    # A worker that cannot be scheduled surfaces as for an InferenceService's pod.
    kube.put_object(lws_pod(lws, 0))
    stuck = lws_pod(lws, 1, scheduled=False)
    kube.put_object(stuck)
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "worker-unschedulable", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": stuck["metadata"]["name"], "namespace": NS},
            "reason": "FailedScheduling",
            "type": "Warning",
            "lastTimestamp": "2026-01-01T00:01:00Z",
            "message": "0/3 nodes are available: 3 Insufficient amd.com/gpu.",
        }
    )

    def unschedulable():
        pods = condition(kube.get(SVC, NS, "qwen-big"), "InferenceServicePodsReady")
        assert pods is not None and pods["reason"] == "FailedScheduling", pods
        assert "Insufficient amd.com/gpu" in pods["message"]
        return True

    await eventually(unschedulable, timeout=15)

    # The LWS controller reports the group available; the kubelet runs both pods; the gateway accepts.
    kube.put_object(lws_pod(lws, 1))
    kube.put_object(
        {
            **kube.get(LWS, NS, name),
            "status": {
                "replicas": 1,
                "readyReplicas": 1,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "AllGroupsReady",
                        "message": "All replicas are ready",
                        "lastTransitionTime": "2026-01-01T00:02:00Z",
                    }
                ],
            },
        }
    )
    accept_route(kube, kube.get(ROUTE, NS, route["metadata"]["name"]))

    def running():
        svc = kube.get(SVC, NS, "qwen-big")
        runtime = condition(svc, "InferenceServiceReady")
        assert runtime is not None and runtime["status"] == "True", svc.get("status")
        assert svc["status"]["status"] == "Running", svc["status"]
        return svc

    await eventually(running, timeout=15)
    # `aim-engine describe` shows the LeaderWorkerSet the service runs on
    assert await asyncio.to_thread(main, ["describe", "service", "qwen-big", "-n", NS]) == 0
    out = capsys.readouterr().out
    assert any(f"LeaderWorkerSet {NS}/{name}" in line and "Ready" in line for line in out.splitlines()), out


async def test_autoscaled_groups_get_a_scaledobject_on_the_leaderworkerset(kube, api, cluster, operator):
    two_node_template(kube)
    svc = big_service(cluster)
    svc["spec"].update(minReplicas=1, maxReplicas=2)
    await create(api, kube, svc)
    name = inference_service_name("qwen-big", NS)
    scaled = await eventually(lambda: kube.get("keda.sh/v1alpha1/scaledobjects", NS, f"{name}-predictor"), timeout=15)
    validate_against_crd(scaled, third_party_crd("keda.sh_scaledobjects.yaml"))
    assert scaled["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    assert scaled["spec"]["scaleTargetRef"]["name"] == name
    lws = await eventually(lambda: kube.get(LWS, NS, name))
    # the replicas are the scaler's: the operator's apply does not own them (the CRD may default them)
    ours = [m for m in lws["metadata"]["managedFields"] if m["manager"] == "aim-service-controller"]
    assert ours and all("f:replicas" not in json.dumps(m["fieldsV1"].get("f:spec", {})) for m in ours)


@pytest.fixture()
def without_lws_crd(kube):
    """The cluster does not serve LeaderWorkerSets (the CRD is not installed)."""
    emulator = kube.emulator
    [key] = [r for r in emulator.resources if getattr(r, "plural", None) == "leaderworkersets"]
    del emulator.resources[key]


@pytest.mark.emulator_only("the CRD is installed once per API server; the emulator can leave the kind out")
async def test_without_the_lws_crd_the_operator_runs_and_a_multi_node_service_says_why(
    kube, api, cluster, without_lws_crd, operator, caplog
):
    two_node_template(kube)
    await create(api, kube, big_service(cluster))
    await create(api, kube, cluster["qwen-chat"])  # a single-node service next to it is not affected

    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])

    def explained():
        svc = kube.get(SVC, NS, "qwen-big")
        runtime = condition(svc, "InferenceServiceReady")
        assert runtime is not None and runtime["reason"] == "RuntimeKindNotServed", svc.get("status")
        assert "does not serve LeaderWorkerSet" in runtime["message"]
        return svc

    svc = await eventually(explained, timeout=15)
    assert svc["status"]["status"] == "Failed"
    await operator.settle()
    patches = [r for r in kube.emulator._requests if "leaderworkersets" in str(r.url) and r.method.name != "GET"]
    assert patches == []  # nothing is sent for a kind the cluster does not serve
    served = [
        r.getMessage()
        for r in [*caplog.get_records("setup"), *caplog.records]
        if "LeaderWorkerSet" in r.getMessage() and "not served" in r.getMessage()
    ]
    assert len(served) == 1, served  # said once, not on every retry
