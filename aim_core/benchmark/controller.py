"""Controller for AIMBenchmark: wires the kind to the engine (indexes, watches, observe).

The decisions are pure functions in :mod:`aim_core.benchmark.plan`; the Job is built by
:mod:`aim_core.benchmark.job`. Observe reads from the store: the target AIMService and the
template it resolved (for ``status.target``), the service's runtime config (placement), the
run's Job and pods (selected by the ``aim.eai.amd.com/benchmark.name`` label; the plan keeps
only what belongs to the run's uid), the other runs of the same target (history limit), and
picks the tool plugin (``spec.tool``, else the only one installed, else ``genai-bench``).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from aim_core.api.benchmark import BENCHMARK_FINISHED
from aim_core.benchmark.job import BENCHMARK_LABEL, benchmark_label, job_name
from aim_core.benchmark.plan import Observed, Target, plan_benchmark
from aim_core.benchmark.view import BenchmarkView
from aim_core.model import ModelView
from aim_core.plugin.manager import PluginError, providers
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.naming import inference_service_name
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import (
    BENCHMARKS,
    CLUSTER_MODELS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    JOBS,
    MODELS,
    PODS,
    RUNTIME_CONFIGS,
    SERVICES,
    TEMPLATES,
)
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import config_name, resolve, resolve_placement
from aim_core.template import TemplateView

DEFAULT_TOOL = "genai-bench"
BY_SERVICE = "benchmark:by-service"  # runs by (namespace, spec.target.serviceName)
BY_TARGET = "benchmark:by-target"  # runs by (namespace, target key): the history limit's groups
BY_LABEL = "benchmark:by-label"  # Jobs and pods by (namespace, benchmark label); runs by the value theirs get


def _label_keys(obj: Obj) -> list[tuple[str | None, str]]:
    meta = meta_of(obj)
    value = (meta.get("labels") or {}).get(BENCHMARK_LABEL)
    return [(meta.get("namespace"), value)] if value else []


class BenchmarkController(Controller):
    name: ClassVar[str] = "benchmark"
    resource: ClassVar[ResourceRef] = BENCHMARKS
    root_status: ClassVar[bool] = False  # status.status is Pending/Running/Succeeded/Failed, set by the plan

    def __init__(self, plugins: Any = None) -> None:
        self._plugins = plugins

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(BENCHMARKS, BY_SERVICE, lambda o: [_ns_and(o, lambda r: r.service_name)])
        store.add_index(BENCHMARKS, BY_TARGET, lambda o: [_ns_and(o, lambda r: r.target_key)])
        store.add_index(BENCHMARKS, BY_LABEL, lambda o: [_ns_and(o, lambda r: benchmark_label(r.name))])
        store.add_index(JOBS, BY_LABEL, _label_keys)
        store.add_index(PODS, BY_LABEL, _label_keys)

    def watches(self) -> list[Watch]:
        return [
            Watch(SERVICES, self._runs_of_service),
            Watch(JOBS, self._run_of_child),
            Watch(PODS, self._run_of_child),
        ]

    def extra_resources(self) -> list[ResourceRef]:
        return [TEMPLATES, CLUSTER_TEMPLATES, MODELS, CLUSTER_MODELS, RUNTIME_CONFIGS, CLUSTER_RUNTIME_CONFIGS]

    def selections(self) -> dict[ResourceRef, list[Selection]]:
        ours = Selection(label_selector=BENCHMARK_LABEL)
        return {JOBS: [ours], PODS: [ours]}

    def store_filters(self) -> dict[ResourceRef, Any]:
        labelled = lambda o: BENCHMARK_LABEL in (meta_of(o).get("labels") or {})  # noqa: E731
        return {JOBS: labelled, PODS: labelled}

    def _runs_of_service(self, svc: Obj) -> list[ObjectKey]:
        meta = meta_of(svc)
        keys = self._store.keys_by_index(BENCHMARKS, BY_SERVICE, (meta.get("namespace"), meta["name"]))
        return sorted(keys, key=str)

    def _run_of_child(self, child: Obj) -> list[ObjectKey]:
        meta = meta_of(child)
        keys = {
            (meta.get("namespace"), r["name"])
            for r in meta.get("ownerReferences") or ()
            if r.get("kind") == "AIMBenchmark"
        }
        for key in _label_keys(child):
            keys |= set(self._store.keys_by_index(BENCHMARKS, BY_LABEL, key))
        return sorted(keys, key=str)

    # ------------------------------------------------------------- observe

    def _tool(self, ctx: Context, run: BenchmarkView) -> tuple[Any, str]:
        try:
            tools = providers(ctx.plugins or self._plugins, "aim_benchmark_tools")
        except PluginError as exc:
            return None, str(exc)
        wanted = run.tool or (next(iter(tools)) if len(tools) == 1 else DEFAULT_TOOL)
        if wanted in tools:
            return tools[wanted], ""
        listed = ", ".join(sorted(tools)) or "none"
        return None, f"benchmark tool {wanted!r} is not installed in the operator (available: {listed}); set spec.tool"

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, run = ctx.store, BenchmarkView.of(obj)
        ns = run.namespace or None
        same = store.by_index(BENCHMARKS, BY_TARGET, (ns, run.target_key))
        job = store.get(JOBS, ns, job_name(run.name))
        if run.state in BENCHMARK_FINISHED:  # the Job only, for its time to live
            return Observed(target=Target(ready=True, reason=""), tool=None, job=job, same_target=same)
        tool, why = self._tool(ctx, run)
        pods = store.by_index(PODS, BY_LABEL, (ns, benchmark_label(run.name)))
        return Observed(
            target=self._target(ctx, run),
            tool=tool,
            tool_error=why,
            job=job,
            pods=pods,
            same_target=same,
            now=datetime.datetime.now(datetime.UTC),
        )

    def _target(self, ctx: Context, run: BenchmarkView) -> Target:
        ns = run.namespace or None
        if run.endpoint:
            endpoint, model = run.endpoint, run.target_model or None
            return Target(True, "", endpoint, model, {"endpoint": endpoint, "model": model})
        name = run.service_name
        svc = ctx.store.get(SERVICES, ns, name)
        if svc is None:
            return Target(False, f"AIMService {name} does not exist in namespace {ns}")
        svc_status = status_of(svc)
        if svc_status.get("status") != "Running":
            return Target(False, f"AIMService {name} is {svc_status.get('status') or 'not reconciled yet'}")
        snapshot, why_no_model, template, model_obj = self._snapshot(ctx, svc)
        endpoint = f"http://{self._backend(ctx, svc)}.{ns}.svc.cluster.local"
        model = run.target_model or snapshot.get("model")
        snapshot = {"serviceName": name, "endpoint": endpoint, **snapshot, "model": model}
        placement, secrets = self._pod_settings(ctx, svc, template, model_obj)
        return Target(
            True,
            "",
            endpoint,
            model,
            {k: v for k, v in snapshot.items() if v is not None},
            svc,
            model_problem="" if model else why_no_model,
            placement=placement,
            pull_secrets=secrets,
        )

    def _pod_settings(
        self, ctx: Context, svc: Obj, template: Obj | None, model: Obj | None
    ) -> tuple[dict[str, Any], tuple[dict[str, str], ...]]:
        """Placement of the service's pods (its own fields, else its runtime config's) and its pull secrets
        (service, template, model), as the service's own pods get them; no GPU affinity (the tool needs none)."""
        meta, spec = meta_of(svc), spec_of(svc)
        ns, cfg = meta.get("namespace"), config_name(spec)
        config = resolve(
            cfg, ctx.store.get(RUNTIME_CONFIGS, ns, cfg), ctx.store.get(CLUSTER_RUNTIME_CONFIGS, None, cfg)
        )
        placement = resolve_placement(spec, config.spec, config, owner=f"AIMService {ns}/{meta['name']}")
        where = {
            "nodeSelector": placement.node_selector,
            "tolerations": list(placement.tolerations),
            "affinity": placement.affinity,
        }
        names = [r.get("name") for r in spec.get("imagePullSecrets") or () if isinstance(r, Mapping)]
        if template is not None:
            names += TemplateView.of(template).pull_secret_names
        if model is not None:
            names += ModelView.of(model).pull_secret_names
        secrets = tuple({"name": n} for n in dict.fromkeys(str(n).strip() for n in names if n) if n)
        return {k: v for k, v in where.items() if v}, secrets

    def _backend(self, ctx: Context, svc: Obj) -> str:
        meta = meta_of(svc)
        serving = inference_service_name(meta["name"], meta.get("namespace") or "")
        try:
            builders = providers(ctx.plugins or self._plugins, "aim_runtime_builders")
        except PluginError:
            builders = {}
        for builder in builders.values():
            return builder.backend_service(serving)
        return f"{serving}-predictor"

    def _snapshot(self, ctx: Context, svc: Obj) -> tuple[dict[str, Any], str, Obj | None, Obj | None]:
        """The service as the run records it, why its model name is unknown (if so), its template and model."""
        status = status_of(svc)
        ns = meta_of(svc).get("namespace")
        ref = status.get("resolvedTemplate") or {}
        cluster = ref.get("scope") == "Cluster" or (ref.get("kind") == "AIMClusterServiceTemplate")
        template = ctx.store.get(
            CLUSTER_TEMPLATES if cluster else TEMPLATES, None if cluster else ns, ref.get("name") or ""
        )
        profile = ((TemplateView.of(template).profile or {}).get("metadata") or {}) if template else {}
        model_ref = status.get("resolvedModel") or {}
        model_cluster = model_ref.get("scope") == "Cluster" or model_ref.get("kind") == "AIMClusterModel"
        model = ctx.store.get(
            CLUSTER_MODELS if model_cluster else MODELS, None if model_cluster else ns, model_ref.get("name") or ""
        )
        metadata = ModelView.of(model).status_image_metadata if model else None
        canonical = ((metadata.get("model") or {}).get("canonicalName")) if isinstance(metadata, Mapping) else None
        served = served_model_id(svc, template) or canonical
        why = (
            ""
            if served
            else (
                f"the model AIMService {meta_of(svc)['name']} serves has no known name (AIMModel "
                f"{model_ref.get('name') or '?'} has no canonical name in its image metadata, and neither the "
                "template's modelSources nor AIM_MODEL_ID name the model id the server was started with): set "
                "spec.target.model to the name the server answers to (its GET /v1/models lists it)"
            )
        )
        runtime = status.get("runtime") or {}
        replicas = runtime.get("currentReplicas")
        if replicas is None:
            replicas = spec_of(svc).get("replicas", 1)
        return (
            {
                "model": served,
                "template": ref.get("name"),
                "templateScope": "Cluster" if cluster else ("Namespace" if ref.get("name") else None),
                "gpuModel": profile.get("gpu"),
                "gpuCount": profile.get("gpuCount"),
                "precision": profile.get("precision"),
                "metric": profile.get("metric"),
                "replicas": replicas,
            },
            why,
            template,
            model,
        )

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_benchmark(BenchmarkView.of(obj), observed)


