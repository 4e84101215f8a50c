"""The AIMService controller: indexes, watches and the observe step.

Everything a service depends on re-triggers it through a store index, never a
scan: runtime configs (by namespace and name), models (by name, by image, by
the resolved model), templates (by model name and by name), template caches
(by service label and by template), the serving objects, route and scaler (by
the ``aim.eai.amd.com/service.name`` identity label), predictor pods (by the
serving object they belong to) and Nodes (only when a node's GPU facts change).

The plan itself is pure and lives in :mod:`aim_core.service.plan`.
"""

from __future__ import annotations

import datetime
import logging
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, ClassVar

from aim_core.model import ModelView
from aim_core.reconcile.errors import describe
from aim_core.reconcile.gpu import GpuInventory, node_gpu_facts
from aim_core.reconcile.health import State
from aim_core.reconcile.labels import SERVICE_FINALIZER
from aim_core.reconcile.naming import hashed_label_value, sanitize_label_value
from aim_core.reconcile.obj import spec_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.redaction import redact
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_MODELS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    EVENTS,
    MODELS,
    NAMESPACES,
    NODES,
    PODS,
    RUNTIME_CONFIGS,
    SERVICES,
    TEMPLATE_CACHES,
    TEMPLATES,
)
from aim_core.reconcile.status import SERVICE_STATUS_MAP
from aim_core.reconcile.workloads import pod_failed
from aim_core.runtime.controller import Context, Controller, Watch, namespace_going
from aim_core.runtime.eventstore import add_index as index_events
from aim_core.runtime.eventstore import events_about, involved
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import resolve
from aim_core.service.adapters import adapter_sources, artifact_view
from aim_core.service.keys import model_names, namespace_of, serving_name_keys, template_names
from aim_core.service.observed import Observed, Providers
from aim_core.service.owned import child_selections, index_children, owned_children
from aim_core.service.plan import plan_service
from aim_core.service.pods import LOG_CACHE_SIZE as LOG_CACHE_SIZE
from aim_core.service.pods import is_ready, pod_ready, terminations
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView
from aim_core.templatecache import CacheView

log = logging.getLogger("aim_engine.service")

SERVICE_NAME_LABEL = "aim.eai.amd.com/service.name"
SERVICE_LABEL = "aim.eai.amd.com/service"
ISVC_POD_LABEL = "serving.kserve.io/inferenceservice"

# index names (per resource)
BY_CONFIG = "svc-by-config"
BY_MODEL = "svc-by-model-name"
BY_IMAGE = "svc-by-model-image"
BY_TEMPLATE = "svc-by-template"
BY_SERVING_NAME = "svc-by-serving-name"
BY_SANITIZED_NAME = "svc-by-sanitized-name"  # the name as identity labels carry it (sanitised, cut to 63)
AUTO_SELECT = "svc-auto-select"
TPL_BY_MODEL = "tpl-by-model"
MODEL_BY_IMAGE = "model-by-image"
CACHE_BY_TEMPLATE = "cache-by-template"
CACHE_BY_SERVICE = "cache-by-service-label"
BY_OWNER_SERVICE = "by-service-label"
POD_BY_SERVING = "pod-by-serving"
BY_LABEL_VALUE = "svc-by-label-value"
BY_ADAPTER_SOURCE = "svc-by-adapter-source"  # services by (namespace, an adapter's sourceUri)
ARTIFACT_BY_SOURCE = "svc:artifact-by-source"  # artifacts by (namespace, spec.sourceUri)


