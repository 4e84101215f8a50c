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
from aim_core.reconcile.obj import Obj, meta_of
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
        return Observed(
            namespaced=templates(TEMPLATES, ns),
            cluster=templates(CLUSTER_TEMPLATES, None),
            services={meta_of(s)["name"]: s for s in store.by_index(SERVICES, CHILD_BY_OWNER, key)},
            benchmarks={meta_of(b)["name"]: b for b in store.by_index(BENCHMARKS, CHILD_BY_OWNER, key)},
            now=rfc3339(datetime.datetime.now(datetime.UTC)),
        )

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_sweep(SweepView.of(obj), observed)


def _sweep_keys(obj: Obj) -> list[tuple[str | None, str]]:
    """A sweep by (its namespace, its model) and by (None, its model): cluster templates reach every sweep."""
    sweep = SweepView.of(obj)
    return [(sweep.namespace or None, sweep.model), (None, sweep.model)]


__all__ = ["BenchmarkSweepController"]
