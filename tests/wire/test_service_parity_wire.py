"""AIMService parity with upstream (issue 11), end to end: the real operator against the API emulator.

The cluster is the one in ``examples/`` (see ``test_services_wire.py``).
"""

from __future__ import annotations

import copy

from tests.wire.conftest import eventually
from tests.wire.test_services_wire import ISVC, NS, SVC, cluster, condition, create  # noqa: F401 - cluster is a fixture

FINALIZER = "aim.eai.amd.com/template-cache-cleanup"
TC = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
HOLD = "test.aim.eai.amd.com/hold"  # a finalizer of the test's own, to keep an object while it looks
MERGE = {"Content-Type": "application/merge-patch+json"}


async def test_the_finalizer_comes_on_the_first_reconcile_and_never_blocks_the_namespace(kube, api, cluster, operator):
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "waiting"
    body["spec"]["model"] = {"name": "not-published-yet"}
    await create(api, kube, body)

    await eventually(lambda: condition(kube.get(SVC, NS, "waiting"), "ModelReady")["reason"] == "ModelNotFound")
    # Added on the first reconcile as upstream (F13, issue 18), although there is nothing to clean up yet:
    # upstream's namespace-deletion-not-blocked waits for it on a service whose model is not ready.
    assert FINALIZER in kube.get(SVC, NS, "waiting")["metadata"].get("finalizers", [])

    # A service that made a cache which is not Ready yet, in the same namespace: it has the finalizer.
    await create(api, kube, cluster["llama-chat"])
    made = await eventually(lambda: kube.list(TC, NS, label_selector="aim.eai.amd.com/service=llama-chat")[0])
    assert FINALIZER in kube.get(SVC, NS, "llama-chat")["metadata"]["finalizers"]  # added before the cache

    # Held by a finalizer of the test's own, so that the operator's not deleting it can be seen.
    tc = made["metadata"]["name"]
    cleanup = "aim.eai.amd.com/artifactcleanup"
    await eventually(lambda: cleanup in kube.get(TC, NS, tc)["metadata"]["finalizers"])
    held = [*kube.get(TC, NS, tc)["metadata"]["finalizers"], HOLD]
    response = await api.patch(kube.path(TC, NS, tc), json={"metadata": {"finalizers": held}}, headers=MERGE)
    assert response.status_code == 200, response.text

    # The namespace is deleted: the namespace controller deletes every object in it.
    mark = kube.mark()
    response = await api.delete(f"/api/v1/namespaces/{NS}")
    assert response.status_code == 200, response.text
    await eventually(
        lambda: kube.get(SVC, NS, "waiting") is None and kube.get(SVC, NS, "llama-chat") is None, timeout=30
    )
    # No cleanup in a terminating namespace (F15): the finalizer only steps aside.
    assert kube.count("delete", resource="aimtemplatecaches", agent="aim-engine", since=mark) == 0
    # The template cache's own finalizer does not hold the namespace either: only the test's is left.
    await eventually(lambda: kube.get(TC, NS, tc)["metadata"]["finalizers"] == [HOLD], timeout=30)
    response = await api.patch(kube.path(TC, NS, tc), json={"metadata": {"finalizers": None}}, headers=MERGE)
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get("v1/namespaces", None, NS) is None, timeout=60)


async def test_a_service_whose_model_is_not_ready_holds_the_finalizer_and_its_namespace_still_goes(
    kube, api, cluster, operator
):
    # upstream's aimservice/common/cache-cleanup/namespace-deletion-not-blocked (F13, F15, issue 18): the
    # finalizer is there from the first reconcile, and deleting the namespace is never held by it.
    ns = "goes-away"
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"] = {"name": "waiting", "namespace": ns}
    body["spec"]["model"] = {"name": "not-published-yet"}
    await create(api, kube, body)
    await eventually(lambda: FINALIZER in kube.get(SVC, ns, "waiting")["metadata"].get("finalizers", []), timeout=20)
    await eventually(lambda: condition(kube.get(SVC, ns, "waiting"), "ModelReady")["reason"] == "ModelNotFound")

    response = await api.delete(f"/api/v1/namespaces/{ns}")
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get(SVC, ns, "waiting") is None, timeout=60)
    await eventually(lambda: kube.get("v1/namespaces", None, ns) is None, timeout=60)


