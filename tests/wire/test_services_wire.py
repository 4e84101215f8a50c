"""AIMService end to end: the real operator against the API emulator.

The cluster is the one in ``examples/``: MI300X nodes, runtime configs, Ready
models and templates and a Ready shared template cache, all seeded with their
status. Models, templates and the cache are created paused (F13), as
upstream's frozen tests do, so only the service controller acts on them.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from aim_core.cli.offline import load_documents
from aim_core.reconcile.resources import NODES
from aim_testing.crdschema import third_party_crd, validate_against_crd
from tests.wire.conftest import eventually
from tests.wire.serving import serve

ROOT = Path(__file__).resolve().parents[2]
SVC = "aim.eai.amd.com/v1alpha1/aimservices"
ISVC = "serving.kserve.io/v1beta1/inferenceservices"
ROUTE = "gateway.networking.k8s.io/v1/httproutes"
CRC = "aim.eai.amd.com/v1alpha1/aimclusterruntimeconfigs"
NS = "ml-team"
# How long a reaction that must come through a watch may take: well below every requeue interval
# (15 s and up), so a pass here cannot come from polling, and loose enough for a loaded machine.
REACT = 5.0
PAUSED = {"aim.eai.amd.com/reconciliation-paused": "true"}


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


@pytest.fixture()
def cluster(kube):
    """Seed everything from examples/ except the services (and model sources, which would list registries)."""
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    services = []
    for doc in load_documents([ROOT / "examples"]):
        doc = copy.deepcopy(doc)
        if doc["kind"] == "AIMService":
            services.append(doc)
            continue
        if doc["kind"] == "AIMClusterModelSource":
            continue
        if doc["kind"] in (
            "AIMTemplateCache",
            "AIMArtifact",
            "AIMModel",
            "AIMClusterModel",
            "AIMServiceTemplate",
            "AIMClusterServiceTemplate",
        ):
            doc["metadata"].setdefault("annotations", {}).update(PAUSED)
        kube.put_object(doc)
    return {s["metadata"]["name"]: s for s in services}


async def create(api, kube, body):
    body = copy.deepcopy(body)
    body.pop("status", None)
    response = await api.post(kube.path(SVC, body["metadata"]["namespace"]), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def test_service_gets_a_valid_inference_service_and_route_and_runs(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])

    def isvc():
        found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert len(found) == 1
        return found[0]

    obj = await eventually(isvc)
    validate_against_crd(obj, third_party_crd("serving.kserve.io_inferenceservices.yaml"))
    predictor = obj["spec"]["predictor"]
    container = predictor["containers"][0]
    assert container["image"] == "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
    assert container["resources"]["requests"]["amd.com/gpu"] in ("1", 1)
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["AIM_PROFILE_ID"] == "vllm-mi300x-fp8-tp1-latency" and env["VLLM_LOGGING_LEVEL"] == "INFO"
    assert any(v.get("persistentVolumeClaim") for v in predictor["volumes"])  # the cache's PVC is mounted
    owner = obj["metadata"]["ownerReferences"][0]
    assert owner["kind"] == "AIMService" and owner["name"] == "qwen-chat" and owner["controller"] is True
    assert obj["metadata"]["labels"]["aim.eai.amd.com/service.name"] == "qwen-chat"
    managers = {m["manager"] for m in obj["metadata"]["managedFields"]}
    assert "aim-service-controller" in managers

    route = await eventually(lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])
    validate_against_crd(route, third_party_crd("gateway.networking.k8s.io_httproutes.yaml"))
    assert route["spec"]["parentRefs"][0]["name"] == "kserve-ingress-gateway"
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == f"{obj['metadata']['name']}-predictor"

    svc = await eventually(
        lambda: condition(kube.get(SVC, NS, "qwen-chat"), "InferenceServiceReady") and kube.get(SVC, NS, "qwen-chat")
    )
    assert svc["status"]["status"] == "Starting"
    assert condition(svc, "ModelReady")["reason"] == "ModelResolved"
    assert condition(svc, "TemplateReady")["reason"] == "Resolved"
    assert condition(svc, "CacheReady")["reason"] == "CacheReady"
    assert svc["status"]["resolvedTemplate"]["name"].endswith("1x-mi300x-lat-fp8-31dd")

    # KServe reports the InferenceService Ready and its pod runs; the gateway accepts the route.
    serve(kube, obj)

    def running():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert svc["status"]["status"] == "Running", svc["status"]
        assert condition(svc, "Ready")["reason"] == "AllComponentsReady"
        assert svc["status"]["routing"]["path"].startswith("/ml-team/")
        return svc

    await eventually(running, timeout=3)
    await eventually(lambda: "AllComponentsReady" in {e["reason"] for e in kube.events_for("qwen-chat", NS)})


async def test_dependency_changes_reach_the_service_within_a_second(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])
    obj = await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])
    name = obj["metadata"]["name"]

    # A runtime-config change (F19) reaches the container env.
    response = await api.patch(
        kube.path(CRC, None, "default"),
        json={"spec": {"env": [{"name": "EXTRA_FLAG", "value": "on"}]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def env_updated():
        env = {e["name"]: e.get("value") for e in kube.get(ISVC, NS, name)["spec"]["predictor"]["containers"][0]["env"]}
        assert env.get("EXTRA_FLAG") == "on"
        return True

    await eventually(env_updated, timeout=REACT)

    # An InferenceService edited by hand is put back.
    edited = kube.get(ISVC, NS, name)
    edited["spec"]["predictor"]["containers"][0]["image"] = "someone/else:latest"
    response = await api.patch(
        kube.path(ISVC, NS, name),
        json={"spec": {"predictor": edited["spec"]["predictor"]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def restored():
        image = kube.get(ISVC, NS, name)["spec"]["predictor"]["containers"][0]["image"]
        assert image == "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
        return True

    await eventually(restored, timeout=REACT)

    # The service switches to autoscaling: the same object changes mode.
    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"),
        json={"spec": {"minReplicas": 1, "maxReplicas": 3}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200

    def autoscaled():
        isvc = kube.get(ISVC, NS, name)
        assert isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "keda"
        assert isvc["spec"]["predictor"]["maxReplicas"] == 3
        return True

    await eventually(autoscaled, timeout=REACT)


async def test_routing_without_a_gateway_fails_and_applies_nothing(kube, api, cluster, operator):
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "no-gateway"
    body["spec"]["runtimeConfigName"] = "bare"  # no such config: and routing explicitly on without a gateway
    body["spec"]["routing"] = {"enabled": True}
    await create(api, kube, body)

    def failed():
        svc = kube.get(SVC, NS, "no-gateway")
        assert svc["status"]["status"] == "Failed"
        ready = condition(svc, "Ready")
        assert ready["status"] == "False"
        return svc

    svc = await eventually(failed)
    reasons = {c["reason"] for c in svc["status"]["conditions"]}
    assert "ReferenceNotFound" in reasons
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=no-gateway") == []

    # With the config name fixed, routing still lacks a gateway: GatewayNotConfigured.
    del body["spec"]["runtimeConfigName"]
    # (the cluster config names a gateway: take it away first, or the service would use it)
    response = await api.patch(
        kube.path(CRC, None, "default"),
        json={"spec": {"routing": {"gatewayRef": None}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    from aim_core.reconcile.resources import CLUSTER_RUNTIME_CONFIGS

    await eventually(
        lambda: (
            "gatewayRef" not in operator.runtime.store.get(CLUSTER_RUNTIME_CONFIGS, None, "default")["spec"]["routing"]
        )
    )  # the operator has seen it
    response = await api.patch(
        kube.path(SVC, NS, "no-gateway"),
        json={"spec": {"runtimeConfigName": None, "routing": {"enabled": True, "gatewayRef": None}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200

    def gateway_missing():
        svc = kube.get(SVC, NS, "no-gateway")
        assert condition(svc, "HTTPRouteReady")["reason"] == "GatewayNotConfigured"
        assert svc["status"]["status"] == "Failed"
        return svc

    await eventually(gateway_missing)
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=no-gateway") == []


async def test_steady_state_service_reconcile_writes_nothing(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])
    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat"))
    await eventually(lambda: condition(kube.get(SVC, NS, "qwen-chat"), "InferenceServiceReady"))
    await operator.settle()
    mark = kube.mark()
    processed = operator.runtime.engine.queue.processed
    operator.requeue_all()
    await eventually(lambda: operator.runtime.engine.queue.processed > processed)
    await operator.settle()
    assert kube.writes(since=mark) == 0, [c for c in kube.calls[mark:]]


async def test_model_template_and_node_changes_reach_the_service(kube, api, cluster, operator):
    CM = "aim.eai.amd.com/v1alpha1/aimclustermodels"
    CT = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"
    await create(api, kube, cluster["qwen-chat"])
    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat"))

    # The model fails: the service follows within a second.
    model = kube.get(CM, None, "qwen3-32b")
    kube.put_object({**model, "status": {**model["status"], "status": "Failed"}})

    def model_failed():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert condition(svc, "ModelReady")["status"] == "False"
        assert svc["status"]["status"] == "Failed"
        return True

    await eventually(model_failed, timeout=REACT)
    kube.put_object(model)  # back to Ready
    await eventually(lambda: condition(kube.get(SVC, NS, "qwen-chat"), "ModelReady")["status"] == "True", timeout=REACT)

    # The template runs out of GPUs (NotAvailable). Auto-selection moves on to the next Ready
    # template; a service that named the template waits as Pending, its Ready naming the template.
    name = kube.get(SVC, NS, "qwen-chat")["status"]["resolvedTemplate"]["name"]
    pinned = copy.deepcopy(cluster["qwen-chat"])
    pinned["metadata"]["name"] = "pinned"
    pinned["spec"]["template"] = {"name": name}
    await create(api, kube, pinned)
    await eventually(lambda: condition(kube.get(SVC, NS, "pinned"), "TemplateReady")["status"] == "True")
    tpl = kube.get(CT, None, name)
    kube.put_object({**tpl, "status": {**tpl["status"], "status": "NotAvailable"}})

    def template_unavailable():
        svc = kube.get(SVC, NS, "pinned")
        assert condition(svc, "TemplateReady")["status"] == "False"
        assert svc["status"]["status"] == "Pending"
        assert name in condition(svc, "Ready")["message"]
        other = kube.get(SVC, NS, "qwen-chat")["status"]["resolvedTemplate"]["name"]
        assert other != name
        return True

    await eventually(template_unavailable, timeout=REACT)
    kube.put_object(tpl)

    # A service still choosing its template reacts to GPU nodes appearing and going away.
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "needs-gpus"
    for node in kube.list("v1/nodes"):
        await api.delete(kube.path("v1/nodes", None, node["metadata"]["name"]))
    # Streams are not ordered with each other: without this the service's ADDED could reach the operator
    # before the Nodes' DELETED, and the template it chose then is kept (as a chosen template is).
    await eventually(lambda: not operator.runtime.engine.store.list(NODES))
    await create(api, kube, body)

    def waiting_for_gpus():
        svc = kube.get(SVC, NS, "needs-gpus")
        ready = condition(svc, "TemplateReady")
        assert ready["status"] == "False" and ready["reason"] == "TemplateNotFound"
        assert "gpu" in ready["message"].lower()
        return True

    await eventually(waiting_for_gpus)
    for doc in load_documents([ROOT / "examples" / "nodes.yaml"]):
        kube.put_object(doc)
    await eventually(
        lambda: condition(kube.get(SVC, NS, "needs-gpus"), "TemplateReady")["status"] == "True", timeout=REACT
    )


async def test_deleting_a_service_removes_the_caches_it_made_that_are_not_ready(kube, api, cluster, operator):
    TC = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
    await create(api, kube, cluster["llama-chat"])  # no cache exists for its template: it makes one

    def made_cache():
        svc = kube.get(SVC, NS, "llama-chat")
        assert "aim.eai.amd.com/template-cache-cleanup" in svc["metadata"].get("finalizers", [])
        caches = kube.list(TC, NS, label_selector="aim.eai.amd.com/service=llama-chat")
        assert len(caches) == 1
        return caches[0]

    cache = await eventually(made_cache)
    assert (cache.get("status") or {}).get("status") != "Ready"  # its artifacts are still to be downloaded

    response = await api.delete(kube.path(SVC, NS, "llama-chat"))
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get(SVC, NS, "llama-chat") is None)
    await eventually(lambda: kube.get(TC, NS, cache["metadata"]["name"]) is None)
    # the Ready shared cache of the examples (made by qwen-chat) stays
    assert kube.list(TC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")


async def test_a_paused_service_is_left_alone_until_the_annotation_goes(kube, api, cluster, operator):
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"].setdefault("annotations", {}).update(PAUSED)
    await create(api, kube, body)
    from aim_core.reconcile.resources import SERVICES

    await eventually(lambda: operator.runtime.store.get(SERVICES, NS, "qwen-chat"))  # the operator has seen it
    await operator.settle()
    svc = kube.get(SVC, NS, "qwen-chat")
    assert "status" not in svc or not svc["status"].get("conditions")
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat") == []

    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"),
        json={"metadata": {"annotations": {"aim.eai.amd.com/reconciliation-paused": None}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200
    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat"), timeout=REACT)


async def test_pod_failures_are_explained_from_events_and_logs(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])
    isvc = await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])
    name = isvc["metadata"]["name"]
    # The InferenceService has been failing for a while (KServe reports no Ready condition).
    kube.put_object({**isvc, "metadata": {**isvc["metadata"], "creationTimestamp": "2026-01-01T00:00:00Z"}})
    pull = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-predictor-0",
            "namespace": NS,
            "labels": {"serving.kserve.io/inferenceservice": name},
        },
        "status": {
            "phase": "Pending",
            "containerStatuses": [
                {
                    "name": "kserve-container",
                    "image": "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5",
                    "ready": False,
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}},
                }
            ],
        },
    }
    kube.put_object(pull)
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "pull-failed", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": pull["metadata"]["name"], "namespace": NS},
            "reason": "Failed",
            "type": "Warning",
            "lastTimestamp": "2026-01-01T00:01:00Z",
            "message": "Failed to pull image: manifest unknown: manifest unknown",
        }
    )

    def image_not_found():
        svc = kube.get(SVC, NS, "qwen-chat")
        pods = condition(svc, "InferenceServicePodsReady")
        assert (pods["status"], pods["reason"]) == ("False", "ImageNotFound"), pods
        assert "manifest unknown" in pods["message"]
        return True

    await eventually(image_not_found, timeout=3)

    # The container now starts but exits: the log tail says why.
    crashed = copy.deepcopy(pull)
    crashed["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "kserve-container",
                "ready": False,
                "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
            }
        ],
    }
    kube.set_log(
        NS,
        pull["metadata"]["name"],
        "loading weights\nRepositoryNotFoundError: 404 Client Error. Repository Not Found for url\n",
    )
    kube.put_object(crashed)

    def source_not_found():
        pods = condition(kube.get(SVC, NS, "qwen-chat"), "InferenceServicePodsReady")
        assert pods["reason"] == "SourceNotFound", pods
        assert "Log excerpt" in pods["message"]
        return True

    await eventually(source_not_found, timeout=3)


async def test_a_kserve_warning_reaches_the_service_from_the_event_watch_with_no_polling(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])
    isvc = await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0])
    await operator.settle()
    assert operator.runtime.engine.queue.pending() == 0  # a not-Ready InferenceService: no look-again timer
    mark = kube.mark()
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "isvc-rejected", "namespace": NS},
            "involvedObject": {
                "apiVersion": "serving.kserve.io/v1beta1",
                "kind": "InferenceService",
                "name": isvc["metadata"]["name"],
                "namespace": NS,
                "uid": isvc["metadata"]["uid"],
            },
            "reason": "ServerlessModeRejected",
            "type": "Warning",
            "lastTimestamp": "2026-01-01T00:01:00Z",
            "message": "Serverless mode requires Knative Serving",
        }
    )

    def rejected():
        ready = condition(kube.get(SVC, NS, "qwen-chat"), "Ready")
        assert (ready["status"], ready["reason"]) == ("False", "ServerlessModeRejected"), ready
        return True

    await eventually(rejected, timeout=REACT)
    assert kube.count("list", resource="v1/events", since=mark) == 0  # read from the watch, not listed
