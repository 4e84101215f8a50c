"""Controllers for AIMServiceTemplate and AIMClusterServiceTemplate: indexes, watches, observe.

Both scopes share one class; the scope decides the model kind a template
binds to (F31), where its discovery Job runs (namespace / operator namespace)
and which runtime configs apply. What re-triggers a template, always through
an index, never a scan:

* its model (by ``spec.modelName``), its runtime config (by name);
* its discovery Jobs (owner reference) and their pods (``job-name`` label);
* a discovery Job finishing anywhere, for templates waiting for a slot (F34);
* Nodes whose GPU labels or resources change, for templates that require a
  GPU (F42). The GPU inventory is rebuilt only when a Node changed, so a
  reconcile never lists Nodes.

Observe reads the store, the pod log of a finished discovery Job (the only
API read), and, for a template that wants a new Job, a slot from
:class:`DiscoverySlots`. The plan is :func:`aim_core.template.plan.plan_template`.
"""

from __future__ import annotations

import datetime
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, ClassVar

import attrs

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.errors import ApiError, describe
from aim_core.reconcile.gpu import GpuInventory, node_gpu_facts
from aim_core.reconcile.labels import (
    JOB_NAME_LABEL,
    K8S_COMPONENT_LABEL,
    ORIGIN_DERIVED,
    ORIGIN_LABEL,
)
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.redaction import redact
from aim_core.reconcile.resources import (
    BENCHMARKS,
    CLUSTER_MODELS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    JOBS,
    MODELS,
    NODES,
    PODS,
    RUNTIME_CONFIGS,
    TEMPLATE_CACHES,
    TEMPLATES,
)
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import config_name, resolve
from aim_core.template import benchmarks as measured
from aim_core.template import discovery as disc
from aim_core.template.hardware import advertised_counts, requires_gpu
from aim_core.template.observed import Observed
from aim_core.template.plan import decide, plan_template
from aim_core.template.scope import Scope
from aim_core.template.slots import ACTIVE_JOBS, DiscoverySlots
from aim_core.template.view import TemplateView

OUTPUT_LOG_LINES = 5000  # discovery prints one JSON document; keep all of it
FAILURE_LOG_LINES = 50
FAILURE_LOGS_KEPT = 1000  # failed discovery pods whose log tail is remembered (read once per pod, not per reconcile)

BY_MODEL = "tpl:by-model"
BY_CONFIG = "tpl:by-config"
NEEDS_GPU = "tpl:needs-gpu"
JOB_BY_OWNER = "tpl:job-by-owner"  # (namespace, owner kind, owner name)
POD_BY_JOB = "tpl:pod-by-job"
BENCH_BY_TEMPLATE = "tpl:bench-by-template"  # Succeeded AIMBenchmarks by (scope, namespace or None, template)


def _ns(obj: Obj) -> str | None:
    return meta_of(obj).get("namespace") or None


def _spec(obj: Obj) -> Obj:
    return spec_of(obj)


def _job_owners(job: Obj) -> list[tuple[str | None, str, str]]:
    return [
        (_ns(job), ref.get("kind", ""), ref.get("name", ""))
        for ref in meta_of(job).get("ownerReferences") or ()
        if ref.get("kind") in (TEMPLATES.kind, CLUSTER_TEMPLATES.kind)
    ]


def _derived(template: Obj) -> bool:
    return (meta_of(template).get("labels") or {}).get(ORIGIN_LABEL) == ORIGIN_DERIVED


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


@attrs.define
class _GpuCache:
    version: int = -1
    inventory: GpuInventory = attrs.field(factory=GpuInventory)
    counts: dict[str, int] = attrs.field(factory=dict)


