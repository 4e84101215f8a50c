"""The finalizer the engine adds does not reconcile the object a second time; any other change does."""

from __future__ import annotations

import itertools
from typing import Any, ClassVar

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.plan import Plan
from aim_core.runtime.controller import Context, Controller
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store

THINGS = ResourceRef("example.com/v1", "Thing", "things")
FINALIZER = "example.com/cleanup"


class ThingController(Controller):
    name: ClassVar[str] = "thing"
    resource = THINGS
    finalizer = FINALIZER

    def __init__(self) -> None:
        self.planned: list[dict[str, Any]] = []

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        self.planned.append(obj)
        plan = Plan()
        plan.component("Thing", Health(State.READY, "Fine", "nothing to do"))
        return plan


class ServerKube:
    """Answers a merge patch as an API server would: the patched object with a new resourceVersion."""

    def __init__(self, store: Store, edit: dict[str, Any] | None = None) -> None:
        self.store, self.edit = store, edit or {}
        self.versions = itertools.count(100)
        self.patches: list[dict[str, Any]] = []

    async def patch(self, resource, namespace, name, body, subresource=None) -> dict[str, Any]:
        self.patches.append(body)
        current = self.store.get(resource, namespace, name)
        meta = {k: v for k, v in current["metadata"].items() if k != "resourceVersion"}
        meta |= {k: v for k, v in body.get("metadata", {}).items() if k != "resourceVersion"}
        meta |= self.edit.get("metadata", {})  # someone else's edit, in the same version
        stored = {**current, **{k: v for k, v in body.items() if k != "metadata"}, "metadata": meta}
        stored["metadata"]["resourceVersion"] = str(next(self.versions))
        return stored

    async def create(self, resource, body) -> dict[str, Any]:
        return body


def thing(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": name, "namespace": "team", "uid": "t1", "resourceVersion": "1", "generation": 1},
        "spec": {"size": 1},
    }


def make_engine(edit: dict[str, Any] | None = None) -> Engine:
    store = Store()
    return Engine(
        Context(store=store, kube=ServerKube(store, edit), plugins=None, operator_namespace="aim-system"),
        [ThingController()],
    )


def queued(engine: Engine) -> set:
    return set(engine.queue._queued) | set(engine.queue._dirty)


async def test_the_finalizer_patch_of_a_first_reconcile_does_not_queue_it_again():
    name = "a"
    engine = make_engine()
    engine.store.upsert(THINGS, thing(name))
    engine.queue._queued.clear()
    await engine.reconcile(engine.controllers["thing"], "team", name)

    stored = engine.store.get(THINGS, "team", name)
    assert stored["metadata"]["finalizers"] == [FINALIZER]  # stored as the server answered
    assert ("thing", "team", name) not in queued(engine)
    assert len(engine.controllers["thing"].planned) == 1

    # a later change of the object (its spec, by watch) does trigger
    engine.store.upsert(
        THINGS, {**stored, "metadata": {**stored["metadata"], "resourceVersion": "999"}, "spec": {"size": 2}}
    )
    assert ("thing", "team", name) in queued(engine)


async def test_a_finalizer_patch_answer_with_more_than_the_finalizer_changed_queues_it_again():
    engine = make_engine(edit={"metadata": {"labels": {"team": "blue"}}})
    engine.store.upsert(THINGS, thing("b"))
    engine.queue._queued.clear()
    await engine.reconcile(engine.controllers["thing"], "team", "b")
    assert engine.store.get(THINGS, "team", "b")["metadata"]["labels"] == {"team": "blue"}
    assert ("thing", "team", "b") in queued(engine)  # its plan may read the new labels differently
