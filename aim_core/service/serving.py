"""The serving objects of a service in its plan: the runtime builder's objects (InferenceService) and the route. Pure."""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.api.common import DEFAULT_GPU_RESOURCE
from aim_core.plugin.providers import KubeObject, ServingEndpoint, declared_kinds, gpu_resource_names, serving_endpoint
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.labels import COMPONENT_LABEL
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.plan import Deletion, Issue, Plan
from aim_core.reconcile.workloads import inspect_pods
from aim_core.service import routing, routing_settings
from aim_core.service.layout import engine_layout
from aim_core.service.observed import ROUTING_ROLE, RUNTIME_ROLE, Observed
from aim_core.service.placement import service_placement
from aim_core.service.pods import pod_ready
from aim_core.service.runtime import (
    container_resources,
    gpu_count,
    gpu_resource_name,
    identity_sources,
    runtime_request,
    scaling_request,
)
from aim_core.service.templates import ScopedTemplate, template_gpu_model
from aim_core.template import TemplateView

PODS = "InferenceServicePods"
ROUTE = "HTTPRoute"
RUNTIME = "InferenceService"


def _default_gpu_resource(template: Obj, ob: Observed) -> str:
    """The GPU resource for a template that names none itself (the CRD defaults it when a GPU block exists).

    The vendor that knows the template's GPU model and has devices in the
    cluster decides; else the cluster's only GPU resource; else the API's
    default resource name (``hardware.gpu.resourceName`` in the CRDs). The pod
    then stays Pending if no node offers it, and the pods component says why.
    """
    model = template_gpu_model(template)
    if model:
        found = ob.inventory.resource_name(model)
        if found:
            return found
        for vendor in ob.providers.gpu_vendors:
            if vendor.normalize_model(model):
                devices = [d for d in ob.inventory.devices if d.vendor == vendor.name]
                if devices:
                    return devices[0].resource_name
    resources = sorted({d.resource_name for d in ob.inventory.devices})
    return resources[0] if len(resources) == 1 else DEFAULT_GPU_RESOURCE


def plan_runtime(
    plan: Plan,
    svc: Obj,
    ob: Observed,
    model: Obj | None,
    scoped: ScopedTemplate,
    config: Obj,
    cache: Obj | None,
    live: Obj | None,
    served_adapters: Any = None,
    runtime: Any = None,
) -> None:
    providers = ob.providers
    runtime = runtime if runtime is not None else providers.runtime
    assert runtime is not None and model is not None  # the caller checked
    template = scoped.template
    # Cache volumes are resolved only when the object is created; afterwards the live ones are
    # carried over by the builder (F51, Q16), so a changed cache never swaps a running mount.
    volumes_from = cache if live is None else None
    default_gpu = _default_gpu_resource(template, ob)
    gpus = set(gpu_resource_names(providers.gpu_vendors))
    if gpu_count(template) > 0:
        gpus.add(gpu_resource_name(template, default_gpu))
    placement = service_placement(
        svc, template, config, ob.config, container_resources(svc, template, default_gpu, model), gpus
    )
    plan.notes += placement.sources
    plan.notes += identity_sources(svc, template, model)
    request = runtime_request(
        svc,
        model,
        template,
        scoped.scope.value,
        config,
        volumes_from,
        live,
        default_gpu_resource=default_gpu,
        placement=placement,
        adapters=served_adapters,
    )
    if isinstance(request, Issue):
        plan.issues.append(request)
        plan.component(RUNTIME, Health.error(request.category, request.reason, request.message))
        return
    nodes = TemplateView.of(template).nodes
    if nodes > 1:
        # Only here: a single-node service's request stays exactly as it was.
        found = engine_layout(template, request.env, nodes, gpu_count(template))
        if isinstance(found, Issue):
            plan.issues.append(found)
            plan.component(RUNTIME, Health.error(found.category, found.reason, found.message))
            return
        layout, lines = found
        plan.notes += lines
        plan.notes.append(f"runtime: {nodes} nodes per replica, built by the {runtime.name!r} runtime builder")
        request = attrs.evolve(request, nodes=nodes, layout=layout)
    objects = runtime.build(request)
    if providers.autoscaler is not None:
        try:
            providers.autoscaler.apply(objects, scaling_request(svc))
        except ValueError as exc:
            plan.issue(Category.INVALID_SPEC, "InvalidAutoscaling", f"spec.autoScaling: {exc}")
            return
    # Created now: reported below as the next reconcile would read it back, so storing the server's
    # answer does not reconcile the service again (tests/wire/test_settled_wire.py).
    built = want_built(plan, runtime, objects, RUNTIME_ROLE, anticipated=live is None)
    if built is None:
        return
    prune(plan, ob, RUNTIME_ROLE, built, svc)
    if live is None and objects:
        # Report what the next reconcile will read back from the object just created (no status
        # yet, no pods), so that reconcile finds nothing to change and writes nothing.
        plan.component(RUNTIME, runtime.health(objects[0], [], []))
        plan.component(PODS, inspect_pods([], [], {}))


def pods_health(ob: Observed, nodes: int) -> Health:
    """The serving pods' component. A replica on several nodes serves only when every pod of its group
    runs, so one pod that is not ready (a worker that cannot be scheduled) explains it, however many
    others are ready; on one node, any ready pod serves, as always."""
    health = inspect_pods(ob.pods, ob.events, ob.logs)
    if nodes > 1 and health.ready:
        waiting = [p for p in ob.pods if not pod_ready(p) and not (p.get("metadata") or {}).get("deletionTimestamp")]
        if waiting:
            return inspect_pods(waiting, ob.events, ob.logs)
    return health