async def test_a_new_service_costs_four_requests_with_its_finalizer(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])  # the fixture's Ready cache for its template is labelled with it
    await eventually(lambda: FINALIZER in kube.get(SVC, NS, "qwen-chat")["metadata"].get("finalizers", []))
    await operator.settle()

    mark = kube.mark()
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "qwen-two"
    await create(api, kube, body)
    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-two"))
    await operator.settle()

    svc = kube.get(SVC, NS, "qwen-two")
    assert (
        svc["status"]["cache"]["templateCacheRef"]["name"]
        == kube.list(TC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0]["metadata"]["name"]
    )
    assert FINALIZER in svc["metadata"].get("finalizers", [])  # although it made no cache (upstream F13)
    ours = [c for c in kube.calls[mark:] if c.user_agent.startswith("aim-engine") and c.verb not in ("get", "list")]
    # one metadata patch (the finalizer), before the InferenceService is created, in the same pass
    writes = [(c.verb, c.resource, c.subresource) for c in ours]
    assert writes.count(("patch", SVC, None)) == 1, writes
    assert writes.index(("patch", SVC, None)) < writes.index(("apply", ISVC, None)), writes

    # Deleting it waits for the operator only as long as it takes to release the finalizer (no cache to delete).
    response = await api.delete(kube.path(SVC, NS, "qwen-two"))
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get(SVC, NS, "qwen-two") is None)
    assert kube.list(TC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")  # the cache it used stays


async def test_a_paused_service_with_caches_to_clean_up_still_gets_its_finalizer(kube, api, cluster, operator):
    # A cache labelled as made by "paused" exists (made before the service was paused and lost its finalizer).
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": "paused-cache", "namespace": NS, "labels": {"aim.eai.amd.com/service": "paused"}},
            "spec": {"templateName": "nowhere", "templateScope": "Namespace"},
        }
    )
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "paused"
    body["metadata"]["annotations"] = {"aim.eai.amd.com/reconciliation-paused": "true"}
    await create(api, kube, body)

    await eventually(lambda: FINALIZER in kube.get(SVC, NS, "paused")["metadata"].get("finalizers", []))  # Q18
    await operator.settle()
    assert not (kube.get(SVC, NS, "paused").get("status") or {}).get("conditions")  # nothing else happens

    # The same without a cache: paused, the finalizer all the same (Q18, F13) and nothing else written.
    body["metadata"]["name"] = "paused-alone"
    await create(api, kube, body)
    await eventually(lambda: FINALIZER in kube.get(SVC, NS, "paused-alone")["metadata"].get("finalizers", []))
    await operator.settle()
    assert not (kube.get(SVC, NS, "paused-alone").get("status") or {}).get("conditions")


async def test_naming_a_template_on_a_running_service_moves_it_off_the_recorded_one(kube, api, cluster, operator):
    await create(api, kube, cluster["qwen-chat"])
    await eventually(lambda: kube.get(SVC, NS, "qwen-chat")["status"]["resolvedTemplate"]["name"].endswith("31dd"))
    merge = {"Content-Type": "application/merge-patch+json"}

    # spec.model cannot change once set (CEL transition rule, as upstream's CRD): the API server refuses.
    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"), json={"spec": {"model": {"name": "llama-3-1-8b-instruct"}}}, headers=merge
    )
    assert response.status_code == 422, response.text
    assert "model selection is immutable after creation" in response.text

    # spec.template was not set, so it may be added; the spec wins over the recorded template.
    wanted = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-8x-mi300x-thr-fp16-e32e"
    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"), json={"spec": {"template": {"name": wanted}}}, headers=merge
    )
    assert response.status_code == 200, response.text

    def moved():
        svc = kube.get(SVC, NS, "qwen-chat")
        template = condition(svc, "TemplateReady")
        assert (template["status"], template["reason"]) == ("True", "Resolved"), template
        assert svc["status"]["resolvedTemplate"]["name"] == wanted
        return True

    await eventually(moved, timeout=3)


async def test_min_replicas_above_max_fails_the_service_at_once_and_nothing_is_created(kube, api, cluster, operator):
    ISVC = "serving.kserve.io/v1beta1/inferenceservices"
    body = copy.deepcopy(cluster["llama-chat"])  # its template has no Ready cache yet: a cache would be made
    body["metadata"]["name"] = "upside-down"
    body["spec"].update({"minReplicas": 3, "maxReplicas": 2})
    await create(api, kube, body)

    def refused():
        svc = kube.get(SVC, NS, "upside-down")
        config = condition(svc, "ConfigValid")
        assert (config["status"], config["reason"]) == ("False", "InvalidSpec"), config
        assert "spec.minReplicas (3) is above spec.maxReplicas (2)" in config["message"]
        assert svc["status"]["status"] == "Failed"
        return True

    await eventually(refused)
    await operator.settle()
    assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=upside-down") == []
    assert kube.list(TC, NS, label_selector="aim.eai.amd.com/service=upside-down") == []

    response = await api.patch(
        kube.path(SVC, NS, "upside-down"),
        json={"spec": {"maxReplicas": 4}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.list(TC, NS, label_selector="aim.eai.amd.com/service=upside-down"))
    await eventually(lambda: condition(kube.get(SVC, NS, "upside-down"), "ConfigValid")["status"] == "True")
