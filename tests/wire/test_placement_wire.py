"""Placement of inference pods through the operator (issue 20): runtime config and service fields reach the
InferenceService, with the GPU node affinity kept and the GPU taint tolerated; a config change re-places it."""

from __future__ import annotations

import copy
import datetime

from aim_testing.crdschema import third_party_crd, validate_against_crd
from tests.wire.conftest import eventually
from tests.wire.test_services_wire import CRC, ISVC, NS, REACT, SVC, cluster, create  # noqa: F401 - fixture

ZONE = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a"]}
TEAM = {"key": "example.com/dedicated", "operator": "Equal", "value": "inference", "effect": "NoSchedule"}


async def test_config_and_service_placement_reach_the_inference_service(kube, api, cluster, operator):
    response = await api.patch(
        kube.path(CRC, None, "default"),
        json={"spec": {"tolerations": [TEAM], "nodeSelector": {"example.com/pool": "gpu"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [ZONE]}]}
        }
    }
    await create(api, kube, body)
    assert kube.get(SVC, NS, "qwen-chat")["spec"]["affinity"] == body["spec"]["affinity"]  # kept by the CRD

    def placed():
        found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert len(found) == 1
        obj = found[0]
        predictor = obj["spec"]["predictor"]
        assert predictor.get("tolerations") == [TEAM, {"key": "amd.com/gpu", "operator": "Exists"}]
        return obj

    obj = await eventually(placed)
    validate_against_crd(obj, third_party_crd("serving.kserve.io_inferenceservices.yaml"))
    predictor = obj["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"example.com/pool": "gpu"}
    [term] = predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [e["key"] for e in term["matchExpressions"]] == ["amd.com/gpu.device-id", ZONE["key"]]

    # the cluster config's selector changes: the InferenceService follows through the watch
    response = await api.patch(
        kube.path(CRC, None, "default"),
        json={"spec": {"nodeSelector": {"example.com/pool": "gpu-2"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def moved():
        assert kube.get(ISVC, NS, obj["metadata"]["name"])["spec"]["predictor"]["nodeSelector"] == {
            "example.com/pool": "gpu-2"
        }
        return True

    await eventually(moved, timeout=REACT)


async def test_a_private_models_pull_secret_and_account_reach_the_inference_pod(kube, api, cluster, operator):
    models = "aim.eai.amd.com/v1alpha1/aimclustermodels"
    model = kube.get(models, None, "qwen3-32b")
    model["spec"].update(
        imagePullSecrets=[{"name": "vendor-pull"}, {"name": "team-pull"}], serviceAccountName="model-puller"
    )
    kube.put_object(model)
    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["imagePullSecrets"] = [{"name": "team-pull"}]
    await create(api, kube, body)

    def isvc():
        found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert len(found) == 1
        return found[0]

    predictor = (await eventually(isvc))["spec"]["predictor"]
    assert predictor["imagePullSecrets"] == [{"name": "team-pull"}, {"name": "vendor-pull"}]
    assert predictor["serviceAccountName"] == "model-puller"


async def test_a_failed_cache_is_retried_by_its_service_and_then_recovers(kube, api, cluster, operator):
    caches = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
    artifacts = "aim.eai.amd.com/v1alpha1/aimartifacts"
    name = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-a04542d9"
    failed = {
        "type": "Ready",
        "status": "False",
        "reason": "DownloadFailed",
        "message": "download failed",
        # 90 s ago: the first retry (60 s after the failure) is due at once, the second (120 s) is not. As in a
        # cluster, where a retry follows its failure by the backoff, a store that still shows the deleted cache
        # for a moment after the retry (the watch under load) cannot make the second retry early: with a
        # failure backdated past both backoffs it could (a cache deleted twice, retryAttempts 2).
        "lastTransitionTime": (datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=90)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"
        ),
    }
    old = kube.get(caches, NS, name)
    old["status"].update(status="Failed", conditions=[failed])
    kube.put_object(old)  # failed 90 s ago: the first retry is due at once
    artifact = kube.get(artifacts, NS, "hf---qwen-qwen3-32b-fp8-c6782ee37e")
    artifact["status"].update(status="Failed", conditions=[failed])
    kube.put_object(artifact)
    await create(api, kube, cluster["qwen-chat"])

    def retried_once():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert svc["status"]["cache"] == {"retryAttempts": 1}
        new = kube.get(caches, NS, name)
        assert new["metadata"]["uid"] != old["metadata"]["uid"]  # deleted and made again
        ready = next(c for c in svc["status"]["conditions"] if c["type"] == "CacheReady")
        assert ready["reason"] in ("CacheCreating", "CacheNotReady"), ready
        return new

    await eventually(retried_once, timeout=15)
    again = kube.get(artifacts, NS, artifact["metadata"]["name"])  # the failed download went with it
    assert again is None or again["metadata"]["uid"] != artifact["metadata"]["uid"]
    assert not kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")

    # the new cache's download completes: the service goes on, and the count is done with
    def new_artifact():
        found = [a for a in kube.list(artifacts, NS) if a["spec"]["sourceUri"] == artifact["spec"]["sourceUri"]]
        assert len(found) == 1
        return found[0]

    fresh = await eventually(new_artifact)
    fresh["metadata"].setdefault("annotations", {})["aim.eai.amd.com/reconciliation-paused"] = "true"
    fresh["status"] = {
        **artifact["status"],
        "status": "Ready",
        "persistentVolumeClaim": artifact["status"]["persistentVolumeClaim"],
        "conditions": [{**failed, "status": "True", "reason": "AllComponentsReady", "message": ""}],
    }
    kube.put_object(fresh)

    def recovered():
        if kube.get(artifacts, NS, fresh["metadata"]["name"])["status"]["status"] != "Ready":
            kube.put_object(fresh)  # a reconcile that was running when it was paused wrote over it
        svc = kube.get(SVC, NS, "qwen-chat")
        assert "retryAttempts" not in svc["status"]["cache"], svc["status"]["cache"]
        assert svc["status"]["cache"]["templateCacheRef"]["name"] == name
        assert len(kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")) == 1
        return True

    await eventually(recovered, timeout=15)
