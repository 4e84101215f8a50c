"""A child the plan anticipated does not reconcile its parent again when it is created; anything later does."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

import pytest

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.plan import Plan
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store

PARENTS = ResourceRef("example.com/v1", "Parent", "parents")
CHILDREN = ResourceRef("example.com/v1", "Child", "children")
OWNER = "example.com/parent"


def owner_of(child: dict[str, Any]) -> list[tuple[str | None, str]]:
    owner = (child["metadata"].get("labels") or {}).get(OWNER)
    return [(child["metadata"].get("namespace"), owner)] if owner else []


class ParentController(Controller):
    name: ClassVar[str] = "parent"
    resource = PARENTS
    anticipated = True

    def watches(self) -> list[Watch]:
        return [Watch(CHILDREN, owner_of)]

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        plan = Plan()
        meta = obj["metadata"]
        plan.want(
            CHILDREN,
            {"metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": {OWNER: meta["name"]}}},
            anticipated=self.anticipated,
        )
        plan.component("Child", Health(State.READY, "Created", "the child exists"))
        return plan


class Onlooker(Controller):
    """Another controller whose objects depend on the same children (by the same label)."""

    name: ClassVar[str] = "onlooker"
    resource = ResourceRef("example.com/v1", "Onlooker", "onlookers")
    writes_status = False

    def watches(self) -> list[Watch]:
        return [Watch(CHILDREN, owner_of)]

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        return Plan()


class ServerKube:
    """Answers writes as an API server would: the object as stored, with a new resourceVersion."""

    def __init__(self) -> None:
        self.versions = itertools.count(100)
        self.applied: list[str] = []

    def _stored(self, obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(next(self.versions)), "uid": "c1"}}

    async def apply(self, resource: ResourceRef, body: dict[str, Any], *, field_manager: str) -> dict[str, Any]:
        self.applied.append(body["metadata"]["name"])
        return self._stored(body)

    async def patch(self, resource, namespace, name, body, subresource=None) -> dict[str, Any]:
        return {}

    async def create(self, resource, body) -> dict[str, Any]:
        return self._stored(body)


def parent(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Parent",
        "metadata": {"name": name, "namespace": "team", "uid": "p1", "resourceVersion": "1", "generation": 1},
    }


@pytest.fixture
def engine() -> Engine:
    return Engine(
        Context(store=Store(), kube=ServerKube(), plugins=None, operator_namespace="aim-system"),
        [ParentController(), Onlooker()],
    )


def queued(engine: Engine) -> set:
    return set(engine.queue._queued) | set(engine.queue._dirty)


async def test_an_anticipated_child_created_by_a_reconcile_does_not_queue_its_parent_again(engine):
    engine.store.upsert(PARENTS, parent("a"))
    engine.queue._queued.clear()
    await engine.reconcile(engine.controllers["parent"], "team", "a")

    assert engine.kube.applied == ["a"]
    child = engine.store.get(CHILDREN, "team", "a")
    assert child is not None  # stored as the server answered
    assert ("parent", "team", "a") not in queued(engine)
    assert ("onlooker", "team", "a") in queued(engine)  # others depending on the child still hear of it

    # The watch's echo of the same version changes nothing; a later version (e.g. its status) does trigger.
    engine.queue._queued.clear()
    engine.store.upsert(CHILDREN, dict(child))
    assert ("parent", "team", "a") not in queued(engine)
    engine.store.upsert(
        CHILDREN, {**child, "metadata": {**child["metadata"], "resourceVersion": "999"}, "status": {"ready": True}}
    )
    assert ("parent", "team", "a") in queued(engine)


async def test_a_child_the_plan_did_not_anticipate_reconciles_its_parent_again(engine):
    engine.controllers["parent"].anticipated = False
    engine.store.upsert(PARENTS, parent("b"))
    engine.queue._queued.clear()
    await engine.reconcile(engine.controllers["parent"], "team", "b")
    assert ("parent", "team", "b") in queued(engine)  # its plan may read the new child differently


async def test_an_anticipated_child_that_already_existed_reconciles_its_parent_when_it_changes(engine):
    engine.store.upsert(PARENTS, parent("c"))
    engine.store.upsert(
        CHILDREN,
        {
            "apiVersion": "example.com/v1",
            "kind": "Child",
            "metadata": {
                "name": "c",
                "namespace": "team",
                "resourceVersion": "5",
                "labels": {OWNER: "c", "stale": "yes"},
                "ownerReferences": [
                    {"apiVersion": "example.com/v1", "kind": "Parent", "name": "c", "uid": "p1", "controller": True}
                ],
            },
        },
    )
    engine.queue._queued.clear()
    await engine.reconcile(engine.controllers["parent"], "team", "c")
    assert engine.kube.applied == ["c"]  # the update of an existing child
    assert ("parent", "team", "c") in queued(engine)
