"""Deleting a namespace with services and caches: the operator only releases its finalizers there.

The emulator plays the namespace controller (kube-controller-manager's does on a real API server): the namespace turns Terminating,
everything in it is deleted (finalizers hold objects), creates there are
refused with 403 (Events included), and the namespace goes once it is empty. Creates in a namespace
that does not exist are refused with 404 on both.
"""

from __future__ import annotations

import copy

from tests.wire.conftest import eventually
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, create  # noqa: F401 - fixture

TC = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"


async def test_deleting_a_namespace_causes_no_refused_write_and_releases_every_finalizer(kube, api, cluster, operator):
    for name in ("qwen-chat", "llama-chat", "qwen-batch"):
        await create(api, kube, cluster[name])
    other = copy.deepcopy(cluster["qwen-chat"])
    other["metadata"]["name"] = "qwen-two"
    await create(api, kube, other)

    def running():
        assert kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
        assert kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-two")
        assert kube.list(TC, NS, label_selector="aim.eai.amd.com/service=llama-chat")
        for name in ("qwen-chat", "llama-chat", "qwen-batch", "qwen-two"):
            # every service holds its finalizer from the first reconcile (F13), whether it made a cache or not
            assert kube.get(SVC, NS, name)["metadata"].get("finalizers"), name
        return True

    await eventually(running, timeout=60)
    await operator.settle()

    mark = kube.mark()
    response = await api.delete(f"/api/v1/namespaces/{NS}")
    assert response.status_code == 200, response.text
    assert response.json()["status"]["phase"] == "Terminating"
    await eventually(lambda: kube.get("v1/namespaces", None, NS) is None, timeout=60)  # every finalizer released
    assert kube.list(SVC, NS) == [] and kube.list(TC, NS) == []

    ours = [c for c in kube.calls[mark:] if c.user_agent.startswith("aim-engine") and c.namespace == NS]
    creates = [c for c in ours if c.verb in ("create", "apply")]
    assert creates == []  # each would have been refused: Events, children, caches
    assert [c for c in ours if c.subresource == "status"] == []
    assert {c.verb for c in ours} <= {"patch", "delete", "get", "list"}
    assert any(c.verb == "patch" and c.resource == SVC for c in ours)  # the finalizers, released


async def test_creates_in_a_namespace_that_does_not_exist_are_refused(kube, api):
    """404 NotFound naming the namespace, for a create and for a server-side apply that creates; the
    system namespaces are there; seeding an object (the facade's put_object) makes its namespace."""
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    refused = await api.post("/api/v1/namespaces/nowhere/configmaps", json=config)
    assert refused.status_code == 404, refused.text
    assert refused.json()["message"] == 'namespaces "nowhere" not found'
    assert refused.json()["details"] == {"name": "nowhere", "kind": "namespaces"}
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r"},
        "spec": {"parentRefs": [{"name": "gw"}]},
    }
    applied = await api.patch(
        "/apis/gateway.networking.k8s.io/v1/namespaces/nowhere/httproutes/r",
        params={"fieldManager": "m"},
        json=route,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 404, applied.text
    assert kube.get("v1/namespaces", None, "nowhere") is None

    assert (await api.post("/api/v1/namespaces/default/configmaps", json=config)).status_code == 201
    made = await api.post(
        "/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nowhere"}}
    )
    assert made.status_code == 201, made.text
    assert (await api.post("/api/v1/namespaces/nowhere/configmaps", json=config)).status_code == 201

    kube.put_object({**config, "metadata": {"name": "c", "namespace": "seeded"}})
    assert kube.get("v1/namespaces", None, "seeded") is not None


