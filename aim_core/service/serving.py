"""The serving objects of a service in its plan: the runtime builder's objects (InferenceService) and the route. Pure."""

from __future__ import annotations

from typing import Any

from aim_core.api.common import DEFAULT_GPU_RESOURCE
from aim_core.plugin.providers import gpu_resource_names
from aim_core.reconcile.health import Category, Health
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.plan import Issue, Plan
from aim_core.reconcile.workloads import inspect_pods
from aim_core.service import routing
from aim_core.service.observed import Observed
from aim_core.service.placement import service_placement
from aim_core.service.runtime import (
    container_resources,
    gpu_count,
    gpu_resource_name,
    identity_sources,
    runtime_request,
    scaling_request,
)
from aim_core.service.templates import ScopedTemplate, template_gpu_model

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
) -> None:
    providers = ob.providers
    runtime = providers.runtime
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
    objects = runtime.build(request)
    if providers.autoscaler is not None:
        try:
            providers.autoscaler.apply(objects, scaling_request(svc))
        except ValueError as exc:
            plan.issue(Category.INVALID_SPEC, "InvalidAutoscaling", f"spec.autoScaling: {exc}")
            return
    resource = runtime.resource
    for obj in objects:
        if (obj.get("apiVersion"), obj.get("kind")) != (resource.api_version, resource.kind):
            plan.issue(
                Category.UNKNOWN,
                "UnsupportedRuntimeObject",
                f"runtime builder {runtime.name!r} returned a {obj.get('kind')}; only "
                f"{resource.kind} objects are applied",
            )
            continue
        # Created now: reported below as the next reconcile would read it back, so storing the
        # server's answer does not reconcile the service again (tests/wire/test_settled_wire.py).
        plan.want(resource, obj, anticipated=live is None)
    if live is None and objects:
        # Report what the next reconcile will read back from the object just created (no status
        # yet, no pods), so that reconcile finds nothing to change and writes nothing.
        plan.component(RUNTIME, runtime.health(objects[0], [], []))
        plan.component(PODS, inspect_pods([], [], {}))


def plan_route(plan: Plan, svc: Obj, ob: Observed, config: Obj, serving_name: str) -> None:
    providers = ob.providers
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
    backend = providers.runtime.backend_service(serving_name) if providers.runtime else f"{serving_name}-predictor"
    request = routing.route_request(svc, config, backend)
    if isinstance(request, Issue):
        if routing.blocks_service(request):
            plan.issues.append(request)
        plan.component(ROUTE, routing.route_health(request))
        return
    if request is None:
        return
    plan.want(providers.route.resource, providers.route.build(request))
    live = ob.live.get("route")
    plan.component(ROUTE, providers.route.health(live))
    if live is not None:
        plan.status["routing"] = {"path": request.path}