def plan_route(plan: Plan, svc: Obj, ob: Observed, config: Obj, serving_name: str, runtime: Any = None) -> None:
    providers = ob.providers
    # the route follows the builder that serves this service (the leader pods of a multi-node one)
    runtime = runtime if runtime is not None else providers.runtime
    if providers.route is None:
        plan.component(
            ROUTE,
            Health.error(
                Category.INVALID_SPEC,
                "RouteBuilderMissing",
                providers.missing.get("aim_route_builders", "no route builder"),
            ),
        )
        return
    backend = runtime.backend_service(serving_name) if runtime is not None else f"{serving_name}-predictor"
    endpoint = serving_endpoint(runtime, serving_name) if runtime is not None else ServingEndpoint({})
    request = routing.route_request(svc, config, backend, endpoint)
    if isinstance(request, Issue):
        if routing.blocks_service(request):
            plan.issues.append(request)
        plan.component(ROUTE, routing.route_health(request))
        return
    if request is None:
        return
    objects = providers.route.build(request)
    objects = objects if isinstance(objects, list) else [objects]
    live = ob.live.get("route")
    missing = not_served(objects, ob, providers.route)
    if missing:
        # Nothing of the route changes (the route applied before keeps serving) until the API is there.
        plan.component(ROUTE, Health(State.DEGRADED, "CRDNotInstalled", missing))
        plan.requeue(NOT_SERVED_RECHECK)
        return
    built = want_built(plan, providers.route, objects, ROUTING_ROLE)
    if built is None:
        return
    plan.notes += routing_settings.inference_pool_notes(svc, config, request.settings, objects)
    prune(plan, ob, ROUTING_ROLE, built, svc)
    health_of = getattr(providers.route, "health_of", None)
    plan.component(ROUTE, health_of(live, ob.owned) if callable(health_of) else providers.route.health(live))
    if live is not None:
        plan.status["routing"] = {"path": request.path}


#: seconds between looks at a kind the cluster did not serve (its CRD may be installed meanwhile)
NOT_SERVED_RECHECK = 60.0


def not_served(objects: list[KubeObject], ob: Observed, builder: Any) -> str | None:
    """What a builder returned of a kind the API server does not serve (its CRD is not installed), said
    so that the user knows what to install; ``None`` when every kind is served.

    A builder may explain what asked for the kind and how to install it (optional
    ``not_served_hint(ref) -> str``).
    """
    kinds = {(ref.api_version, ref.kind): ref for ref in ob.unserved}
    returned = dict.fromkeys((str(o.get("apiVersion")), str(o.get("kind"))) for o in objects)
    missing = [kinds[key] for key in returned if key in kinds]
    if not missing:
        return None
    names = ", ".join(f"{ref.kind} {ref.api_version}" for ref in missing)
    hint = getattr(builder, "not_served_hint", None)
    hints = [h for h in (hint(ref) for ref in missing) if h] if callable(hint) else []
    return " ".join(
        [
            f"the cluster does not serve {names}: its CRD is not installed.",
            *hints,
            "Nothing of the route changes until then (aim-engine doctor checks the CRDs).",
        ]
    )


def want_built(
    plan: Plan, builder: Any, objects: list[KubeObject], role: str, *, anticipated: bool = False
) -> set[tuple[Any, str]] | None:
    """Put a builder's objects in the plan; the (kind, name) of each, or ``None`` when it returned one
    of a kind it did not declare (reported, nothing of it applied, nothing pruned).

    The first object is the builder's main one, as it always was (an InferenceService is applied
    bit for bit as before). Every other object is labelled with its role, so that the objects a
    builder stops returning are found and deleted, and only after that role's builder ran.
    """
    kinds = {(ref.api_version, ref.kind): ref for ref in declared_kinds(builder)}
    undeclared = [o for o in objects if (o.get("apiVersion"), o.get("kind")) not in kinds]
    if undeclared:
        names = sorted({str(o.get("kind")) for o in undeclared})
        plan.issue(
            Category.UNKNOWN,
            "UnsupportedRuntimeObject" if role == RUNTIME_ROLE else "UnsupportedRouteObject",
            f"{role} builder {builder.name!r} returned {', '.join(names)} objects, which it does not declare; "
            f"only {', '.join(sorted(ref.kind for ref in kinds.values()))} objects are applied",
        )
        objects = [o for o in objects if o not in undeclared]
        if not objects:
            return None
    built: set[tuple[Any, str]] = set()
    for index, obj in enumerate(objects):
        ref = kinds[(str(obj.get("apiVersion")), str(obj.get("kind")))]
        if index > 0:
            meta = obj.setdefault("metadata", {})
            meta["labels"] = {**(meta.get("labels") or {}), COMPONENT_LABEL: role}
        plan.want(ref, obj, anticipated=anticipated and index == 0)
        built.add((ref, obj["metadata"]["name"]))
    return None if undeclared else built


def prune(plan: Plan, ob: Observed, role: str, built: set[tuple[Any, str]], svc: Obj) -> None:
    """Delete what the service controls of this role that its builder no longer returns.

    Only objects whose controller is this service (``ob.owned``) are candidates; an object's role
    is its label, else its kind's if that is a builder's main kind (an InferenceService left by
    the runtime builder a service used before).
    """
    mains = ob.providers.main_kinds()
    namespace = svc["metadata"].get("namespace")
    for ref, children in ob.owned.items():
        for child in children:
            name = child["metadata"]["name"]
            if (ref, name) in built or (child["metadata"].get("deletionTimestamp")):
                continue
            child_role = (child["metadata"].get("labels") or {}).get(COMPONENT_LABEL) or mains.get(ref)
            if child_role == role:
                plan.delete.append(Deletion(ref, namespace, name))
