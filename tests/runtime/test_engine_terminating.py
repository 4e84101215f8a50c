"""A namespace seen going while a reconcile runs gets no write from the rest of that reconcile (issue 18).

On a real API server, deleting a namespace while its objects reconcile drew a server-side apply
(a create: refused 403) after the operator's store had seen the namespace Terminating: the check
came only at the start of the reconcile.
"""

from __future__ import annotations

from typing import Any, ClassVar

from aim_core.reconcile.health import Health, State
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import NAMESPACES
from aim_core.runtime.controller import Context, Controller
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from tests.runtime.test_engine_children import CHILDREN, OWNER, PARENTS, ServerKube, parent


class Recording(ServerKube):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def apply(self, resource, body, *, field_manager):
        self.writes.append(f"apply {body['metadata']['name']}")
        return await super().apply(resource, body, field_manager=field_manager)

    async def patch(self, resource, namespace, name, body, subresource=None):
        self.writes.append(f"patch {name} {subresource or ''}".strip())
        return {}

    async def create(self, resource, body):
        self.writes.append(f"create {resource.kind}")
        return await super().create(resource, body)


def namespace(phase: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "team", "uid": "ns1", "resourceVersion": "5"}
    if phase == "Terminating":
        meta["deletionTimestamp"] = "2026-11-27T20:00:00Z"
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta, "status": {"phase": phase}}


class Slow(Controller):
    """Its observation takes a while, and the namespace's deletion arrives by watch meanwhile."""

    name: ClassVar[str] = "slow"
    resource = PARENTS

    def __init__(self, store: Store, goes_during: str) -> None:
        self.store = store
        self.goes_during = goes_during

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Any:
        if self.goes_during == "observe":
            self.store.upsert(NAMESPACES, namespace("Terminating"))
        return None

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        plan = Plan()
        for n in (1, 2):
            plan.want(
                CHILDREN,
                {"metadata": {"name": f"child-{n}", "namespace": "team", "labels": {OWNER: obj["metadata"]["name"]}}},
            )
        plan.component("Child", Health(State.PROGRESSING, "Creating", "the children are being made"))
        return plan


def engine_with(goes_during: str) -> Engine:
    store = Store()
    engine = Engine(
        Context(store=store, kube=Recording(), plugins=None, operator_namespace="aim-system"),
        [Slow(store, goes_during)],
    )
    store.upsert(NAMESPACES, namespace("Active"))
    store.upsert(PARENTS, parent("a"))
    return engine


async def test_a_namespace_seen_going_during_the_observation_gets_no_apply_status_or_event():
    engine = engine_with("observe")
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    assert engine.kube.writes == []


async def test_a_namespace_seen_going_between_two_applies_gets_neither_the_second_nor_the_status():
    engine = engine_with("")
    kube = engine.kube
    first_apply = kube.apply

    async def apply_then_the_namespace_goes(resource, body, *, field_manager):
        result = await first_apply(resource, body, field_manager=field_manager)
        engine.store.upsert(NAMESPACES, namespace("Terminating"))
        return result

    kube.apply = apply_then_the_namespace_goes
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    assert kube.writes == ["apply child-1"]


async def test_an_active_namespace_gets_the_applies_the_status_and_the_events():
    engine = engine_with("")
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    assert engine.kube.writes[:2] == ["apply child-1", "apply child-2"]
    assert "patch a status" in engine.kube.writes


async def test_a_vanished_child_is_not_recreated_while_the_server_says_its_namespace_is_going():
    # The deletion of the namespace's content arrived before the namespace's own Terminating (streams of
    # different kinds come in no common order): the children are gone from the store, the store's
    # namespace still Active. Re-creating them would be a create the server refuses.
    engine = engine_with("")
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    for n in (1, 2):
        engine.store.delete(CHILDREN, "team", f"child-{n}")
    kube = engine.kube
    kube.writes.clear()
    asked: list[str] = []

    async def get(resource, namespace_, name):
        asked.append(f"{resource.kind} {name}")
        return namespace("Terminating")

    kube.get = get
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    assert kube.writes == []
    assert asked == ["Namespace team"]  # once: remembered as a refused create would be
    assert engine.terminating("team")


async def test_a_vanished_child_is_recreated_in_a_namespace_that_stays():
    engine = engine_with("")
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    engine.store.delete(CHILDREN, "team", "child-1")
    kube = engine.kube
    kube.writes.clear()

    async def get(resource, namespace_, name):
        return namespace("Active")

    kube.get = get
    await engine.reconcile(engine.controllers["slow"], "team", "a")
    assert kube.writes[:1] == ["apply child-1"]