class TemplateController(Controller):
    """AIMServiceTemplate (namespaced)."""

    name: ClassVar[str] = "service-template"
    resource: ClassVar[ResourceRef] = TEMPLATES
    scope: ClassVar[Scope] = Scope.NAMESPACE
    model_resource: ClassVar[ResourceRef] = MODELS

    def __init__(self, plugins: Any = None, slots: DiscoverySlots | None = None) -> None:
        from aim_core.plugin import manager as host

        self.vendors = tuple(host.providers(plugins, "aim_gpu_vendors").values()) if plugins is not None else ()
        self.slots = slots or DiscoverySlots()
        self._store: Store | None = None
        self._failure_logs: OrderedDict[str, str] = OrderedDict()  # pod uid -> its log tail
        self._gpus = _GpuCache()

    # ------------------------------------------------------------ indexes

    def setup(self, store: Store) -> None:
        self._store = store
        ref = self.resource
        store.add_index(
            ref,
            BY_MODEL,
            lambda t: (
                [(_ns(t), _spec(t).get("modelName"))] + ([(None, _spec(t).get("modelName"))] if _derived(t) else [])
            ),
        )
        store.add_index(ref, BY_CONFIG, lambda t: [(_ns(t), config_name(_spec(t))), (None, config_name(_spec(t)))])
        store.add_index(ref, NEEDS_GPU, lambda t: [True] if requires_gpu(_spec(t)) else [])
        store.add_index(JOBS, JOB_BY_OWNER, _job_owners)
        store.add_index(
            JOBS, ACTIVE_JOBS, lambda j: [True] if disc.is_discovery_job(j) and not disc.job_finished(j) else []
        )
        store.add_index(PODS, POD_BY_JOB, lambda p: [(_ns(p), (meta_of(p).get("labels") or {}).get(JOB_NAME_LABEL))])
        store.add_index(BENCHMARKS, BENCH_BY_TEMPLATE, measured.index_key)

    def _keys(self, index: str, value: Any) -> set[ObjectKey]:
        assert self._store is not None
        return self._store.keys_by_index(self.resource, index, value)

    # ------------------------------------------------------------- watches

    def watches(self) -> list[Watch]:
        def by_model(model: Obj) -> Iterable[ObjectKey]:
            return self._keys(BY_MODEL, (_ns(model), model["metadata"]["name"]))

        def by_config(cfg: Obj) -> Iterable[ObjectKey]:
            return self._keys(BY_CONFIG, (_ns(cfg), cfg["metadata"]["name"]))

        def by_job(job: Obj) -> Iterable[ObjectKey]:
            keys = {(self._key_ns(ns), name) for ns, kind, name in _job_owners(job) if kind == self.resource.kind}
            if disc.is_discovery_job(job) and disc.job_finished(job):
                keys |= self.slots.release_waiting(self.name)  # a slot may be free now
            return keys

        def by_pod(pod: Obj) -> Iterable[ObjectKey]:
            assert self._store is not None
            job = self._store.get(JOBS, _ns(pod), (meta_of(pod).get("labels") or {}).get(JOB_NAME_LABEL, ""))
            return by_job(job) if job is not None else []

        def by_node(_node: Obj) -> Iterable[ObjectKey]:
            return self._keys(NEEDS_GPU, True)

        def by_benchmark(run: Obj) -> Iterable[ObjectKey]:
            # A run names its template in status.target; deleted or new runs change the summary too.
            return {
                (self._key_ns(ns), name) for scope, ns, name in measured.index_key(run) if scope == self.scope.value
            }

        def gpu_changed(old: Obj | None, new: Obj) -> bool:
            return old is None or node_gpu_facts(old, self.vendors) != node_gpu_facts(new, self.vendors)

        watches = [
            Watch(self.model_resource, by_model),
            Watch(CLUSTER_RUNTIME_CONFIGS, by_config),
            Watch(JOBS, by_job),
            Watch(PODS, by_pod),
            Watch(NODES, by_node, changed=gpu_changed),
            Watch(BENCHMARKS, by_benchmark),
        ]
        if self.scope is Scope.NAMESPACE:
            watches.append(Watch(CLUSTER_MODELS, by_model))  # derived templates' fallback
            watches.append(Watch(RUNTIME_CONFIGS, by_config))
            watches.append(
                Watch(
                    TEMPLATE_CACHES,
                    lambda c: [
                        (_ns(c), r["name"])
                        for r in c["metadata"].get("ownerReferences") or ()
                        if r.get("kind") == TEMPLATES.kind and r.get("name") == c["metadata"]["name"]
                    ],
                )
            )
        return watches

    def selections(self) -> dict[Any, list[Selection]]:
        discovery = Selection(label_selector=f"{K8S_COMPONENT_LABEL}=discovery")  # discovery Jobs and their pods
        return {JOBS: [discovery], PODS: [discovery]}

    def store_filters(self) -> dict[Any, Any]:
        return {
            JOBS: disc.is_discovery_job,
            PODS: lambda p: (meta_of(p).get("labels") or {}).get(K8S_COMPONENT_LABEL) == "discovery",
        }

    def _key_ns(self, namespace: str | None) -> str | None:
        return namespace if self.scope is Scope.NAMESPACE else None

    # ------------------------------------------------------------- observe

    def gpus(self, store: Store) -> _GpuCache:
        version = store.version(NODES)
        if self._gpus.version != version:
            nodes = store.list(NODES)
            self._gpus = _GpuCache(
                version, GpuInventory.from_nodes(nodes, self.vendors), advertised_counts(nodes, self.vendors)
            )
        return self._gpus

    def _models(self, store: Store, template: Obj) -> tuple[Obj | None, bool, bool]:
        """(bound model, a model of the other scope exists, the bound model is cluster-scoped)."""
        name = _spec(template).get("modelName") or ""
        if self.scope is Scope.CLUSTER:
            return store.get(CLUSTER_MODELS, None, name), False, True
        model = store.get(MODELS, _ns(template), name)
        cluster = store.get(CLUSTER_MODELS, None, name)
        return model, cluster is not None, False

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, view = ctx.store, TemplateView.of(obj)
        ns = view.namespace or None
        job_ns = ns if self.scope is Scope.NAMESPACE else ctx.operator_namespace
        cfg = config_name(view.spec)
        config = resolve(
            cfg, store.get(RUNTIME_CONFIGS, ns, cfg) if ns else None, store.get(CLUSTER_RUNTIME_CONFIGS, None, cfg)
        )
        model, other, cluster_model = self._models(store, obj)
        gpus = self.gpus(store)
        uid = view.uid
        jobs = tuple(
            j
            for j in store.by_index(JOBS, JOB_BY_OWNER, (job_ns, self.resource.kind, view.name))
            if not uid or any(r.get("uid") == uid for r in j["metadata"].get("ownerReferences") or ())
        )
        cache = store.get(TEMPLATE_CACHES, ns, view.name) if self.scope is Scope.NAMESPACE else None
        runs = tuple(store.by_index(BENCHMARKS, BENCH_BY_TEMPLATE, (self.scope.value, ns, view.name)))
        observed = Observed(
            scope=self.scope,
            namespace=job_ns,
            config=config,
            model=model,
            inventory=gpus.inventory,
            now=_utcnow(),
            other_scope_model=other,
            counts=gpus.counts,
            jobs=jobs,
            cache=cache,
            model_is_cluster=cluster_model and self.scope is Scope.NAMESPACE,
            benchmarks=runs,
        )
        decision = decide(obj, observed, view)
        changes: dict[str, Any] = {}
        job = decision.job
        if job is not None:
            job_name = job["metadata"]["name"]
            pods = tuple(store.by_index(PODS, POD_BY_JOB, (job_ns, job_name)))
            changes["pods"] = pods
            counted = decision.breaker is not None and decision.breaker.counted(job)
            try:
                if disc.job_succeeded(job) and not decision.done and not counted:
                    done = [p for p in pods if status_of(p).get("phase") == "Succeeded"]
                    if done:
                        changes["output"] = redact(
                            await ctx.kube.read_log(
                                job_ns,
                                done[-1]["metadata"]["name"],
                                container=disc.CONTAINER,
                                tail_lines=OUTPUT_LOG_LINES,
                            )
                        )
                elif disc.job_finished(job):
                    # Also once the failure is counted: the Job's failure may be seen before its pod is, and the
                    # pod's log is what explains it (e.g. SourceNotFound). Each pod's log is read once.
                    changes["logs"] = await self._logs_of_failed(ctx, job_ns, pods)
            except ApiError as exc:
                if exc.status != 404:  # a pod already gone has nothing to say
                    changes["read_error"] = describe(exc)
            except Exception as exc:  # noqa: BLE001 - a failed read becomes a condition, not a crash
                changes["read_error"] = describe(exc)
        if decision.wants_job and decision.desired_job is not None:
            slot, detail = await self.slots.acquire(ctx, self.name, (ns, view.name), decision.desired_job)
            changes["slot"], changes["slot_detail"] = slot, detail
        return attrs.evolve(observed, **changes) if changes else observed

    async def _logs_of_failed(self, ctx: Context, namespace: str, pods: tuple[Obj, ...]) -> dict[str, str]:
        logs: dict[str, str] = {}
        for pod in pods:
            if status_of(pod).get("phase") != "Failed":
                continue
            meta = pod["metadata"]
            key = meta.get("uid") or f"{namespace}/{meta['name']}"
            if key not in self._failure_logs:
                # credentials a failing discovery printed never reach conditions or Events (issue 18)
                self._failure_logs[key] = redact(
                    await ctx.kube.read_log(
                        namespace, meta["name"], container=disc.CONTAINER, tail_lines=FAILURE_LOG_LINES
                    )
                )
                while len(self._failure_logs) > FAILURE_LOGS_KEPT:
                    self._failure_logs.popitem(last=False)
            logs[meta["name"]] = self._failure_logs[key]
        return logs

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_template(obj, observed)


class ClusterTemplateController(TemplateController):
    """AIMClusterServiceTemplate: binds to AIMClusterModels; discovery runs in the operator namespace."""

    name: ClassVar[str] = "cluster-service-template"
    resource: ClassVar[ResourceRef] = CLUSTER_TEMPLATES
    scope: ClassVar[Scope] = Scope.CLUSTER
    model_resource: ClassVar[ResourceRef] = CLUSTER_MODELS


__all__ = ["ClusterTemplateController", "DiscoverySlots", "TemplateController"]
