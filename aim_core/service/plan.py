"""The AIMService plan: model, template, cache, serving objects, route, scaler, status (F46-F65).

Pure: :func:`plan_service` takes the service and what the controller
observed and returns a :class:`~aim_core.reconcile.plan.Plan`. The order of
components matters: the first failing one explains the ``Ready`` condition.

Gates, in the order they apply:

* A blocking issue (invalid spec, missing named model/template/config, routing
  without a gateway, malformed ``AIM_ENGINE_ARGS``, a name that cannot fit)
  stops every write; the service reports Failed with the reason.
* Nothing template-dependent is planned until a template is resolved and
  Ready (F47). The template cache is planned then.
* The serving objects are created once the model and the cache are Ready too;
  once they exist they are re-applied on every reconcile, so edits propagate
  while a dependency is briefly unhealthy.
"""

from __future__ import annotations

from typing import Any

import attrs

from aim_core.api.spec_errors import spec_problems
from aim_core.model import ModelView
from aim_core.reconcile.errors import ErrorInfo
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.naming import inference_service_name
from aim_core.reconcile.plan import Deletion, Issue, Plan
from aim_core.reconcile.resources import ARTIFACTS, TEMPLATE_CACHES
from aim_core.runtimeconfig import routing_enabled
from aim_core.service import adapters, cache_retry, caching
from aim_core.service.adapters import ADAPTERS
from aim_core.service.default_template import resolve_default
from aim_core.service.models import image_key, resolve_model
from aim_core.service.observed import Observed, runtime_key
from aim_core.service.resolution import TemplateResolution
from aim_core.service.runtime import (
    autoscaling,
    runtime_status,
)
from aim_core.service.selection import choose_template
from aim_core.service.serving import PODS, RUNTIME, plan_route, plan_runtime, pods_health
from aim_core.service.validation import own_spec_issues
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView

RUNTIME_CONFIG = "RuntimeConfig"
TEMPLATE = "Template"
CACHE = "Cache"
SCALER = "HPA"
RECHECK_AFTER_DROP_SECONDS = 1.0
MULTI_NODE_RUNTIME_MISSING = "MultiNodeRuntimeMissing"
RUNTIME_NOT_SERVED = "RuntimeKindNotServed"
UNSERVED_RECHECK_SECONDS = 60.0


def _models_by_image(service: ServiceView, ob: Observed) -> list[dict[str, Any]]:
    image = service.model_image
    if not image:
        return []
    key = image_key(image)
    found = [
        m for scope in ("namespaced", "cluster") for m in ob.models[scope].values() if ModelView.of(m).image == key
    ]
    return found


def plan_service(svc: dict[str, Any], ob: Observed) -> Plan:
    plan = Plan()
    problems = spec_problems(svc)
    if problems:
        plan.issue(Category.INVALID_SPEC, "InvalidSpec", "; ".join(problems))
    try:
        _plan_service(plan, svc, ob)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        if not problems:
            raise
        # A spec the schema would reject (an older CRD, a write around validation) can trip
        # any step below; the InvalidSpec issue already blocks every write and names the field.
        plan.notes.append(f"planning stopped at the invalid spec: {type(exc).__name__}: {exc}")
    return plan


