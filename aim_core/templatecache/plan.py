"""AIMTemplateCache's decisions: which template, which artifacts to reuse or create, its status (F66-F69). Pure.

:func:`plan_cache` is the whole decision for one cache, from what
:class:`Observed` holds; :mod:`aim_core.templatecache.controller` reads the
store and applies the plan. What the rules are is in the controller's
docstring.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from aim_core.reconcile import labels as lbl
from aim_core.reconcile.envvars import merge_env
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.naming import artifact_name, sanitize_label_value
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import ARTIFACTS, CLUSTER_TEMPLATES, TEMPLATES
from aim_core.runtime.controller import namespace_going
from aim_core.runtimeconfig import Resolution
from aim_core.templatecache.sources import cache_sources
from aim_core.templatecache.view import CacheView

_ERROR_STATES = (State.FAILED, State.DEGRADED, State.NOT_AVAILABLE)


@attrs.frozen
class Observed:
    """What a cache reconcile reads: its template, runtime config and candidate artifacts."""

    template: Obj | None
    template_scope: str  # "Namespace" or "Cluster" where it was found; "" when not found
    config: Resolution
    artifacts: tuple[Obj, ...] = ()  # artifacts of the namespace with a sourceUri the template needs


def find_template(spec: Obj, namespaced: Obj | None, cluster: Obj | None) -> tuple[Obj | None, str]:
    """The template a cache uses and its scope, by ``spec.templateScope`` (F66)."""
    scope = spec.get("templateScope") or ""
    if scope != "Cluster" and namespaced is not None:
        return namespaced, "Namespace"
    if scope != "Namespace" and cluster is not None:
        return cluster, "Cluster"
    return None, ""


def _state(value: str | None, default: State = State.PENDING) -> State:
    """The State named by a status string; ``default`` when empty or unknown."""
    try:
        return State(value or "")
    except ValueError:
        return default


def _ready_condition(obj: Obj) -> Obj | None:
    return next((c for c in status_of(obj).get("conditions") or () if c.get("type") == "Ready"), None)


def template_health(spec: Obj, template: Obj | None, scope: str) -> Health:
    """The ``ServiceTemplate`` component: missing → ReferenceNotFound, else mirrors the template."""
    if template is None:
        where = {"Cluster": "AIMClusterServiceTemplate", "Namespace": "AIMServiceTemplate"}.get(
            spec.get("templateScope") or "", "AIMServiceTemplate or AIMClusterServiceTemplate"
        )
        return Health.error(
            Category.MISSING_UPSTREAM,
            "ReferenceNotFound",
            f"{where} {spec.get('templateName')!r} not found: create it or fix spec.templateName",
            upstream=True,
        )
    kind = "AIMServiceTemplate" if scope == "Namespace" else "AIMClusterServiceTemplate"
    name = template["metadata"]["name"]
    status = status_of(template).get("status")
    ready = _ready_condition(template)
    if ready is None:
        return Health(_state(status), "ResourceFound", f"{kind} {name} is {status or 'Pending'}", upstream=True)
    if ready.get("status") == "True":
        return Health.ok(ready.get("reason") or "Ready", f"{kind} {name} is ready", upstream=True)
    state = _state(status, State.FAILED)
    if state in (State.READY, State.RUNNING):
        state = State.PROGRESSING
    return Health(
        state, ready.get("reason") or state.value, ready.get("message") or f"{kind} {name} is not ready", upstream=True
    )


def _owned_by(obj: Obj, uid: str) -> bool:
    return any(r.get("uid") == uid for r in meta_of(obj).get("ownerReferences") or ())


def _acceptable(artifact: Obj, cache: CacheView) -> bool:
    """F67: may this cache reuse ``artifact`` (sourceUri already matched)?"""
    if not status_of(artifact).get("status"):
        return False
    if cache.storage_class and spec_of(artifact).get("storageClassName") != cache.storage_class:
        return False
    for key, value in cache.storage.items():  # a cache that sets them takes only artifacts made the same way
        if spec_of(artifact).get(key) != value:
            return False
    if cache.dedicated:
        return _owned_by(artifact, cache.uid)
    return not meta_of(artifact).get("ownerReferences")


def _rank(artifact: Obj, wanted_name: str) -> tuple[int, bool, str]:
    name = artifact["metadata"]["name"]
    return (-_state(status_of(artifact).get("status")).priority, name != wanted_name, name)


def desired_artifact(cache: Obj, template: Obj, scope: str, source: Obj, index: int) -> dict[str, Any]:
    """The AIMArtifact a cache creates for a model source nothing matched (F67)."""
    view = CacheView.of(cache)
    env = merge_env(list(view.env), source.get("env") or [])
    storage_class = view.storage_class
    storage = dict(view.storage)
    name = artifact_name(
        source["sourceUri"], env, storage_class, dedicated_to=view.name if view.dedicated else "", storage=storage
    )
    labels = {lbl.TEMPLATE_CREATED_LABEL: "true", lbl.TEMPLATE_SCOPE_LABEL: scope, lbl.TEMPLATE_INDEX_LABEL: str(index)}
    for key, value in (
        (lbl.TEMPLATE_NAME_LABEL, template["metadata"]["name"]),
        (lbl.TEMPLATE_CACHE_NAME_LABEL, view.name),
    ):
        clean = sanitize_label_value(value)
        if clean is not None:
            labels[key] = clean
    art_spec: dict[str, Any] = {"sourceUri": source["sourceUri"]}
    optional = {
        "modelId": source.get("modelId"),
        "size": source.get("size"),
        "storageClassName": storage_class,
        "env": env,
        "runtimeConfigName": view.runtime_config_name,
        "modelDownloadImage": view.download_image,
        "imagePullSecrets": view.image_pull_secrets,
    }
    art_spec.update({k: v for k, v in optional.items() if v})
    art_spec.update(storage)
    return {
        "apiVersion": ARTIFACTS.api_version,
        "kind": ARTIFACTS.kind,
        "metadata": {"name": name, "namespace": view.namespace, "labels": labels},
        "spec": art_spec,
    }


@attrs.frozen
class _Match:
    source: Obj
    artifact: Obj | None  # the artifact in use, if any
    desired: dict[str, Any] | None = None  # the artifact to create when none exists


def match_sources(cache: Obj, template: Obj, scope: str, artifacts: Iterable[Obj]) -> list[_Match]:
    """Pair each model source of the template with an artifact to reuse, or one to create."""
    view = CacheView.of(cache)
    sources = cache_sources(cache, template)
    by_uri: dict[str, list[Obj]] = {}
    for artifact in artifacts:
        by_uri.setdefault(spec_of(artifact).get("sourceUri") or "", []).append(artifact)
    matches, missing = [], 0
    for source in sources:
        candidates = by_uri.get(source.get("sourceUri") or "", [])
        desired = desired_artifact(cache, template, scope, source, missing)
        wanted = desired["metadata"]["name"]
        usable = [a for a in candidates if _acceptable(a, view)]
        existing = next((a for a in candidates if a["metadata"]["name"] == wanted), None)
        if usable:
            matches.append(_Match(source, min(usable, key=lambda a: _rank(a, wanted))))
        elif existing is not None:  # created already; its controller has not reported yet
            matches.append(_Match(source, existing))
        else:
            matches.append(_Match(source, None, desired))
            missing += 1
    return matches


def _artifact_state(artifact: Obj) -> str:
    return str(status_of(artifact).get("status") or "")


def artifacts_health(template: Obj | None, template_ready: bool, matches: Sequence[_Match]) -> Health:
    """The ``Artifacts`` component (F68, with ``NoCachesNeeded`` for templates without sources)."""
    if template is None or (not matches and not template_ready):
        return Health(
            State.PENDING, "WaitingForTemplate", "the model sources are known once the template is found and ready"
        )
    if not matches:
        return Health.ok(
            "NoCachesNeeded", f"template {template['metadata']['name']} lists no model sources; nothing to download"
        )
    used = [m.artifact for m in matches if m.artifact is not None and _artifact_state(m.artifact)]
    worst = min(used, key=lambda a: _state(_artifact_state(a)).priority, default=None)
    worst_state = _state(_artifact_state(worst)) if worst is not None else State.READY
    if worst is not None and worst_state in _ERROR_STATES:
        return _worst_artifact(worst, worst_state)
    waiting = [m.source.get("sourceUri", "") for m in matches if m.artifact is None or not _artifact_state(m.artifact)]
    if waiting:
        return Health.progressing("CreatingCaches", "creating artifacts for " + ", ".join(waiting))
    if worst_state is State.READY:
        return Health.ok("AllCachesReady", f"all {len(matches)} artifacts are ready")
    assert worst is not None  # not Ready, so some artifact is worse
    return _worst_artifact(worst, worst_state)


def _worst_artifact(artifact: Obj, state: State) -> Health:
    ready = _ready_condition(artifact) or {}
    name = artifact["metadata"]["name"]
    detail = ready.get("message") or f"artifact {name} is {state.value}"
    reason = str(ready["reason"]) if ready.get("status") == "False" and ready.get("reason") else "CachesNotReady"
    return Health(state, reason, f"One or more caches are not ready: {detail}")


def artifacts_status(old: Obj | None, matches: Sequence[_Match]) -> dict[str, Any] | None:
    """``status.artifacts`` by artifact name; entries that went away map to None (merge-patch removal)."""
    new: dict[str, Any] = {}
    for m in matches:
        if m.artifact is None:
            continue
        art, status = m.artifact, status_of(m.artifact)
        entry = {
            "name": art["metadata"]["name"],
            "uid": art["metadata"].get("uid") or "",
            "model": m.source.get("modelId") or spec_of(art).get("modelId") or "",
            "status": status.get("status") or State.PENDING.value,
        }
        if status.get("persistentVolumeClaim"):
            entry["persistentVolumeClaim"] = status["persistentVolumeClaim"]
        new[entry["name"]] = entry
    stale = {name: None for name in (old or {}) if name not in new}
    return {**new, **stale} or None


def cleanup_targets(cache: Obj, namespace: Obj | None, labelled: Iterable[Obj]) -> list[str]:
    """Artifacts the finalizer deletes: labelled with the cache and not Ready; none if the namespace is going (F15)."""
    if namespace_going(namespace):
        return []
    label = sanitize_label_value(CacheView.of(cache).name)
    return sorted(
        a["metadata"]["name"]
        for a in labelled
        if (meta_of(a).get("labels") or {}).get(lbl.TEMPLATE_CACHE_NAME_LABEL) == label
        and _artifact_state(a) != State.READY.value
    )


def plan_cache(obj: Obj, observed: Observed) -> Plan:
    """The whole decision for one cache: components, the artifacts to create, ``status``."""
    plan = Plan()
    cache = CacheView.of(obj)
    config_health = observed.config.health()
    plan.component("RuntimeConfig", config_health)
    template_state = template_health(spec_of(obj), observed.template, observed.template_scope)
    plan.component("ServiceTemplate", template_state)
    matches: list[_Match] = []
    if observed.template is not None:
        matches = match_sources(obj, observed.template, observed.template_scope, observed.artifacts)
    plan.component("Artifacts", artifacts_health(observed.template, template_state.ready, matches))

    blocked = any(h.category is not None and h.category.blocks_apply for h in (config_health, template_state))
    for m in matches:
        if m.desired is not None and not blocked:
            plan.want(ARTIFACTS, m.desired, owned=cache.dedicated)

    plan.labels = observed.config.view.labels
    artifacts = artifacts_status(cache.artifacts, matches)
    if artifacts is not None:
        plan.status["artifacts"] = artifacts
    if observed.template is not None:
        plan.status["resolvedTemplateKind"] = observed.template.get("kind") or (
            TEMPLATES.kind if observed.template_scope == "Namespace" else CLUSTER_TEMPLATES.kind
        )
    if observed.config.reference is not None:
        plan.status["resolvedRuntimeConfig"] = observed.config.reference
    return plan
