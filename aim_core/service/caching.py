"""How an AIMService finds, plans and judges its template cache (F63-F65). Pure.

Every service needs an AIMTemplateCache for its resolved template before its
InferenceService is built. The service's caching mode decides which one:

* ``Shared`` (the default; legacy ``Always`` and ``Auto`` mean the same):
  any healthy Shared cache of the namespace for the template is reused. When
  none exists, the service plans ``<template>-<hash8(namespace)>`` *without*
  an owner reference, so it outlives the service and other services reuse it.
* ``Dedicated`` (legacy ``Never``): the service uses only its own cache,
  ``<template>-<service>-<hash8(service uid)>``, owned by the service and
  garbage-collected with it.

The deprecated ``spec.cacheModel`` flag is ignored.

Templates without model sources. Upstream creates a cache only when the
template's ``status.modelSources`` lists something. We always plan one: a cache
whose template lists no sources becomes Ready at once (its controller reports
``ArtifactsReady`` True ``NoCachesNeeded``), so the service path is the same
for every template and ``status.cache`` always names the cache in use.

Functions take wire-format dicts (camelCase) and return dicts or
:class:`~aim_core.reconcile.health.Health` values; none of them reads a client.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.reconcile.conditions import ready_message
from aim_core.reconcile.envvars import merge_env
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.labels import SERVICE_LABEL
from aim_core.reconcile.naming import dedicated_cache_name, sanitize_label_value, shared_cache_name
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.resources import TEMPLATE_CACHES
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView
from aim_core.templatecache import CacheView

SHARED = "Shared"
DEDICATED = "Dedicated"

_LEGACY_MODES = {"Always": SHARED, "Auto": SHARED, "Never": DEDICATED}


def caching_mode(service: Obj | ServiceView) -> str:
    """The service's effective caching mode: ``"Shared"`` or ``"Dedicated"``."""
    mode = (ServiceView.of(service).caching.get("mode") or "").strip()
    mode = _LEGACY_MODES.get(mode, mode)
    return DEDICATED if mode == DEDICATED else SHARED


def cache_owned(mode: str) -> bool:
    """Whether the service owns (and garbage-collects) the cache it plans in ``mode``."""
    return mode == DEDICATED


def cache_name(service: Obj, template_name: str, mode: str) -> str:
    """The name of the cache a service creates for ``template_name`` in ``mode`` (spec 2.5)."""
    view = ServiceView.of(service)
    if mode == DEDICATED:
        return dedicated_cache_name(template_name, view.name, view.uid)
    return shared_cache_name(template_name, view.namespace)


# ---------------------------------------------------------------- finding


def _state_rank(cache: CacheView) -> int:
    """Higher is healthier; a cache without a known status ranks as Pending."""
    try:
        return State(cache.state).priority
    except ValueError:
        return State.PENDING.priority


def find_cache(service: Obj, template_name: str, mode: str, caches_in_namespace: Iterable[Obj]) -> Obj | None:
    """The cache the service should use (the given object, not a copy), or None when it must plan one.

    Shared: caches with ``spec.templateName == template_name`` and mode Shared;
    the healthiest wins (ties: the name this service would create, then by name).
    Dedicated: the service's own cache, found by its name or, failing that, by a
    Dedicated cache of the template owned by the service. Caches being deleted
    are skipped: they are on their way out, and a new one takes their place.
    """
    uid = ServiceView.of(service).uid
    wanted = cache_name(service, template_name, mode)
    live = [(c, view) for c in caches_in_namespace if not (view := CacheView.of(c)).deleting]
    if mode == DEDICATED:
        by_name = next((c for c, view in live if view.name == wanted), None)
        if by_name is not None:
            return by_name
        owned = sorted(
            (
                (view.name, c)
                for c, view in live
                if view.dedicated and bool(uid) and uid in view.owner_uids and view.template_name == template_name
            ),
            key=lambda pair: pair[0],
        )
        return owned[0][1] if owned else None
    candidates = [(c, view) for c, view in live if view.template_name == template_name and view.mode == SHARED]
    if not candidates:
        return None
    best = min(candidates, key=lambda cv: (-_state_rank(cv[1]), cv[1].name != wanted, cv[1].name))
    return best[0]


# ---------------------------------------------------------------- planning


