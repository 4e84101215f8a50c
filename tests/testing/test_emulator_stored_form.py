"""The emulator stores objects in the form a real API server does (shared/notes/real-apiserver.md).

Empty metadata maps and lists are not stored; custom resources are pruned and
defaulted by their structural schema; a write that changes nothing stored gets
no new resourceVersion and no watch event. Over real HTTP, like the other
emulator tests.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from aim_testing.emulator import declare_crd
from aim_testing.fixtures import Kube
from tests.testing.test_emulator import APPLY, MERGE, read_events

THINGS = "/apis/example.com/v1/namespaces/ns1/things"
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "mode": {"type": "string", "default": "fast"},
                "limits": {
                    "type": "object",
                    "default": {},
                    "properties": {"cpu": {"type": "string", "default": "1"}, "memory": {"type": "string"}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "ports": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}},
                    },
                },
                "note": {"type": "string", "nullable": True},
                "empty": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}


@pytest.fixture(autouse=True)
def _things(kube: Kube) -> None:
    declare_crd(
        kube.emulator,
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "subresources": {"status": {}},
                        "schema": {"openAPIV3Schema": SCHEMA},
                    }
                ],
            },
        },
    )


def thing(name: str = "t1", meta: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": name, **(meta or {})}, "spec": spec}


async def apply(api: httpx.AsyncClient, body: dict[str, Any]) -> httpx.Response:
    return await api.patch(
        f"{THINGS}/{body['metadata']['name']}",
        headers=APPLY,
        params={"fieldManager": "m", "force": "true"},
        content=json.dumps(body),
    )


async def test_empty_metadata_maps_and_lists_are_not_stored(api: httpx.AsyncClient, kube: Kube) -> None:
    empty = {"labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []}
    created = (await api.post(THINGS, json=thing("created", meta=empty, size=1))).json()
    applied = (await apply(api, thing("applied", meta=empty, size=1))).json()
    for obj in (created, applied, kube.get("things", "ns1", "created"), kube.get("things", "ns1", "applied")):
        assert not set(empty) & set(obj["metadata"]), obj["metadata"]
    patched = (
        await api.patch(
            f"{THINGS}/created", headers=MERGE, json={"metadata": {"labels": {"a": "b"}, "annotations": {}}}
        )
    ).json()
    assert patched["metadata"]["labels"] == {"a": "b"} and "annotations" not in patched["metadata"]
    unlabelled = (
        await api.patch(f"{THINGS}/created", headers=MERGE, json={"metadata": {"labels": {"a": None}}})
    ).json()
    assert "labels" not in unlabelled["metadata"]
    # Seeding helpers store the server's form too.
    seeded = kube.put_object(thing("seeded", meta={"namespace": "ns1", "annotations": {}}))
    assert "annotations" not in seeded["metadata"]


async def test_applying_empty_annotations_again_is_a_no_op_with_no_watch_event(api: httpx.AsyncClient) -> None:
    first = (await apply(api, thing(meta={"annotations": {}}, size=1))).json()
    rv = first["metadata"]["resourceVersion"]
    async with api.stream("GET", THINGS, params={"watch": "true", "resourceVersion": rv}) as response:
        for _ in range(3):
            again = (await apply(api, thing(meta={"annotations": {}}, size=1))).json()
            assert again["metadata"]["resourceVersion"] == rv
            assert again["metadata"]["generation"] == 1
        merged = (await api.patch(f"{THINGS}/t1", headers=MERGE, json={"spec": {"size": 1}})).json()
        assert merged["metadata"]["resourceVersion"] == rv
        changed = (await api.patch(f"{THINGS}/t1", headers=MERGE, json={"spec": {"size": 2}})).json()
        events = await read_events(response, 1)
    assert [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in events] == [
        ("MODIFIED", changed["metadata"]["resourceVersion"])
    ]  # only the real change was streamed
    assert changed["metadata"]["generation"] == 2


async def test_unknown_fields_are_pruned_and_defaults_applied(api: httpx.AsyncClient, kube: Kube) -> None:
    body = thing(
        size=1,
        typo=True,
        free={"anything": {"goes": 1}},
        labels={"x": "y"},
        ports=[{"port": 80, "extra": 1}],
        note=None,
        empty={},
        limits={"memory": "1Gi", "bogus": 1},
    )
    body["status"] = {"phase": "Ignored"}
    body["unknownTopLevel"] = 1
    created = (await api.post(THINGS, json=body)).json()
    assert created["spec"] == {
        "size": 1,
        "mode": "fast",
        "free": {"anything": {"goes": 1}},
        "labels": {"x": "y"},
        "ports": [{"port": 80, "protocol": "TCP"}],
        "note": None,
        "empty": {},
        "limits": {"memory": "1Gi", "cpu": "1"},
    }
    assert "unknownTopLevel" not in created and "status" not in created
    assert kube.get("things", "ns1", "t1")["spec"] == created["spec"]
    # A default fills an absent parent too, with the defaults inside it.
    bare = (await api.post(THINGS, json=thing("t2"))).json()
    assert bare["spec"] == {"mode": "fast", "limits": {"cpu": "1"}}
    # Status writes are pruned by the status schema.
    status = await api.patch(f"{THINGS}/t1/status", headers=MERGE, json={"status": {"phase": "Ready", "typo": 1}})
    assert status.json()["status"] == {"phase": "Ready"}


async def test_applying_a_pruned_field_again_changes_nothing(api: httpx.AsyncClient) -> None:
    first = (await apply(api, thing(size=1, typo=True))).json()
    assert first["spec"] == {"size": 1, "mode": "fast", "limits": {"cpu": "1"}}
    assert "f:typo" not in json.dumps(first["metadata"]["managedFields"])
    again = (await apply(api, thing(size=1, typo=True))).json()
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_third_party_resources_follow_their_crd_files(api: httpx.AsyncClient) -> None:
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r", "annotations": {}},
        "spec": {"parentRefs": [{"name": "gw"}], "bogus": 1, "rules": [{"backendRefs": [{"name": "svc", "port": 80}]}]},
    }
    created = (await api.post("/apis/gateway.networking.k8s.io/v1/namespaces/ns1/httproutes", json=route)).json()
    assert "annotations" not in created["metadata"] and "bogus" not in created["spec"]
    assert created["spec"]["parentRefs"] == [{"name": "gw", "group": "gateway.networking.k8s.io", "kind": "Gateway"}]
    backend = created["spec"]["rules"][0]["backendRefs"][0]
    assert backend["kind"] == "Service" and backend["weight"] == 1