def _plan_service(plan: Plan, svc: dict[str, Any], ob: Observed) -> None:
    service = ServiceView.of(svc)
    config = ob.config.spec
    plan.labels = ob.config.view.labels

    for error in ob.read_errors:
        info: ErrorInfo = error
        plan.issue(info.category, info.reason, info.message)

    # --- runtime config (only reported when one exists or the named one is missing)
    if ob.config.found or ob.config.issue is not None:
        plan.component(RUNTIME_CONFIG, ob.config.health(found_reason="RuntimeConfigResolved"))
        if ob.config.issue is not None:
            plan.issue(ob.config.issue.category, ob.config.issue_reason, ob.config.issue.message)
    if ob.config.reference is not None:
        plan.status["resolvedRuntimeConfig"] = ob.config.reference

    # --- model
    namespaced_models = list(ob.models["namespaced"].values())
    model_res = resolve_model(
        svc, ob.models["namespaced"], ob.models["cluster"], _models_by_image(service, ob), namespaced_models, config
    )
    model_res.contribute(plan)
    if model_res.reference is not None:
        plan.status["resolvedModel"] = model_res.reference

    # --- template (an explicit name is resolved without waiting for the model, as upstream)
    model_name = _expected_model_name(svc, model_res)
    template_res = resolve_default(
        svc,
        model_res.model or model_res.create,
        list(ob.templates["namespaced"].values()),
        list(ob.templates["cluster"].values()),
        ob.inventory,
    ) or choose_template(
        svc,
        model_name,
        list(ob.templates["namespaced"].values()),
        list(ob.templates["cluster"].values()),
        ob.inventory,
        config,
    )
    if model_name is not None:
        template_res = _check_model_match(template_res, model_name)
    template_res.contribute(plan)
    if template_res.selection is not None:
        plan.notes += template_res.selection.explain()
    plan.notes.append(f"template: {template_res.health.reason}: {template_res.health.message}")
    if template_res.reference is not None:
        plan.status["resolvedTemplate"] = template_res.reference
    _recheck_after_dropping(plan, service)

    # --- the service's own spec: reported on the first reconcile, whatever the model and template
    own_issues = own_spec_issues(svc, config, template_res.template)
    plan.issues += own_issues

    # --- LoRA adapters (issue 22): their artifacts are made whatever the template's state
    ready_scoped = template_res.template if template_res is not None and template_res.ready else None
    adapter_plan = adapters.plan_for(svc, ob, model_res.model, ready_scoped.template if ready_scoped else None, config)
    for desired in adapter_plan.create:
        plan.want(ARTIFACTS, desired, owned=False)
    plan.status.update(adapter_plan.status())
    plan.notes += adapter_plan.notes

    # --- the runtime builder: per service, by the nodes one replica spans
    ready_template = template_res.template if template_res is not None and template_res.ready else None
    builder, live_runtime, missing_builder = _runtime_builder(ob, ready_template)

    # --- template cache (F63-F65)
    mode = caching.caching_mode(service)
    cache = None
    if ready_template is not None:
        template = ready_template.template
        cache = caching.find_cache(svc, template["metadata"]["name"], mode, ob.caches)
        if cache is None:
            desired = caching.desired_cache(svc, template, ready_template.scope.value, config, mode)
            plan.want(TEMPLATE_CACHES, desired, owned=caching.cache_owned(mode))
        health = caching.cache_health(cache, caching.has_cache_volumes(live_runtime), mode)
        attempts = cache_retry.recorded_attempts(service)
        retry = cache_retry.decide(svc, cache, health, ob.now) if cache is not None else None
        if retry is not None:
            health, attempts = retry.health, retry.attempts
            if retry.delete and cache is not None:
                plan.delete.append(
                    Deletion(TEMPLATE_CACHES, cache["metadata"].get("namespace"), cache["metadata"]["name"])
                )
            if retry.requeue is not None:
                plan.requeue(retry.requeue)
        plan.component(CACHE, health)
        cache_status = caching.cache_status(cache)
        if cache_status is not None:
            plan.status["cache"] = cache_status  # Ready: the retry count is done with
        elif attempts > 0:
            plan.status["cache"] = {"retryAttempts": attempts}
    else:
        plan.component(CACHE, Health(State.PROGRESSING, "CacheCreating", "waiting for a Ready template"))

    # --- serving objects (F47-F53)
    providers = ob.providers
    serving_name = _serving_name(service, plan)
    runtime_ready = False
    if ready_template is not None and serving_name is not None:
        cache_ready = cache is not None and caching.cache_health(cache, False, mode).ready
        if own_issues:
            plan.component(RUNTIME, Health.error(own_issues[0].category, own_issues[0].reason, own_issues[0].message))
        elif missing_builder is not None:
            plan.issues.append(missing_builder)
            plan.component(
                RUNTIME, Health.error(missing_builder.category, missing_builder.reason, missing_builder.message)
            )
        elif builder is not None and builder.resource in ob.unserved and live_runtime is None:
            # An optional CRD not installed: nothing is applied, and the service says what to install.
            # Looked at again now and then: a CRD installed later is found by its watch within minutes.
            plan.component(
                RUNTIME,
                Health.error(
                    Category.MISSING_UPSTREAM,
                    RUNTIME_NOT_SERVED,
                    f"this cluster does not serve {builder.resource.kind} ({builder.resource.api_version}), which "
                    f"the {builder.name!r} runtime builder makes for this service: install its CRD and controller "
                    "(aim-engine doctor says how)",
                ),
            )
            plan.requeue(UNSERVED_RECHECK_SECONDS)
        elif builder is None:
            plan.component(
                RUNTIME,
                Health.error(
                    Category.INVALID_SPEC,
                    "RuntimeBuilderMissing",
                    providers.missing.get("aim_runtime_builders", "no runtime builder"),
                ),
            )
        elif live_runtime is not None or (model_res.ready and cache_ready):
            plan_runtime(
                plan,
                svc,
                ob,
                model_res.model,
                ready_template,
                config,
                cache,
                live_runtime,
                adapter_plan.serving,
                runtime=builder,
            )
        else:
            waiting = "the model" if not model_res.ready else "the template cache"
            plan.component(RUNTIME, Health(State.PROGRESSING, "CreatingRuntime", f"waiting for {waiting} to be Ready"))
    if RUNTIME not in plan.components and live_runtime is None:
        # Present from the first lookup, as upstream (2.1): the object does not exist yet.
        if own_issues:
            plan.component(RUNTIME, Health.error(own_issues[0].category, own_issues[0].reason, own_issues[0].message))
        else:
            why = "waiting for a Ready template" if ready_template is None else "not created yet"
            plan.component(RUNTIME, Health.progressing("CreatingRuntime", f"InferenceService not found; {why}"))
    if live_runtime is not None and builder is not None:
        runtime_health = builder.health(live_runtime, ob.pods, ob.events)
        plan.component(RUNTIME, runtime_health)
        runtime_ready = runtime_health.ready
        # Events that explain a failure (also those KServe reports only as Events) come from
        # watches and re-trigger the service: nothing is looked at again on a timer.
        nodes = TemplateView.of(ready_template.template).nodes if ready_template is not None else 1
        plan.component(PODS, pods_health(ob, nodes))

    # --- route (F58-F60)
    if routing_enabled(service.routing, config) and serving_name is not None:
        plan_route(plan, svc, ob, config, serving_name, runtime=builder)

    # --- scaler and replicas (F52, F62)
    live_scaler = ob.live.get("scaler")
    if providers.autoscaler is not None:
        if autoscaling(service):
            plan.component(SCALER, providers.autoscaler.health(live_scaler, runtime_ready))
        replicas = providers.autoscaler.replicas(live_scaler) if live_scaler is not None else None
    else:
        replicas = None
    plan.status["runtime"] = runtime_status(svc, replicas)

    # --- adapters last: the base model's components explain Ready first
    if adapter_plan.health is not None:
        plan.component(ADAPTERS, adapter_plan.health)
    if adapter_plan.condition is not None:
        plan.conditions.append(adapter_plan.condition)


