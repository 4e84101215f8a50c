"""The LeaderWorkerSet builder: objects the real CRD accepts, health from LWS conditions, doctor checks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aim_plugin_lws.doctor import LwsChecks
from aim_plugin_lws.leaderworkerset import LeaderWorkerSetBuilder

from aim_core import EngineLayout, ResourceRef, RuntimeRequest, State
from aim_testing.crdschema import third_party_crd, validate_against_crd

LWS_CRD = "leaderworkerset.x-k8s.io_leaderworkersets.yaml"
NAME = "big-1a2b3c4d"
CACHE = {"name": "weights", "persistentVolumeClaim": {"claimName": "weights-pvc"}}


def request(**overrides: Any) -> RuntimeRequest:
    base: dict[str, Any] = dict(
        service={},
        name=NAME,
        namespace="ml-team",
        image="amdenterpriseai/aim-deepseek:0.9",
        labels={"aim.eai.amd.com/service": "big"},
        env=[
            {"name": "AIM_CACHE_PATH", "value": "/workspace/cache"},
            {"name": "AIM_ENGINE_ARGS", "value": '{"max-model-len":8192}'},
            {"name": "NCCL_IB_HCA", "value": "rdma0"},
        ],
        resources={"requests": {"amd.com/gpu": "8"}, "limits": {"amd.com/gpu": "8"}},
        volumes=[CACHE],
        volume_mounts=[{"name": "weights", "mountPath": "/workspace/cache/m"}],
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        image_pull_secrets=[{"name": "pull"}],
        service_account_name="aim",
        replicas=2,
        nodes=2,
        layout=EngineLayout(
            2, 8, 8, 2, {"max-model-len": 8192, "tensor-parallel-size": 8, "pipeline-parallel-size": 2}
        ),
    )
    base.update(overrides)
    return RuntimeRequest(**base)


def test_the_leaderworkerset_and_the_leaders_service_fit_the_crds():
    lws, service = LeaderWorkerSetBuilder().build(request())
    validate_against_crd(lws, third_party_crd(LWS_CRD))
    assert lws["spec"]["replicas"] == 2 and lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    assert service["kind"] == "Service" and service["metadata"]["name"] == f"{NAME}-leader"


def test_both_pod_templates_carry_the_same_pod_settings():
    lws, _ = LeaderWorkerSetBuilder().build(request())
    tpl = lws["spec"]["leaderWorkerTemplate"]
    leader, worker = tpl["leaderTemplate"]["spec"], tpl["workerTemplate"]["spec"]
    for key in ("volumes", "tolerations", "imagePullSecrets", "serviceAccountName"):
        assert leader[key] == worker[key], key
    assert CACHE in leader["volumes"]
    assert leader["containers"][0]["resources"] == worker["containers"][0]["resources"]
    # the user's env is kept, after the variables the engine arguments reference
    for pod in (leader, worker):
        names = [e["name"] for e in pod["containers"][0]["env"]]
        assert names[:3] == ["AIM_NODE_RANK", "AIM_GROUP_INDEX", "AIM_ENGINE_ARGS"]
        assert {"AIM_CACHE_PATH", "NCCL_IB_HCA"} <= set(names)
    args = json.loads(next(e["value"] for e in worker["containers"][0]["env"] if e["name"] == "AIM_ENGINE_ARGS"))
    assert args["max-model-len"] == 8192 and args["headless"] is True


def test_autoscaled_leaves_replicas_to_the_scaler():
    lws, _ = LeaderWorkerSetBuilder().build(request(replicas=None, min_replicas=1, max_replicas=3))
    assert "replicas" not in lws["spec"]
    validate_against_crd(lws, third_party_crd(LWS_CRD))


def test_cache_volumes_of_the_live_object_are_kept():
    lws, _ = LeaderWorkerSetBuilder().build(request())
    again, _ = LeaderWorkerSetBuilder().build(request(volumes=[], volume_mounts=[], live=lws))
    for role in ("leaderTemplate", "workerTemplate"):
        assert CACHE in again["spec"]["leaderWorkerTemplate"][role]["spec"]["volumes"]


def test_one_node_gets_no_group_arguments():
    lws, _ = LeaderWorkerSetBuilder().build(request(nodes=1, layout=None))
    env = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["AIM_CACHE_PATH", "AIM_ENGINE_ARGS", "NCCL_IB_HCA"]


def lws_with(*conditions: dict[str, Any], ready: int = 0) -> dict[str, Any]:
    return {
        "metadata": {"name": NAME},
        "spec": {"replicas": 2},
        "status": {"readyReplicas": ready, "conditions": list(conditions)},
    }


def test_health_follows_available_and_progressing():
    builder = LeaderWorkerSetBuilder()
    assert builder.health(None, [], []).state == State.PROGRESSING
    waiting = builder.health({"metadata": {"name": NAME}, "spec": {}}, [], [])
    assert waiting.state == State.PROGRESSING and "controller" in waiting.message
    ok = builder.health(lws_with({"type": "Available", "status": "True"}, ready=2), [], [])
    assert ok.ready and "2/2 groups ready" in ok.message
    going = builder.health(
        lws_with(
            {"type": "Available", "status": "False"},
            {
                "type": "Progressing",
                "status": "True",
                "reason": "GroupsProgressing",
                "message": "Replicas are progressing",
            },
            ready=1,
        ),
        [],
        [],
    )
    assert not going.ready and "1/2 groups ready" in going.message and "GroupsProgressing" in going.message


def test_the_route_reaches_the_leader_pods_only():
    endpoint = LeaderWorkerSetBuilder().endpoint(NAME)
    assert endpoint.pod_selector == {
        "leaderworkerset.sigs.k8s.io/name": NAME,
        "leaderworkerset.sigs.k8s.io/worker-index": "0",
    }
    assert endpoint.port == 8000


# ---------------------------------------------------------------- doctor


class Cluster:
    def __init__(self, objects: dict[tuple[str, str | None, str], dict[str, Any]], lists: dict[str, list]) -> None:
        self.objects, self.lists = objects, lists

    async def get(self, ref: ResourceRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.objects.get((ref.plural, namespace, name))

    async def list(self, ref: ResourceRef, namespace: str | None = None) -> list[dict[str, Any]]:
        return self.lists.get(ref.plural, [])


def crd() -> dict[str, Any]:
    import yaml

    doc = yaml.safe_load(open(third_party_crd(LWS_CRD)))
    doc["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    return doc


WEBHOOKS = {
    "metadata": {"name": "lws-mutating-webhook-configuration"},
    "webhooks": [
        {
            "name": "mleaderworkerset.kb.io",
            "clientConfig": {
                "service": {
                    "name": "lws-webhook-service",
                    "namespace": "lws-system",
                    "path": "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset",
                }
            },
        },
        {
            "name": "mpod.kb.io",
            "clientConfig": {
                "service": {"name": "lws-webhook-service", "namespace": "lws-system", "path": "/mutate--v1-pod"}
            },
        },
    ],
}
MULTI = {"metadata": {"name": "big-2x8"}, "spec": {"hardware": {"nodes": 2, "gpu": {"requests": 8}}}}


def levels(cluster: Cluster) -> list[tuple[str, str]]:
    return [(f.level, f.message) for f in asyncio.run(LwsChecks().run(cluster))]


def test_doctor_is_happy_with_the_crd_and_a_running_controller():
    ready = {"subsets": [{"addresses": [{"ip": "10.0.0.7"}]}]}
    cluster = Cluster(
        {
            ("customresourcedefinitions", None, "leaderworkersets.leaderworkerset.x-k8s.io"): crd(),
            ("endpoints", "lws-system", "lws-webhook-service"): ready,
        },
        {"mutatingwebhookconfigurations": [WEBHOOKS], "aimclusterservicetemplates": [MULTI]},
    )
    found = levels(cluster)
    assert all(level == "ok" for level, _ in found), found
    assert any("controller is available" in m for _, m in found)


@pytest.mark.parametrize("multi", [True, False])
def test_doctor_fails_without_the_controller_only_when_a_template_spans_nodes(multi):
    cluster = Cluster(
        {("customresourcedefinitions", None, "leaderworkersets.leaderworkerset.x-k8s.io"): crd()},
        {"mutatingwebhookconfigurations": [WEBHOOKS], "aimclusterservicetemplates": [MULTI] if multi else []},
    )
    found = levels(cluster)
    bad = [(level, m) for level, m in found if level != "ok"]
    assert bad and all(level == ("fail" if multi else "warn") for level, _ in bad)
    assert any("no ready endpoint" in m for _, m in bad)


def test_doctor_without_the_crd_says_how_to_install_it():
    findings = asyncio.run(LwsChecks().run(Cluster({}, {"aimservicetemplates": [MULTI]})))
    missing = [f for f in findings if "not installed" in f.message]
    assert missing and missing[0].level == "fail" and "lws/releases/download/v0.10.0" in missing[0].fix