def desired_cache(service: Obj, template: Obj, template_scope: str, config: Obj, mode: str) -> dict[str, Any]:
    """The AIMTemplateCache a service creates when :func:`find_cache` found none (F64).

    :param template: the resolved AIMServiceTemplate or AIMClusterServiceTemplate.
    :param template_scope: ``"Namespace"`` or ``"Cluster"``, where the template was found.
    :param config: the resolved runtime config spec (:attr:`aim_core.runtimeconfig.Resolution.spec`).
    :param mode: the effective caching mode (:func:`caching_mode`).

    Plan it with ``owned=cache_owned(mode)``: a Shared cache has no owner.
    """
    view, tview = ServiceView.of(service), TemplateView.of(template)
    template_name = tview.name

    # Plain name-by-name replacement, as upstream: AIM_ENGINE_ARGS is copied verbatim, not
    # deep-merged, because this env feeds the artifact name hash (spec 2.5) and must give
    # upstream's names so artifacts an existing cluster already holds are reused.
    env = list(tview.env)
    if template_scope == "Namespace":  # cluster templates have no caching block
        env = merge_env(env, tview.caching_env or [], merge_engine_args=False)
    env = merge_env(env, list(view.env), merge_engine_args=False)
    storage_class = (
        view.storage.get("defaultStorageClassName")
        or (config.get("storage") or {}).get("defaultStorageClassName")
        or ""
    )

    cache_spec: dict[str, Any] = {"templateName": template_name, "templateScope": template_scope, "mode": mode}
    if storage_class:
        cache_spec["storageClassName"] = storage_class
    if view.runtime_config_name:
        cache_spec["runtimeConfigName"] = view.runtime_config_name
    if env:
        cache_spec["env"] = env
    cache_spec.update(cache_storage(view.storage))

    labels = {}
    service_label = sanitize_label_value(view.name)
    if service_label is not None:
        labels[SERVICE_LABEL] = service_label
    return {
        "apiVersion": TEMPLATE_CACHES.api_version,
        "kind": TEMPLATE_CACHES.kind,
        "metadata": {
            "name": cache_name(service, template_name, mode),
            "namespace": view.namespace or None,
            "labels": labels,
        },
        "spec": cache_spec,
    }


def cache_storage(storage: Obj) -> dict[str, Any]:
    """The service's own ``storage.pvcHeadroomPercent`` and ``storage.downloadFilter`` for its cache (issue 20).

    ``storage`` is the service's ``spec.storage`` (:attr:`ServiceView.storage`). Only what the service
    sets: the runtime config's values reach the artifacts through their runtime config. ``{}`` is a
    filter (everything).
    """
    out: dict[str, Any] = {}
    if storage.get("pvcHeadroomPercent") is not None:
        out["pvcHeadroomPercent"] = storage["pvcHeadroomPercent"]
    if isinstance(storage.get("downloadFilter"), Mapping):
        out["downloadFilter"] = dict(storage["downloadFilter"])
    return out


# ---------------------------------------------------------------- judging


def has_cache_volumes(isvc: Obj | None) -> bool:
    """Whether a live serving object (InferenceService, LeaderWorkerSet) mounts volume claims (a cache was in use, F65)."""
    spec = (isvc or {}).get("spec") or {}
    predictor = spec.get("predictor") or {}
    # a LeaderWorkerSet (a replica on several nodes) carries its volumes in its leader's pod template
    leader = ((spec.get("leaderWorkerTemplate") or {}).get("leaderTemplate") or {}).get("spec") or {}
    volumes = [*(predictor.get("volumes") or ()), *(leader.get("volumes") or ())]
    return any("persistentVolumeClaim" in volume for volume in volumes)


def cache_health(cache: Obj | None, live_isvc_has_cache_volumes: bool, mode: str) -> Health:
    """The service's ``Cache`` component (F65): reasons CacheReady, CacheNotReady, CacheFailed,
    CacheCreating and CacheLost.

    A running InferenceService with cache volumes whose cache is gone keeps
    serving from its volumes while the cache is planned again: the service is
    Degraded meanwhile (``CacheLost`` for a Shared cache, ``CacheCreating``
    for a Dedicated one).
    """
    if cache is None:
        name = "dedicated" if mode == DEDICATED else "shared"
        if live_isvc_has_cache_volumes:
            reason = "CacheCreating" if mode == DEDICATED else "CacheLost"
            return Health(
                State.DEGRADED,
                reason,
                f"the {name} template cache in use is gone; it is being created again "
                "and the running deployment keeps its volumes meanwhile",
            )
        return Health.progressing("CacheCreating", f"creating the {name} template cache")
    view = CacheView.of(cache)
    name, status = view.name, view.state
    detail = ready_message(cache)
    suffix = f": {detail}" if detail else ""
    if status == State.READY.value:
        return Health.ok("CacheReady", f"template cache {name} is ready")
    if status == State.PROGRESSING.value:
        return Health.progressing("CacheNotReady", f"template cache {name} is downloading{suffix}")
    if status == State.FAILED.value:
        return Health(State.FAILED, "CacheFailed", f"template cache {name} failed{suffix}")
    shown = status or "created"
    return Health.progressing("CacheCreating", f"template cache {name} is {shown}{suffix}")


def cache_status(cache: Obj | None) -> dict[str, Any] | None:
    """``status.cache`` of the service: the reference of a Ready cache, else None (leave the field out)."""
    view = CacheView.of(cache) if cache is not None else None
    if view is None or view.state != State.READY.value:
        return None
    ref = {
        "kind": TEMPLATE_CACHES.kind,
        "name": view.name,
        "namespace": view.namespace or "",
        "scope": "Namespace",
    }
    if view.uid:
        ref["uid"] = view.uid
    return {"templateCacheRef": ref}