def _runtime_builder(ob: Observed, ready: Any) -> tuple[Any, dict[str, Any] | None, Issue | None]:
    """The builder of this service, its main object on the server, and why there is none for a multi-node one.

    A replica on one node is built by the preferred builder (KServe), as always; a replica on several
    nodes by the first installed builder whose ``max_nodes`` reaches them. Without a Ready template, the
    builder whose object exists (the service keeps reporting the workload it has).
    """
    providers = ob.providers
    if ready is None:
        for installed in providers.all_runtimes():
            key = "runtime" if installed is providers.runtime else runtime_key(installed)
            if ob.live.get(key) is not None:
                return installed, ob.live[key], None
        return providers.runtime, ob.live.get("runtime"), None
    nodes = TemplateView.of(ready.template).nodes
    builder = providers.runtime_for(nodes)
    if builder is None:
        if providers.runtime is None:
            return None, None, None  # no runtime builder at all: RuntimeBuilderMissing, as before
        names = ", ".join(b.name for b in providers.all_runtimes())
        return (
            None,
            None,
            Issue(
                Category.INVALID_SPEC,
                MULTI_NODE_RUNTIME_MISSING,
                f"{ready.describe()} spans {nodes} nodes per replica (hardware.nodes), and no installed runtime "
                f"builder runs a replica on several nodes (installed: {names}); install the lws plugin "
                "(aim-engine-lws, LeaderWorkerSet) or use a template with hardware.nodes 1",
            ),
        )
    key = "runtime" if builder is providers.runtime else runtime_key(builder)
    return builder, ob.live.get(key), None


def _expected_model_name(svc: dict[str, Any], model_res: Any) -> str | None:
    """The model the service serves: the resolved one, else the one being created for it, else ``None``."""
    if model_res.model is not None:
        return str(model_res.model["metadata"]["name"])
    if model_res.create is not None:
        return str(model_res.create["metadata"]["name"])
    return None


def _recheck_after_dropping(plan: Plan, service: ServiceView) -> None:
    """Look again soon when this pass drops or replaces the template recorded in status.

    Our own status writes do not re-trigger the service, and the next pass
    starts from the new record; without this, it would wait for some unrelated
    change (a recorded template left behind by a spec edit kept the service
    Failed until then).
    """
    recorded = service.resolved_template
    if not recorded.get("name"):
        return
    now = plan.status.get("resolvedTemplate") or {}
    if (now.get("name"), now.get("uid")) != (recorded.get("name"), recorded.get("uid") or now.get("uid")):
        plan.requeue(RECHECK_AFTER_DROP_SECONDS)


def _check_model_match(resolution: TemplateResolution, model_name: str) -> TemplateResolution:
    """A template named explicitly must serve the service's model; otherwise the pod would run
    one model's image with another model's profile (upstream does not check this)."""
    scoped = resolution.template
    if scoped is None:
        return resolution
    serves = TemplateView.of(scoped.template).model_name.strip()
    if not serves or serves == model_name:
        return resolution
    message = (
        f"{scoped.describe()} serves model {serves!r}, but this service uses model {model_name!r}; "
        f"name a template of {model_name!r} in spec.template.name or change spec.model"
    )
    health = Health.error(Category.INVALID_SPEC, "TemplateModelMismatch", message, upstream=True)
    return attrs.evolve(resolution, health=health, derived=None)


def _serving_name(service: ServiceView, plan: Plan) -> str | None:
    try:
        return inference_service_name(service.name, service.namespace)
    except Exception as exc:  # noqa: BLE001 - ReconcileError with a category and a helpful message
        category, reason = getattr(exc, "category", Category.INVALID_SPEC), getattr(exc, "reason", "InvalidSpec")
        plan.issue(category, reason, str(exc))
        plan.component(RUNTIME, Health.error(category, reason, str(exc)))  # F54: present when the lookup errs
        return None
