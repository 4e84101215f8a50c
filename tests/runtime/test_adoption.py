"""The engine never applies over, nor deletes, an object another object (or nobody) controls."""

from __future__ import annotations

import asyncio
from typing import Any

from aim_core.reconcile.plan import Deletion, Desired
from aim_core.reconcile.resources import JOBS
from aim_core.runtime import adoption

PARENT = {
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "kind": "AIMBenchmarkSweep",
    "metadata": {"name": "sweep", "namespace": "ns", "uid": "uid-now"},
}


def job(owner_uid: str | None, *, owner_name: str = "sweep", kind: str = "AIMBenchmarkSweep") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "sweep-1", "namespace": "ns", "uid": "job-uid"}
    if owner_uid is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "x/v1", "kind": kind, "name": owner_name, "uid": owner_uid, "controller": True}
        ]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}


DESIRED = Desired(JOBS, {"metadata": {"name": "sweep-1", "namespace": "ns"}})


def test_nothing_there_or_ours_may_be_applied():
    assert adoption.conflict(DESIRED, PARENT, None) is None
    assert adoption.conflict(DESIRED, PARENT, job("uid-now")) is None


def test_a_users_object_of_that_name_is_a_conflict_that_says_what_to_do():
    why = adoption.conflict(DESIRED, PARENT, job(None))
    assert why is not None
    assert "Job ns/sweep-1 already exists" in why and "does not take it over" in why
    assert "Rename or delete that Job" in why


def test_another_owners_object_is_a_conflict_naming_that_owner():
    why = adoption.conflict(DESIRED, PARENT, job("other", owner_name="their-sweep"))
    assert why is not None and "controlled by AIMBenchmarkSweep their-sweep" in why


def test_an_earlier_parent_of_the_same_name_is_waited_out():
    why = adoption.conflict(DESIRED, PARENT, job("uid-before"))
    assert why is not None and "earlier AIMBenchmarkSweep of this name" in why and "garbage-collected" in why


def test_unowned_children_and_parents_without_uid_are_not_guarded():
    shared = Desired(JOBS, DESIRED.obj, owned=False)
    assert adoption.conflict(shared, PARENT, job(None)) is None
    assert adoption.conflict(DESIRED, {**PARENT, "metadata": {"name": "sweep"}}, job(None)) is None


def test_deletion_only_of_what_is_ours_or_nobodys():
    gone = Deletion(JOBS, "ns", "sweep-1")
    assert adoption.may_delete(job("uid-now"), PARENT, gone)
    assert adoption.may_delete(job(None), PARENT, gone)
    assert not adoption.may_delete(job("other"), PARENT, gone)


class FakeKube:
    def __init__(self, found: dict[str, Any] | None) -> None:
        self.found, self.gets = found, 0

    async def get(self, ref: Any, namespace: str | None, name: str) -> dict[str, Any] | None:
        self.gets += 1
        return self.found


def test_a_selectively_watched_kind_is_looked_up_before_the_first_apply():
    kube = FakeKube(job(None))
    live, issue = asyncio.run(adoption.look(kube, DESIRED, PARENT, None, selective=True))
    assert kube.gets == 1 and live is not None
    assert issue is not None and issue.reason == "NameConflict" and issue.category.value == "InvalidSpec"


def test_a_wholly_watched_kind_costs_no_request():
    kube = FakeKube(job(None))
    live, issue = asyncio.run(adoption.look(kube, DESIRED, PARENT, None, selective=False))
    assert kube.gets == 0 and live is None and issue is None


def test_a_conflict_is_looked_at_again_soon():
    from aim_core.reconcile.health import Category
    from aim_core.reconcile.plan import Issue

    conflict = [Issue(Category.INVALID_SPEC, "NameConflict", "x")]
    assert adoption.requeue(None, conflict) == adoption.CONFLICT_RECHECK
    assert adoption.requeue(5.0, conflict) == 5.0
    assert adoption.requeue(None, []) is None