def _env_value(env: Any, name: str) -> str:
    for var in env or ():
        if isinstance(var, Mapping) and var.get("name") == name and isinstance(var.get("value"), str):
            return var["value"].strip()
    return ""


def served_model_id(svc: Obj, template: Obj | None) -> str:
    """The model id the service's server was started with (``AIM_MODEL_ID``), so the name it answers to.

    The service's ``spec.env`` wins, then the template's first ``spec.modelSources[].modelId`` (the
    operator sets ``AIM_MODEL_ID`` from it), then the template's ``spec.env``; "" when none says.
    """
    if value := _env_value(spec_of(svc).get("env"), "AIM_MODEL_ID"):
        return value
    tspec = spec_of(template) if template is not None else {}
    sources = tspec.get("modelSources") or ()
    first = sources[0] if sources and isinstance(sources[0], Mapping) else {}
    if isinstance(first.get("modelId"), str) and first["modelId"].strip():
        return first["modelId"].strip()
    return _env_value(tspec.get("env"), "AIM_MODEL_ID")


def _ns_and(run: Obj, key: Callable[[BenchmarkView], str]) -> tuple[str | None, str]:
    """``(namespace, key(view))``: the form of every index over AIMBenchmarks."""
    view = BenchmarkView.of(run)
    return view.namespace or None, key(view)
