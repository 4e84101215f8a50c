"""The AIMBenchmarkSweep controller: indexes, watches, observe (the plan is :mod:`aim_core.benchmarksweep.plan`).

What re-triggers a sweep, always through an index: a template of its model changing (a
namespaced one in its namespace, a cluster one anywhere), and the AIMServices and
AIMBenchmarks it owns (owner reference).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Any, ClassVar

from aim_core.benchmarksweep.plan import Observed, plan_sweep
from aim_core.benchmarksweep.view import SweepView
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.obj import Obj, controller_uid, meta_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import BENCHMARK_SWEEPS, BENCHMARKS, CLUSTER_TEMPLATES, SERVICES, TEMPLATES
from aim_core.reconcile.writes import rfc3339
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.store import ObjectKey, Store
from aim_core.template import TemplateView

BY_MODEL = "sweep:by-model"  # sweeps by (namespace, spec.model) and (None, spec.model)
TEMPLATE_BY_MODEL = "sweep:template-by-model"  # templates by (namespace or None, spec.modelName)
CHILD_BY_OWNER = "sweep:child-by-owner"  # services and runs by (namespace, owning sweep)


def _ns(obj: Obj) -> str | None:
    return meta_of(obj).get("namespace") or None


def _owners(obj: Obj) -> list[tuple[str | None, str]]:
    return [
        (_ns(obj), ref.get("name", ""))
        for ref in meta_of(obj).get("ownerReferences") or ()
        if ref.get("kind") == BENCHMARK_SWEEPS.kind
    ]


class BenchmarkSweepController(Controller):
    name: ClassVar[str] = "benchmark-sweep"
    resource: ClassVar[ResourceRef] = BENCHMARK_SWEEPS
    root_status: ClassVar[bool] = False  # the plan writes status.status: Pending, Running, Succeeded, Failed

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(BENCHMARK_SWEEPS, BY_MODEL, _sweep_keys)
        for ref in (TEMPLATES, CLUSTER_TEMPLATES):
            store.add_index(ref, TEMPLATE_BY_MODEL, lambda t: [(_ns(t), TemplateView.of(t).model_name)])
        for ref in (SERVICES, BENCHMARKS):
            store.add_index(ref, CHILD_BY_OWNER, _owners)

    def watches(self) -> list[Watch]:
        def by_template(t: Obj) -> Iterable[ObjectKey]:
            return self._store.keys_by_index(BENCHMARK_SWEEPS, BY_MODEL, (_ns(t), TemplateView.of(t).model_name))

        def by_owner(child: Obj) -> Iterable[ObjectKey]:
            return set(_owners(child))

        return [
            Watch(TEMPLATES, by_template),
            Watch(CLUSTER_TEMPLATES, by_template),
            Watch(SERVICES, by_owner),
            Watch(BENCHMARKS, by_owner),
        ]

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, sweep = ctx.store, SweepView.of(obj)
        ns, model, named = sweep.namespace or None, sweep.model, set(sweep.templates)

        def templates(ref: ResourceRef, where: str | None) -> dict[str, Obj]:
            found = {meta_of(t)["name"]: t for t in store.by_index(ref, TEMPLATE_BY_MODEL, (where, model))}
            for name in named - set(found):  # a named template of another model is reported, not ignored
                other = store.get(ref, where, name)
                if other is not None:
                    found[name] = other
            return found

        key = (ns, sweep.name)

        def ours(ref: ResourceRef) -> dict[str, Obj]:
            # by uid: an object that only names the sweep (a user's, an earlier sweep's of the same name)
            # is not its child, and its status is never read as the child's
            found = store.by_index(ref, CHILD_BY_OWNER, key)
            return {meta_of(c)["name"]: c for c in found if not sweep.uid or controller_uid(c) == sweep.uid}

        services, benchmarks = ours(SERVICES), ours(BENCHMARKS)
        taken: dict[str, str] = {}  # child name -> who holds it (the engine reports it as NameConflict)
        for entry in sweep.entries:
            for ref, name, mine in (
                (SERVICES, entry.get("service"), services),
                (BENCHMARKS, entry.get("benchmark"), benchmarks),
            ):
                other = store.get(ref, ns, str(name)) if name and name not in mine else None
                if other is not None:
                    taken[f"{ref.kind} {name}"] = _holder(other)
        return Observed(
            namespaced=templates(TEMPLATES, ns),
            cluster=templates(CLUSTER_TEMPLATES, None),
            services=services,
            benchmarks=benchmarks,
            now=rfc3339(datetime.datetime.now(datetime.UTC)),
            taken=taken,
        )

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_sweep(SweepView.of(obj), observed)


def _holder(obj: Obj) -> str:
    uid = controller_uid(obj)
    for ref in meta_of(obj).get("ownerReferences") or ():
        if uid and ref.get("uid") == uid:
            return f"{ref.get('kind')} {ref.get('name')} (uid {uid})"
    return "no owner (not created for this sweep)"


def _sweep_keys(obj: Obj) -> list[tuple[str | None, str]]:
    """A sweep by (its namespace, its model) and by (None, its model): cluster templates reach every sweep."""
    sweep = SweepView.of(obj)
    return [(sweep.namespace or None, sweep.model), (None, sweep.model)]


__all__ = ["BenchmarkSweepController"]
