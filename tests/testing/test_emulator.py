"""The API emulator behaves like an API server where our operator depends on it.

Everything here goes over real HTTP (httpx) to the running emulator.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import kopf
import pytest
from kopf.testing import KopfRunner

from aim_testing.emulator import declare_crd
from aim_testing.fixtures import Kube

WIDGETS = "/apis/example.com/v1/namespaces/ns1/widgets"
GADGETS = "/apis/example.com/v1/namespaces/ns1/gadgets"
APPLY = {"Content-Type": "application/apply-patch+yaml"}
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}


def crd(plural: str, kind: str, subresources: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "shortNames": [kind[:2].lower()]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": subresources,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                }
            ],
        },
    }


@pytest.fixture(autouse=True)
def _example_crds(kube: Kube) -> None:
    declare_crd(kube.emulator, crd("widgets", "Widget", {"status": {}}))  # with the status subresource
    declare_crd(kube.emulator, crd("gadgets", "Gadget", {}))  # without


def widget(name: str = "w1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


async def apply(
    api: httpx.AsyncClient, body: dict[str, Any], manager: str = "aim-engine", path: str = WIDGETS, sub: str = ""
) -> httpx.Response:
    url = f"{path}/{body['metadata']['name']}{sub}"
    return await api.patch(
        url, params={"fieldManager": manager, "force": "true"}, headers=APPLY, content=json.dumps(body)
    )


async def create(api: httpx.AsyncClient, body: dict[str, Any], path: str = WIDGETS) -> dict[str, Any]:
    response = await api.post(path, json=body)
    assert response.status_code == 201, response.text
    return response.json()


def managers(obj: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in obj["metadata"].get("managedFields", [])}


# --------------------------------------------------------------------------- server-side apply


async def test_apply_creates_the_object_with_server_fields(api: httpx.AsyncClient) -> None:
    response = await apply(api, widget(size=1))
    assert response.status_code == 201
    obj = response.json()
    assert obj["spec"] == {"size": 1}
    assert obj["metadata"]["namespace"] == "ns1"
    assert obj["metadata"]["uid"] and obj["metadata"]["creationTimestamp"].endswith("Z")
    assert int(obj["metadata"]["resourceVersion"]) > 0
    assert obj["metadata"]["generation"] == 1
    assert managers(obj) == {("aim-engine", "Apply"): {"f:spec": {"f:size": {}}}}


async def test_apply_of_the_same_config_is_a_no_op(api: httpx.AsyncClient) -> None:
    first = (await apply(api, widget(size=1))).json()
    second = await apply(api, widget(size=1))
    assert second.status_code == 200
    assert second.json()["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_apply_removes_fields_the_manager_no_longer_applies(api: httpx.AsyncClient, kube: Kube) -> None:
    body = widget(size=1, debug=True, env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    body["metadata"]["labels"] = {"app": "x", "tier": "gpu"}
    await apply(api, body)
    body = widget(size=2, env=[{"name": "A", "value": "1"}])
    body["metadata"]["labels"] = {"app": "x"}
    obj = (await apply(api, body)).json()
    assert obj["spec"] == {"size": 2, "env": [{"name": "A", "value": "1"}]}
    assert obj["metadata"]["labels"] == {"app": "x"}
    assert obj["metadata"]["generation"] == 2
    assert kube.get("widgets", "ns1", "w1")["spec"] == obj["spec"]
    assert (await apply(api, widget(size=2))).json()["spec"] == {"size": 2}  # the emptied list goes too


async def test_apply_keeps_fields_owned_by_other_managers(api: httpx.AsyncClient) -> None:
    await apply(api, widget(size=1, env=[{"name": "A", "value": "1"}]))
    await apply(api, widget(env=[{"name": "C", "value": "3"}]), manager="user")  # a keyed list item
    await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"replicas": 3}})  # an Update by the agent
    obj = (await apply(api, widget(size=1))).json()  # the operator drops env[A]
    assert obj["spec"] == {"size": 1, "env": [{"name": "C", "value": "3"}], "replicas": 3}
    owners = managers(obj)
    item_c = {".": {}, "f:name": {}, "f:value": {}}
    assert owners[("user", "Apply")] == {"f:spec": {"f:env": {'k:{"name":"C"}': item_c}}}
    assert owners[("python-httpx", "Update")] == {"f:spec": {"f:replicas": {}}}


async def test_apply_keeps_a_field_another_manager_also_applied(api: httpx.AsyncClient) -> None:
    await apply(api, widget(size=1, color="red"))
    await apply(api, widget(color="red"), manager="user")  # same value: shared ownership
    obj = (await apply(api, widget(size=1))).json()
    assert obj["spec"] == {"size": 1, "color": "red"}


async def test_apply_accepts_yaml(api: httpx.AsyncClient) -> None:
    body = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n"
    response = await api.patch(f"{WIDGETS}/w1", params={"fieldManager": "m"}, headers=APPLY, content=body)
    assert response.status_code == 201
    assert response.json()["spec"] == {"size": 3}


async def test_apply_needs_a_field_manager(api: httpx.AsyncClient) -> None:
    response = await api.patch(f"{WIDGETS}/w1", headers=APPLY, content=json.dumps(widget(size=1)))
    assert response.status_code == 422  # as kube-apiserver answers (tests/wire/test_api_parity_wire.py)
    assert response.json()["reason"] == "Invalid"
    assert response.json()["details"]["causes"][0]["field"] == "fieldManager"


async def test_apply_to_status_changes_only_the_status(api: httpx.AsyncClient) -> None:
    body = widget(size=1)
    body["status"] = {"phase": "Ignored"}
    created = (await apply(api, body)).json()
    assert "status" not in created  # the main resource ignores the status
    body = widget(size=99)
    body["status"] = {
        "phase": "Ready",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Progressing", "status": "False"}],
    }
    obj = (await apply(api, body, sub="/status")).json()
    assert obj["status"]["phase"] == "Ready"
    assert obj["spec"] == {"size": 1}
    assert obj["metadata"]["generation"] == 1
    body["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    obj = (await apply(api, body, sub="/status")).json()
    assert obj["status"] == {"conditions": [{"type": "Ready", "status": "True"}]}
    assert [e.get("subresource") for e in obj["metadata"]["managedFields"]] == [None, "status"]


# --------------------------------------------------------------------------- status subresource and patches


async def test_status_subresource_separates_spec_and_status(api: httpx.AsyncClient) -> None:
    body = widget(size=1)
    body["status"] = {"phase": "Dropped"}
    created = await create(api, body)
    assert "status" not in created
    main = await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"size": 2}, "status": {"phase": "X"}})
    assert main.json()["spec"] == {"size": 2} and "status" not in main.json()
    status = await api.patch(
        f"{WIDGETS}/w1/status", headers=MERGE, json={"spec": {"size": 3}, "status": {"phase": "Ready"}}
    )
    assert status.json()["spec"] == {"size": 2}
    assert status.json()["status"] == {"phase": "Ready"}
    assert status.json()["metadata"]["generation"] == 2  # the status write did not count
    put = status.json() | {"status": {"phase": "Replaced"}}
    replaced = await api.put(f"{WIDGETS}/w1/status", json=put)
    assert replaced.status_code == 200
    assert replaced.json()["status"] == {"phase": "Replaced"}
    assert (await api.get(f"{WIDGETS}/w1/status")).json()["status"] == {"phase": "Replaced"}


async def test_without_a_status_subresource_the_status_is_plain_data(api: httpx.AsyncClient) -> None:
    body = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "status": {"a": 1}}
    assert (await create(api, body, path=GADGETS))["status"] == {"a": 1}
    assert (await api.patch(f"{GADGETS}/g1/status", headers=MERGE, json={"status": {}})).status_code == 404
    patched = await api.patch(f"{GADGETS}/g1", headers=MERGE, json={"status": {"a": 2}})
    assert patched.json()["status"] == {"a": 2}


async def test_merge_patch_null_deletes_keys(api: httpx.AsyncClient) -> None:
    await create(api, widget(size=1, color="red", nested={"a": 1, "b": 2}))
    patch = {"spec": {"color": None, "nested": {"a": None}}}
    obj = (await api.patch(f"{WIDGETS}/w1", headers=MERGE, json=patch)).json()
    assert obj["spec"] == {"size": 1, "nested": {"b": 2}}


async def test_json_patch_applies_and_a_failed_test_is_unprocessable(api: httpx.AsyncClient) -> None:
    created = await create(api, widget(size=1))
    rv = created["metadata"]["resourceVersion"]
    ok = await api.patch(
        f"{WIDGETS}/w1",
        headers=JSON_PATCH,
        json=[
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "replace", "path": "/spec/size", "value": 2},
        ],
    )
    assert ok.json()["spec"] == {"size": 2}
    stale = await api.patch(
        f"{WIDGETS}/w1",
        headers=JSON_PATCH,
        json=[
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "replace", "path": "/spec/size", "value": 3},
        ],
    )
    assert stale.status_code == 422


async def test_strategic_merge_is_for_built_in_types_only(api: httpx.AsyncClient) -> None:
    await create(api, widget(size=1))
    assert (await api.patch(f"{WIDGETS}/w1", headers=STRATEGIC, json={"spec": {}})).status_code == 415
    assert (
        await api.patch(f"{WIDGETS}/w1", headers={"Content-Type": "application/json"}, json={"spec": {}})
    ).status_code == 415
    pod = {
        "metadata": {"name": "p1"},
        "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
    }
    await create(api, pod, path="/api/v1/namespaces/ns1/pods")
    patched = await api.patch(
        "/api/v1/namespaces/ns1/pods/p1",
        headers=STRATEGIC,
        json={"spec": {"containers": [{"name": "b", "image": "b:2"}]}},
    )
    assert patched.json()["spec"]["containers"] == [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}]


# --------------------------------------------------------------------------- versions and conflicts


async def test_resource_versions_and_generations(api: httpx.AsyncClient) -> None:
    first = await create(api, widget("w1", size=1))
    second = await create(api, widget("w2", size=1))
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    labelled = (await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"metadata": {"labels": {"a": "b"}}})).json()
    assert int(labelled["metadata"]["resourceVersion"]) > int(second["metadata"]["resourceVersion"])
    assert labelled["metadata"]["generation"] == 1  # metadata is not the spec
    resized = (await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"size": 2}})).json()
    assert resized["metadata"]["generation"] == 2
    assert resized["metadata"]["uid"] == first["metadata"]["uid"]
    listing = (await api.get(WIDGETS)).json()
    assert listing["metadata"]["resourceVersion"] == resized["metadata"]["resourceVersion"]


async def test_stale_writes_conflict(api: httpx.AsyncClient) -> None:
    created = await create(api, widget(size=1))
    await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"size": 2}})
    stale_put = await api.put(f"{WIDGETS}/w1", json=created)
    assert stale_put.status_code == 409
    assert stale_put.json()["kind"] == "Status" and stale_put.json()["reason"] == "Conflict"
    stale_patch = await api.patch(
        f"{WIDGETS}/w1",
        headers=MERGE,
        json={"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "spec": {"size": 3}},
    )
    assert stale_patch.status_code == 409
    unversioned = await api.put(f"{WIDGETS}/w1", json=widget(size=4))
    assert unversioned.status_code == 422  # custom resources need a resourceVersion on PUT
    fresh = (await api.get(f"{WIDGETS}/w1")).json()
    assert (await api.put(f"{WIDGETS}/w1", json=fresh | {"spec": {"size": 5}})).json()["spec"] == {"size": 5}


async def test_errors_are_kubernetes_statuses(api: httpx.AsyncClient) -> None:
    await create(api, widget())
    duplicate = await api.post(WIDGETS, json=widget())
    assert (duplicate.status_code, duplicate.json()["reason"]) == (409, "AlreadyExists")
    missing = await api.get(f"{WIDGETS}/nope")
    assert (missing.status_code, missing.json()["reason"]) == (404, "NotFound")
    assert (await api.get("/apis/example.com/v1/namespaces/ns1/undeclared")).status_code == 404


# --------------------------------------------------------------------------- selectors


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", ["a", "b"]),
        ("app==web", ["a", "b"]),
        ("app!=web", ["c", "d"]),
        ("tier in (gpu, cpu)", ["a", "b"]),
        ("tier notin (gpu)", ["b", "c", "d"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d"]),
        ("app=web,tier=gpu", ["a"]),
        ("app in (web,db),!tier", ["c"]),
    ],
)
async def test_label_selectors_on_list(api: httpx.AsyncClient, kube: Kube, selector: str, expected: list[str]) -> None:
    labels = {"a": {"app": "web", "tier": "gpu"}, "b": {"app": "web", "tier": "cpu"}, "c": {"app": "db"}, "d": {}}
    for name, values in labels.items():
        kube.put_object(widget(name) | {"metadata": {"name": name, "namespace": "ns1", "labels": values}})
    listing = (await api.get(WIDGETS, params={"labelSelector": selector})).json()
    assert [item["metadata"]["name"] for item in listing["items"]] == expected
    assert [o["metadata"]["name"] for o in kube.list("widgets", label_selector=selector)] == expected


async def test_field_selectors_and_bad_selectors(api: httpx.AsyncClient, kube: Kube) -> None:
    for ns, name in [("ns1", "a"), ("ns2", "a"), ("ns2", "b")]:
        kube.put_object({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": ns}})
    everywhere = "/apis/example.com/v1/widgets"
    by_name = (await api.get(everywhere, params={"fieldSelector": "metadata.name=a"})).json()["items"]
    assert [o["metadata"]["namespace"] for o in by_name] == ["ns1", "ns2"]
    by_ns = (await api.get(everywhere, params={"fieldSelector": "metadata.namespace!=ns1"})).json()["items"]
    assert [o["metadata"]["name"] for o in by_ns] == ["a", "b"]
    assert (await api.get(everywhere, params={"labelSelector": "a in b"})).status_code == 400


# --------------------------------------------------------------------------- watches


async def read_events(response: httpx.Response, count: int, timeout: float = 3) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    lines = response.aiter_lines()
    async with asyncio.timeout(timeout):
        while len(events) < count:
            line = await anext(lines)
            if line.strip():
                events.append(json.loads(line))
    return events


async def test_watch_resumes_from_the_list_version(api: httpx.AsyncClient) -> None:
    await create(api, widget("old"))
    rv = (await api.get(WIDGETS)).json()["metadata"]["resourceVersion"]
    async with api.stream("GET", WIDGETS, params={"watch": "true", "resourceVersion": rv}) as response:
        created = await create(api, widget("new", size=1))
        patched = (await api.patch(f"{WIDGETS}/new", headers=MERGE, json={"spec": {"size": 2}})).json()
        await api.delete(f"{WIDGETS}/new")
        events = await read_events(response, 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "new"),
        ("MODIFIED", "new"),
        ("DELETED", "new"),
    ]
    assert events[0]["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert events[1]["object"]["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) > int(patched["metadata"]["resourceVersion"])


async def test_watch_with_a_label_selector_sees_objects_enter_and_leave(api: httpx.AsyncClient) -> None:
    await create(api, widget("w1"))
    params = {"watch": "true", "labelSelector": "app=web", "timeoutSeconds": "2"}
    async with api.stream("GET", WIDGETS, params=params) as response:
        await create(api, widget("other"))  # never matches: not streamed
        await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"metadata": {"labels": {"app": "web"}}})
        await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"size": 1}})
        await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"metadata": {"labels": None}})
        events = await read_events(response, 3)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "w1"),
        ("MODIFIED", "w1"),
        ("DELETED", "w1"),
    ]


async def test_watch_without_a_version_starts_with_the_current_objects_and_times_out(api: httpx.AsyncClient) -> None:
    await create(api, widget("w1"))
    params = {"watch": "true", "timeoutSeconds": "0.2", "sendInitialEvents": "true"}
    async with asyncio.timeout(3), api.stream("GET", WIDGETS, params=params) as response:
        lines = [json.loads(line) async for line in response.aiter_lines() if line.strip()]
    assert [e["type"] for e in lines] == ["ADDED", "BOOKMARK"]
    assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_a_watch_from_a_compacted_version_gets_410_gone_and_a_list_gives_a_fresh_one(
    api: httpx.AsyncClient, kube: Kube
) -> None:
    await create(api, widget("w1"))
    old = (await api.get(WIDGETS)).json()["metadata"]["resourceVersion"]
    await create(api, widget("w2"))
    kube.emulator.compact()
    async with (
        asyncio.timeout(3),
        api.stream("GET", WIDGETS, params={"watch": "true", "resourceVersion": old}) as response,
    ):
        lines = [json.loads(line) async for line in response.aiter_lines() if line.strip()]
    assert [(e["type"], e["object"]["code"], e["object"]["reason"]) for e in lines] == [("ERROR", 410, "Expired")]
    fresh = (await api.get(WIDGETS)).json()["metadata"]["resourceVersion"]
    async with api.stream("GET", WIDGETS, params={"watch": "true", "resourceVersion": fresh}) as response:
        await create(api, widget("w3"))
        [added] = await read_events(response, 1)
    assert (added["type"], added["object"]["metadata"]["name"]) == ("ADDED", "w3")


async def test_a_quiet_watch_that_allows_bookmarks_gets_them_with_the_current_version(
    api: httpx.AsyncClient, kube: Kube
) -> None:
    kube.emulator.bookmark_interval = 0.05
    rv = (await api.get(WIDGETS)).json()["metadata"]["resourceVersion"]
    params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "5"}
    async with asyncio.timeout(3), api.stream("GET", WIDGETS, params=params) as response:
        lines = (json.loads(line) async for line in response.aiter_lines() if line.strip())
        bookmark = await anext(lines)
        await create(
            api, {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}}, path=GADGETS
        )  # another resource: moves the version only
        later = [await anext(lines)]
    assert bookmark["type"] == "BOOKMARK" and bookmark["object"]["metadata"]["resourceVersion"] == rv
    assert later[0]["type"] == "BOOKMARK"
    assert int(later[0]["object"]["metadata"]["resourceVersion"]) > int(rv)


async def test_event_field_selectors_take_only_the_fields_the_api_server_indexes(api: httpx.AsyncClient) -> None:
    events = "/api/v1/namespaces/ns1/events"
    ok = await api.get(events, params={"fieldSelector": "involvedObject.kind=Pod,type=Warning"})
    assert ok.status_code == 200, ok.text
    for path in (events, "/api/v1/events"):
        refused = await api.get(path, params={"fieldSelector": "message=boom"})
        assert refused.status_code == 400 and "field label not supported: message" in refused.json()["message"]
        refused = await api.get(path, params={"watch": "true", "fieldSelector": "count=1"})
        assert refused.status_code == 400


async def test_secrets_and_pods_are_selected_by_the_fields_the_api_server_supports(
    api: httpx.AsyncClient, kube: Kube
) -> None:
    for name, kind in (("pull", "kubernetes.io/dockerconfigjson"), ("helm", "helm.sh/release.v1"), ("plain", None)):
        kube.put_object(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": "ns1"},
                **({"type": kind} if kind else {}),
            }
        )
    selected = await api.get("/api/v1/secrets", params={"fieldSelector": "type=kubernetes.io/dockerconfigjson"})
    assert [s["metadata"]["name"] for s in selected.json()["items"]] == ["pull"]
    refused = await api.get("/api/v1/secrets", params={"fieldSelector": "data.token=x"})
    assert refused.status_code == 400 and "field label not supported: data.token" in refused.json()["message"]
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns1"},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running"},
        }
    )
    assert (await api.get("/api/v1/pods", params={"fieldSelector": "status.phase=Running,spec.nodeName=n1"})).json()[
        "items"
    ][0]["metadata"]["name"] == "p"
    refused = await api.get("/api/v1/pods", params={"watch": "true", "fieldSelector": "spec.volumes=x"})
    assert refused.status_code == 400


# --------------------------------------------------------------------------- deletion


async def test_finalizers_hold_deletion_and_owners_take_dependents_along(api: httpx.AsyncClient, kube: Kube) -> None:
    owner = await create(api, widget("owner") | {"metadata": {"name": "owner", "finalizers": ["x/y"]}})
    ref = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner", "uid": owner["metadata"]["uid"]}
    await create(api, widget("child") | {"metadata": {"name": "child", "ownerReferences": [ref]}})
    deleting = (await api.delete(f"{WIDGETS}/owner")).json()
    assert deleting["metadata"]["deletionTimestamp"]
    assert kube.get("widgets", "ns1", "owner") is not None
    assert kube.get("widgets", "ns1", "child") is not None
    await api.patch(f"{WIDGETS}/owner", headers=MERGE, json={"metadata": {"finalizers": None}})
    assert kube.get("widgets", "ns1", "owner") is None
    assert kube.get("widgets", "ns1", "child") is None


# --------------------------------------------------------------------------- events, discovery, fixture helpers


async def test_events_are_stored_and_found_by_object(api: httpx.AsyncClient, kube: Kube) -> None:
    core = {
        "metadata": {"generateName": "aim-"},
        "involvedObject": {"kind": "Widget", "name": "w1"},
        "reason": "Created",
        "message": "made it",
        "type": "Normal",
    }
    response = await api.post("/api/v1/namespaces/ns1/events", json=core)
    assert response.json()["metadata"]["name"].startswith("aim-")
    new = {"metadata": {"name": "e2"}, "regarding": {"kind": "Widget", "name": "w1"}, "reason": "Ready", "note": "."}
    await api.post("/apis/events.k8s.io/v1/namespaces/ns1/events", json=new)
    assert [e["reason"] for e in kube.events_for("w1")] == ["Created", "Ready"]
    assert kube.events_for("w2") == []


async def test_discovery_serves_declared_crds_and_builtins(api: httpx.AsyncClient, kube: Kube) -> None:
    found = {r["name"]: r for r in (await api.get("/apis/example.com/v1")).json()["resources"]}
    assert found["widgets"]["kind"] == "Widget" and found["widgets"]["namespaced"] is True
    assert "widgets/status" in found and "gadgets/status" not in found
    aim = {r["name"] for r in (await api.get("/apis/aim.eai.amd.com/v1alpha1")).json()["resources"]}
    assert {"aimservices", "aimservices/status", "aimclustermodels"} <= aim
    core = {r["name"] for r in (await api.get("/api/v1")).json()["resources"]}
    assert {"namespaces", "events", "pods", "pods/log", "nodes", "secrets"} <= core
    assert kube.path("aimservices", "ns", "s", "status") == (
        "/apis/aim.eai.amd.com/v1alpha1/namespaces/ns/aimservices/s/status"
    )
    assert kube.path("nodes", "ignored", "n1") == "/api/v1/nodes/n1"


async def test_namespaces_and_pod_logs_over_http(api: httpx.AsyncClient, kube: Kube) -> None:
    assert (await api.post("/api/v1/namespaces", json={"metadata": {"name": "team"}})).status_code == 201
    assert (await api.get("/api/v1/namespaces/team")).json()["metadata"]["name"] == "team"
    assert [n["metadata"]["name"] for n in (await api.get("/api/v1/namespaces")).json()["items"]] == ["team"]
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "team"},
            "status": {"phase": "Running"},
        }
    )
    kube.set_log("team", "p", "hello\n")
    assert (await api.get("/api/v1/namespaces/team/pods/p/log")).text == "hello\n"


async def test_seeding_reading_and_counting(api: httpx.AsyncClient, kube: Kube) -> None:
    seeded = kube.put_object(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "ns1"},
            "status": {"phase": "Seeded"},
        }
    )
    assert seeded["metadata"]["uid"] and seeded["metadata"]["resourceVersion"]
    assert kube.get("Widget", "ns1", "w1")["status"] == {"phase": "Seeded"}  # status kept when seeding
    assert kube.get("widgets", "ns1", "missing") is None
    since = kube.mark()
    await api.get(f"{WIDGETS}/w1")
    await api.get(WIDGETS)
    await apply(api, widget(size=1))
    await api.patch(f"{WIDGETS}/w1/status", headers=MERGE, json={"status": {"phase": "Ready"}})
    assert (kube.reads(since), kube.writes(since)) == (2, 2)
    assert kube.count("apply", since=since) == 1
    assert kube.count("patch", resource="widgets", since=since) == 1
    assert kube.count("get", resource="example.com/v1/widgets", since=since) == 1
    last = kube.calls[-1]
    assert (last.verb, last.resource, last.namespace, last.name, last.subresource) == (
        "patch",
        "example.com/v1/widgets",
        "ns1",
        "w1",
        "status",
    )


async def test_kubeconfig_points_the_kubernetes_client_at_the_emulator(kube: Kube, kubeconfig: Path) -> None:
    import kubernetes  # a slow import; only this test needs it

    kube.put_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns1"}})

    def list_pods() -> list[str]:
        client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        with client:
            return [p.metadata.name for p in kubernetes.client.CoreV1Api(client).list_namespaced_pod("ns1").items]

    assert await asyncio.to_thread(list_pods) == ["p"]


# --------------------------------------------------------------------------- kopf against the emulator


@pytest.mark.parametrize("scope", [["-A"], ["--namespace=ns*"]], ids=["cluster-wide", "namespace-glob"])
async def test_kopf_sees_a_new_object_and_patches_its_status(
    api: httpx.AsyncClient, kube: Kube, scope: list[str]
) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns1"}})
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=kube.url, insecure=True)

    @kopf.on.create("example.com", "v1", "widgets", registry=registry)
    def created(body: kopf.Body, spec: Any, patch: kopf.Patch, **_: Any) -> None:
        patch.status["seen"] = spec["size"]
        kopf.info(body, reason="Seen", message=f"size {spec['size']}")

    runner = KopfRunner(["run", "--standalone", "--verbose", *scope], registry=registry, timeout=10)
    await create(api, widget("listed", size=1))  # found by kopf's initial list
    # The emulator serves from this event loop: enter and leave the runner from a worker thread.
    await asyncio.to_thread(runner.__enter__)
    try:
        async with asyncio.timeout(10):
            while not kube.count("watch", resource="example.com/v1/widgets"):
                await asyncio.sleep(0.02)
            await create(api, widget("watched", size=7))  # delivered by kopf's watch
            while any(
                "status" not in kube.get("widgets", "ns1", name) or not kube.events_for(name)
                for name in ("listed", "watched")
            ):
                await asyncio.sleep(0.02)
    finally:
        await asyncio.to_thread(runner.__exit__, None, None, None)
    watched = kube.get("widgets", "ns1", "watched")
    assert watched["status"] == {"seen": 7}
    assert watched["spec"] == {"size": 7}
    assert kube.get("widgets", "ns1", "listed")["status"] == {"seen": 1}
    assert kube.count("create", resource="events", agent="kopf") == 2
    assert kube.count("create", resource="widgets", agent="kopf") == 0
    status_patches = [c.name for c in kube.calls if c.verb == "patch" and c.subresource == "status"]
    assert sorted(status_patches) == ["listed", "watched"]
    assert [(e["reason"], e["message"]) for e in kube.events_for("watched", "ns1")] == [("Seen", "size 7")]


async def test_a_list_with_a_limit_comes_in_pages_that_continue(api: httpx.AsyncClient) -> None:
    for name in ("w3", "w1", "w5", "w2", "w4"):
        await create(api, widget(name))
    first = (await api.get(WIDGETS, params={"limit": "2"})).json()
    assert [w["metadata"]["name"] for w in first["items"]] == ["w1", "w2"]
    assert first["metadata"]["remainingItemCount"] == 3
    version = first["metadata"]["resourceVersion"]
    await create(api, widget("w0"))  # before the token: not in a later page; w6 after it is
    await create(api, widget("w6"))
    names, token = [], first["metadata"]["continue"]
    while token:
        page = (await api.get(WIDGETS, params={"limit": "2", "continue": token})).json()
        assert page["metadata"]["resourceVersion"] == version
        names += [w["metadata"]["name"] for w in page["items"]]
        token = page["metadata"].get("continue")
    assert names == ["w3", "w4", "w5", "w6"]
    whole = (await api.get(WIDGETS)).json()
    assert "continue" not in whole["metadata"] and len(whole["items"]) == 7
    assert (await api.get(WIDGETS, params={"continue": "not-a-token"})).status_code == 400


async def test_test_reactions_answer_the_requests_their_filters_and_slices_select(
    api: httpx.AsyncClient, kube: Kube
) -> None:
    # The emulator decides which reaction sees a request by the reaction's filters (not by scanning
    # every earlier request, as kmock does); slices still count the requests that came before.
    await create(api, widget("w1"))
    kube["patch"] << 500
    failing = await api.patch(f"{WIDGETS}/w1", headers=MERGE, json={"spec": {"size": 2}})
    assert failing.status_code == 500
    assert kube.get("widgets", "ns1", "w1")["spec"] == {}  # the reaction answered: no write
    assert (await api.get(f"{WIDGETS}/w1")).status_code == 200  # a GET passes that filter by

    calls = 0

    def counted(request: Any) -> bool:
        nonlocal calls
        calls += 1
        return request.method == "GET" and request.url.path.endswith("/w2")

    await create(api, widget("w2"))
    kube[counted][:1] << 503  # the first GET of w2 ever (slices count from the first request)
    assert (await api.get(f"{WIDGETS}/w2")).status_code == 503
    assert (await api.get(f"{WIDGETS}/w2")).status_code == 200  # then the emulator again
    assert (await api.get(f"{WIDGETS}/w1")).status_code == 200
    assert calls > 0