async def test_creates_in_a_terminating_namespace_are_refused(kube, api):
    kube.put_object(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}, "status": {"phase": "Active"}}
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "going", "finalizers": ["example.com/hold"]},
        "spec": {"containers": [{"name": "c", "image": "registry.invalid/c:1"}]},
    }
    assert (await api.post("/api/v1/namespaces/going/pods", json=pod)).status_code == 201
    deleting = (await api.delete("/api/v1/namespaces/going")).json()
    assert deleting["metadata"]["deletionTimestamp"] and deleting["status"]["phase"] == "Terminating"
    # held by its finalizer (at once on the emulator; once the namespace controller deletes it on a real server)
    await eventually(lambda: kube.get("v1/pods", "going", "p")["metadata"]["deletionTimestamp"])

    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "p.", "namespace": "going"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "going"},
        "reason": "X",
        "message": "x",
    }
    refused = await api.post("/api/v1/namespaces/going/events", json=event)
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "Forbidden" and "being terminated" in refused.json()["message"]
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r"},
        "spec": {"parentRefs": [{"name": "gw"}]},
    }
    applied = await api.patch(
        "/apis/gateway.networking.k8s.io/v1/namespaces/going/httproutes/r",
        params={"fieldManager": "m"},
        json=route,
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert applied.status_code == 403  # server-side apply of an object that does not exist is a create

    released = await api.patch(
        "/api/v1/namespaces/going/pods/p",
        json={"metadata": {"finalizers": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert released.status_code == 200  # updates are still allowed
    await eventually(lambda: kube.get("v1/pods", "going", "p") is None)
    # empty: the namespace is gone (at once on the emulator; when the namespace controller next looks on a real one)
    await eventually(lambda: kube.get("v1/namespaces", None, "going") is None, timeout=30)


async def test_deleting_a_namespace_with_twenty_services_their_caches_and_artifacts_draws_no_create(
    kube, api, cluster, operator
):
    # issue 18 measured 8 refused creates on a real server with an earlier main. On kube-apiserver 1.24 with
    # kube-controller-manager deleting the content in its own order and time there are none (also on ea52ff8,
    # before the watch changes); this pins it, on both backends
    names = ("qwen-chat", "llama-chat", "qwen-batch")
    for i in range(20):
        body = copy.deepcopy(cluster[names[i % len(names)]])
        body["metadata"]["name"] = f"svc-{i:02d}"
        await create(api, kube, body)

    def running():
        for i in range(20):
            assert (kube.get(SVC, NS, f"svc-{i:02d}").get("status") or {}).get("status"), i
        assert kube.list(TC, NS) and kube.list("aim.eai.amd.com/v1alpha1/aimartifacts", NS)
        return True

    await eventually(running, timeout=180)  # 20 services on a loaded machine
    await operator.settle(timeout=30)

    mark = kube.mark()
    response = await api.delete(f"/api/v1/namespaces/{NS}")
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get("v1/namespaces", None, NS) is None, timeout=90)

    ours = [c for c in kube.calls[mark:] if c.user_agent.startswith("aim-engine") and c.namespace == NS]
    assert [(c.verb, c.resource, c.name) for c in ours if c.verb in ("create", "apply")] == []


async def test_a_namespace_deleted_while_its_services_reconcile_gets_no_write_once_the_operator_knows(
    kube, api, cluster, operator
):
    # issue 18: on a real server a deletion in the middle of 20 services' reconciles drew a server-side apply
    # (a create, 403) 24 ms after the operator's store had seen the namespace going. Every write the operator
    # sends into the namespace is checked at the moment it is sent, against what the engine knows then.
    engine = operator.runtime.engine
    client = engine.kube
    sent = client._request
    late: list[str] = []

    async def checked(verb, method, path, **kw):
        if method != "GET" and f"/namespaces/{NS}/" in path and engine.terminating(NS):
            releases_finalizers = method == "PATCH" and set(kw.get("body") or {}) == {"metadata"}
            if not (releases_finalizers or method == "DELETE"):
                late.append(f"{method} {path}")
        return await sent(verb, method, path, **kw)

    client._request = checked
    names = ("qwen-chat", "llama-chat", "qwen-batch")
    for i in range(20):
        body = copy.deepcopy(cluster[names[i % len(names)]])
        body["metadata"]["name"] = f"svc-{i:02d}"
        await create(api, kube, body)
    await eventually(lambda: kube.list("aim.eai.amd.com/v1alpha1/aimartifacts", NS), timeout=60)

    response = await api.delete(f"/api/v1/namespaces/{NS}")  # while caches and artifacts are being made
    assert response.status_code == 200, response.text
    await eventually(lambda: kube.get("v1/namespaces", None, NS) is None, timeout=90)  # no finalizer held it
    await operator.settle(timeout=30)
    assert late == []