class ServiceController(Controller):
    name: ClassVar[str] = "service"
    one_event_per_state = True  # going Running: one Event, not one per child that turned Ready
    resource = SERVICES
    finalizer = SERVICE_FINALIZER
    # Added on the first reconcile, in the same pass as the rest, as upstream (F13/F15, issue 18): upstream's
    # own tests wait for it on a service whose model is not ready. Never blocks namespace deletion (finalize).
    status_map = SERVICE_STATUS_MAP

    def __init__(self, plugins: Any, *, gpu_preference: Iterable[str] = ()) -> None:
        self.plugins = plugins
        self.providers = Providers.from_plugins(plugins)
        self.gpu_preference = tuple(gpu_preference)
        unknown = GpuInventory((), self.providers.gpu_vendors, self.gpu_preference).unknown_preferences()
        if unknown:
            log.warning("GPU preference names models no installed GPU vendor knows: %s", ", ".join(unknown))
        self._store: Store | None = None
        self._logs: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._inventory: tuple[int, GpuInventory] | None = None

    # ------------------------------------------------------------ indexes

    def setup(self, store: Store) -> None:
        self._store = store
        index_events(store)
        store.add_index(
            SERVICES,
            BY_CONFIG,
            lambda s: [(namespace_of(s), name := ServiceView.of(s).config_name), (None, name)],
        )
        store.add_index(
            SERVICES,
            BY_MODEL,
            lambda s: [(namespace_of(s), n) for n in model_names(s)] + [(None, n) for n in model_names(s)],
        )
        store.add_index(
            SERVICES,
            BY_IMAGE,
            lambda s: [image] if (image := ServiceView.of(s).model_image) else [],
        )
        store.add_index(
            SERVICES,
            BY_TEMPLATE,
            lambda s: [(namespace_of(s), n) for n in template_names(s)] + [(None, n) for n in template_names(s)],
        )
        store.add_index(SERVICES, BY_SERVING_NAME, lambda s: [(namespace_of(s), n) for n in serving_name_keys(s)])
        store.add_index(
            SERVICES, BY_LABEL_VALUE, lambda s: [(namespace_of(s), hashed_label_value(s["metadata"]["name"]))]
        )
        store.add_index(
            SERVICES, BY_SANITIZED_NAME, lambda s: [(namespace_of(s), sanitize_label_value(s["metadata"]["name"]))]
        )
        store.add_index(SERVICES, AUTO_SELECT, lambda s: [] if ServiceView.of(s).template_name else [True])
        for ref in (TEMPLATES, CLUSTER_TEMPLATES):
            store.add_index(ref, TPL_BY_MODEL, lambda t: [(namespace_of(t), TemplateView.of(t).model_name)])
        for ref in (MODELS, CLUSTER_MODELS):
            store.add_index(ref, MODEL_BY_IMAGE, lambda m: [ModelView.of(m).image])
        store.add_index(
            TEMPLATE_CACHES, CACHE_BY_TEMPLATE, lambda c: [(namespace_of(c), CacheView.of(c).template_name)]
        )
        store.add_index(
            TEMPLATE_CACHES,
            CACHE_BY_SERVICE,
            lambda c: [
                (namespace_of(c), label) for label in [(c["metadata"].get("labels") or {}).get(SERVICE_LABEL)] if label
            ],
        )
        store.add_index(SERVICES, BY_ADAPTER_SOURCE, lambda s: [(namespace_of(s), u) for u in adapter_sources(s)])
        store.add_index(ARTIFACTS, ARTIFACT_BY_SOURCE, lambda a: [(namespace_of(a), spec_of(a).get("sourceUri") or "")])
        store.add_index(PODS, POD_BY_SERVING, self._pod_keys)
        index_children(store, self.providers)

    def _pod_labels(self) -> tuple[str, ...]:
        """The labels that name the serving object on a serving pod: KServe's, and every runtime builder's."""
        return tuple(dict.fromkeys((ISVC_POD_LABEL, *self.providers.pod_labels())))

    def _pod_keys(self, pod: dict[str, Any]) -> list[tuple[str | None, str]]:
        labels = pod["metadata"].get("labels") or {}
        return [(namespace_of(pod), value) for key in self._pod_labels() if (value := labels.get(key))]

    # ------------------------------------------------------------- watches

    def _keys(self, index: str, value: Any) -> set[ObjectKey]:
        assert self._store is not None
        return self._store.keys_by_index(SERVICES, index, value)

    def watches(self) -> list[Watch]:
        def by_config(cfg: dict[str, Any]) -> Iterable[ObjectKey]:
            # namespaced config: services of its namespace using that name;
            # cluster config (namespace None): services using that name anywhere
            return self._keys(BY_CONFIG, (namespace_of(cfg), cfg["metadata"]["name"]))

        def by_model(model: dict[str, Any]) -> Iterable[ObjectKey]:
            keys = self._keys(BY_MODEL, (namespace_of(model), model["metadata"]["name"]))
            image = ModelView.of(model).image
            if image:
                keys |= {k for k in self._keys(BY_IMAGE, image) if namespace_of(model) in (None, k[0])}
            owner = (model["metadata"].get("labels") or {}).get(SERVICE_LABEL)
            if owner and namespace_of(model):  # custom models carry the (label-safe) name of the service that made them
                keys |= self._keys(BY_LABEL_VALUE, (namespace_of(model), owner))
            return keys

        def by_template(tpl: dict[str, Any]) -> Iterable[ObjectKey]:
            ns = namespace_of(tpl)
            keys = self._keys(BY_TEMPLATE, (ns, tpl["metadata"]["name"]))
            # A derived template (spec.overrides) is named neither in its service's spec nor, until it is
            # Ready, in its status.resolvedTemplate: its owner reference names the service that waits for it.
            keys |= {
                (ns, ref["name"])
                for ref in tpl["metadata"].get("ownerReferences") or ()
                if ns and ref.get("kind") == SERVICES.kind and ref.get("name")
            }
            model = TemplateView.of(tpl).model_name
            if model:
                auto = self._keys(AUTO_SELECT, True)
                keys |= auto & self._keys(BY_MODEL, (ns, model))
            return keys

        def by_cache(cache: dict[str, Any]) -> Iterable[ObjectKey]:
            ns = namespace_of(cache)
            keys = self._keys(BY_TEMPLATE, (ns, CacheView.of(cache).template_name))
            owner = (cache["metadata"].get("labels") or {}).get(SERVICE_LABEL)
            if owner:
                keys |= self._keys(BY_SANITIZED_NAME, (ns, owner))
            return keys

        def by_identity(obj: dict[str, Any]) -> Iterable[ObjectKey]:
            # The label holds the sanitised name, shortened for names over 63 characters.
            owner = (obj["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL)
            return self._keys(BY_SANITIZED_NAME, (namespace_of(obj), owner)) if owner else []

        def by_pod(pod: dict[str, Any]) -> Iterable[ObjectKey]:
            keys: set[ObjectKey] = set()
            for key in self._pod_keys(pod):
                keys |= self._keys(BY_SERVING_NAME, key)
            return keys

        runtime_kinds = {b.resource.kind for b in self.providers.all_runtimes()}

        def by_event(event: dict[str, Any]) -> Iterable[ObjectKey]:
            about = involved(event)
            if about is None:
                return []
            ns, kind, name = about
            if kind == "Pod":
                assert self._store is not None
                pod = self._store.get(PODS, ns, name)
                return by_pod(pod) if pod is not None else []  # not ours, or not seen yet (its add triggers)
            if kind in runtime_kinds:
                return self._keys(BY_SERVING_NAME, (ns, name))
            return []

        def by_artifact(artifact: dict[str, Any]) -> Iterable[ObjectKey]:
            return self._keys(BY_ADAPTER_SOURCE, (namespace_of(artifact), spec_of(artifact).get("sourceUri") or ""))

        def by_node(node: dict[str, Any]) -> Iterable[ObjectKey]:
            return self._keys(AUTO_SELECT, True)

        def gpu_changed(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
            vendors = self.providers.gpu_vendors
            return old is None or node_gpu_facts(old, vendors) != node_gpu_facts(new, vendors)

        watches = [
            Watch(RUNTIME_CONFIGS, by_config),
            Watch(CLUSTER_RUNTIME_CONFIGS, by_config),
            Watch(MODELS, by_model),
            Watch(CLUSTER_MODELS, by_model),
            Watch(TEMPLATES, by_template),
            Watch(CLUSTER_TEMPLATES, by_template),
            Watch(TEMPLATE_CACHES, by_cache),
            # a pod going Ready, then its InferenceService, then Events about them: one reconcile, one status write
            Watch(PODS, by_pod, coalesce=True),
            Watch(EVENTS, by_event, coalesce=True),
            Watch(NODES, by_node, changed=gpu_changed),
            # the download pod's progress patches change nothing the plan reads
            Watch(ARTIFACTS, by_artifact, changed=lambda old, new: artifact_view(old) != artifact_view(new)),
        ]
        for ref in self.providers.child_resources():
            watches.append(Watch(ref, by_identity, coalesce=True))
        return watches

    def extra_resources(self) -> list[Any]:
        return [NAMESPACES]

    def event_sources(self) -> list[Any]:
        runtime = list(dict.fromkeys(b.resource for b in self.providers.all_runtimes()))
        return [PODS, *runtime]

    def store_filters(self) -> dict[Any, Any]:
        wanted = self._pod_labels()
        return {PODS: lambda pod: any(k in (pod["metadata"].get("labels") or {}) for k in wanted)}

    def selections(self) -> dict[Any, list[Selection]]:
        # the serving pods, none of the cluster's others; of the builders' other kinds, what a service made
        pods = [Selection(label_selector=label) for label in self._pod_labels()]
        return {PODS: pods, **child_selections(self.providers)}

    # ------------------------------------------------------------- observe

    def inventory(self, store: Store) -> GpuInventory:
        version = store.version(NODES)
        if self._inventory is None or self._inventory[0] != version:
            self._inventory = (
                version,
                GpuInventory.from_nodes(store.list(NODES), self.providers.gpu_vendors, self.gpu_preference),
            )
        return self._inventory[1]

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, service = ctx.store, ServiceView.of(obj)
        ns, name = service.namespace, service.config_name
        config = resolve(name, store.get(RUNTIME_CONFIGS, ns, name), store.get(CLUSTER_RUNTIME_CONFIGS, None, name))
        models = {
            "namespaced": {m["metadata"]["name"]: m for m in store.list(MODELS, ns)},
            "cluster": {m["metadata"]["name"]: m for m in store.list(CLUSTER_MODELS)},
        }
        templates = {
            "namespaced": {t["metadata"]["name"]: t for t in store.list(TEMPLATES, ns)},
            "cluster": {t["metadata"]["name"]: t for t in store.list(CLUSTER_TEMPLATES)},
        }
        caches = store.list(TEMPLATE_CACHES, ns)
        serving_names = serving_name_keys(service)
        live: dict[str, Any] = {}
        pods: list[dict[str, Any]] = []
        events: list[dict[str, Any]] = []
        logs: dict[str, str] = {}
        read_errors: list[Any] = []
        if serving_names:
            serving = serving_names[0]
            for key, (ref, child_name) in self.providers.child_objects(serving, obj["metadata"]["name"], ns).items():
                live[key] = store.get(ref, ns, child_name)
            pods = store.by_index(PODS, POD_BY_SERVING, (ns, serving))
            # the serving object the service runs on: the preferred builder's, else another builder's
            runtime_obj = next(
                (live[k] for k in live if (k == "runtime" or k.startswith("runtime:")) and live[k] is not None), None
            )
            if runtime_obj is not None and not is_ready(runtime_obj):
                # What explains a serving object that is not Ready: Events about it (KServe reports
                # some failures only there) and about its pods, from the Event watches; the log
                # tail of a failed container, read once per failure.
                events = events_about(store, runtime_obj.get("kind", ""), ns, serving)
                for pod in pods:
                    if pod_ready(pod):
                        continue
                    pod_name = pod["metadata"]["name"]
                    events += events_about(store, "Pod", ns, pod_name)
                    if pod_failed(pod):
                        try:
                            logs[pod_name] = await self._log_tail(ctx, pod)
                        except Exception as exc:  # noqa: BLE001 - a failed read becomes a condition, not a crash
                            read_errors.append(describe(exc))
                            break
        served = ctx.extras.get("served") or (lambda ref: True)  # offline (render): every kind is served
        artifacts = tuple(
            a
            for uri in dict.fromkeys(adapter_sources(obj))
            for a in store.by_index(ARTIFACTS, ARTIFACT_BY_SOURCE, (ns, uri))
        )
        return Observed(
            artifacts=artifacts,
            owned=owned_children(store, self.providers, obj),
            unserved=frozenset(ref for ref in self.providers.owned_kinds() if not served(ref)),
            config=config,
            models=models,
            templates=templates,
            caches=caches,
            inventory=self.inventory(store),
            live=live,
            pods=pods,
            events=events,
            logs=logs,
            read_errors=read_errors,
            providers=self.providers,
            namespace_terminating=namespace_going(store.get(NAMESPACES, None, ns)),
            now=datetime.datetime.now(datetime.UTC),
        )

    async def _log_tail(self, ctx: Context, pod: dict[str, Any]) -> str:
        """The log tail of a failed pod, read again only when its containers ended again."""
        meta = pod["metadata"]
        key = (meta.get("namespace"), meta["name"], meta.get("uid"), terminations(pod))
        text = self._logs.get(key)
        if text is None:
            # credentials a failing engine printed never reach conditions or Events (issue 18)
            text = redact(await ctx.kube.read_log(meta.get("namespace") or "", meta["name"], tail_lines=50))
            self._logs[key] = text
            while len(self._logs) > LOG_CACHE_SIZE:
                self._logs.popitem(last=False)
        else:
            self._logs.move_to_end(key)
        return text

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_service(obj, observed)

    async def finalize(self, ctx: Context, obj: dict[str, Any]) -> None:
        """Delete the non-Ready template caches this service created (F55); never block namespace deletion."""
        ns = namespace_of(obj) or ""
        if namespace_going(ctx.store.get(NAMESPACES, None, ns)):
            return
        label = sanitize_label_value(obj["metadata"]["name"])
        caches = ctx.store.by_index(TEMPLATE_CACHES, CACHE_BY_SERVICE, (ns, label))
        doomed = [c["metadata"]["name"] for c in caches if CacheView.of(c).state != State.READY.value]
        # The namespace watch may not have brought the namespace's Terminating yet when the namespace
        # controller's deletion of its content arrives: read it before deleting anything (F15).
        if not doomed or namespace_going(await ctx.kube.get(NAMESPACES, None, ns)):
            return
        for name in doomed:
            await ctx.kube.delete(TEMPLATE_CACHES, ns, name)


__all__ = ["ServiceController"]
