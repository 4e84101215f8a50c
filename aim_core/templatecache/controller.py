"""Controller for AIMTemplateCache: one AIMArtifact per model source of a template (F66-F69).

A cache names a template (``spec.templateName``, looked up by
``spec.templateScope``: ``Cluster`` → only AIMClusterServiceTemplate,
``Namespace`` → only AIMServiceTemplate in the cache's namespace, anything
else → namespace first, then cluster). For every entry of the template's
``status.modelSources`` the cache reuses an AIMArtifact of its namespace or
creates one:

* reuse: same ``sourceUri``, a non-empty status, the same storage class when
  the cache sets one, and the right ownership (a Shared cache takes only
  unowned artifacts, a Dedicated cache only its own); the best status wins;
* creation: name per spec 2.5 (hash over source, merged env, storage class
  and, for Dedicated caches, the cache name), labels ``template-created``,
  ``aim.eai.amd.com/template.{name,scope,index}`` and
  ``aim.eai.amd.com/template-cache.name``; unowned for a Shared cache,
  owned by the cache for a Dedicated one. An artifact of that name that
  already exists is never re-applied: several Shared caches may want the same
  artifact, and re-applying it would make them fight over its labels.

Conditions: ``RuntimeConfigReady``, ``ServiceTemplateReady`` (mirrors the
template's ``Ready`` condition; a missing template is ``ReferenceNotFound``
and fails the cache) and ``ArtifactsReady`` (``CreatingCaches``,
``AllCachesReady``, the worst artifact's reason, ``CachesNotReady``).

Deviation: a template whose status lists no model sources gives
``ArtifactsReady`` True ``NoCachesNeeded`` and a Ready cache (upstream reports
False ``NoCaches``), so every service can wait for its cache the same way.

Finalizer ``aim.eai.amd.com/artifactcleanup`` (F69, Q23): on deletion the
artifacts labelled with this cache that are not Ready are deleted; Ready ones
stay for reuse. When the namespace is terminating or gone nothing is deleted,
so namespace deletion is never blocked (F15).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from aim_core.runtime.controller import Context, Controller, Watch, namespace_going
from aim_core.reconcile.health import Category, Health, State
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.envvars import merge_env
from aim_core.reconcile.naming import artifact_name, sanitize_label_value
from aim_core.reconcile.plan import LabelPolicy, Plan
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    NAMESPACES,
    RUNTIME_CONFIGS,
    TEMPLATE_CACHES,
    TEMPLATES,
)
from aim_core.runtimeconfig.resolve import Resolution, config_name, resolve
from aim_core.templatecache.sources import STORAGE_KEYS, cache_sources
from aim_core.runtime.store import ObjectKey, Store

BY_TEMPLATE = "template-cache:by-template"  # caches by spec.templateName
BY_CONFIG = "template-cache:by-config"  # caches by runtime config name
BY_ARTIFACT = "template-cache:by-artifact"  # caches by (namespace, artifact in status.artifacts)
ARTIFACTS_BY_SOURCE = "template-cache:by-source"  # artifacts by (namespace, spec.sourceUri)
ARTIFACTS_BY_CACHE = "template-cache:by-cache-label"  # artifacts by (namespace, template-cache.name label)

SHARED, DEDICATED = "Shared", "Dedicated"
_ERROR_STATES = (State.FAILED, State.DEGRADED, State.NOT_AVAILABLE)

Obj = Mapping[str, Any]


@attrs.frozen
class Observed:
    """What a cache reconcile reads: its template, runtime config and candidate artifacts."""

    template: Obj | None
    template_scope: str  # "Namespace" or "Cluster" where it was found; "" when not found
    config: Resolution
    artifacts: tuple[Obj, ...] = ()  # artifacts of the namespace with a sourceUri the template needs


# ---------------------------------------------------------------- pure helpers


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
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)


def template_health(spec: Obj, template: Obj | None, scope: str) -> Health:
    """The ``ServiceTemplate`` component: missing → ReferenceNotFound, else mirrors the template."""
    if template is None:
        where = {"Cluster": "AIMClusterServiceTemplate", "Namespace": "AIMServiceTemplate"}.get(
            spec.get("templateScope") or "", "AIMServiceTemplate or AIMClusterServiceTemplate")
        return Health.error(Category.MISSING_UPSTREAM, "ReferenceNotFound",
                            f"{where} {spec.get('templateName')!r} not found: create it or fix spec.templateName",
                            upstream=True)
    kind = "AIMServiceTemplate" if scope == "Namespace" else "AIMClusterServiceTemplate"
    name = template["metadata"]["name"]
    status = (template.get("status") or {}).get("status")
    ready = _ready_condition(template)
    if ready is None:
        return Health(_state(status), "ResourceFound", f"{kind} {name} is {status or 'Pending'}", upstream=True)
    if ready.get("status") == "True":
        return Health.ok(ready.get("reason") or "Ready", f"{kind} {name} is ready", upstream=True)
    state = _state(status, State.FAILED)
    if state in (State.READY, State.RUNNING):
        state = State.PROGRESSING
    return Health(state, ready.get("reason") or state.value, ready.get("message") or f"{kind} {name} is not ready",
                  upstream=True)


def _owned_by(obj: Obj, uid: str) -> bool:
    return any(r.get("uid") == uid for r in (obj.get("metadata") or {}).get("ownerReferences") or ())


def _acceptable(artifact: Obj, cache: Obj) -> bool:
    """F67: may this cache reuse ``artifact`` (sourceUri already matched)?"""
    spec, art_spec = cache.get("spec") or {}, artifact.get("spec") or {}
    if not (artifact.get("status") or {}).get("status"):
        return False
    if spec.get("storageClassName") and art_spec.get("storageClassName") != spec["storageClassName"]:
        return False
    for key in STORAGE_KEYS:  # a cache that sets them takes only artifacts made the same way (issue 20)
        if spec.get(key) is not None and art_spec.get(key) != spec[key]:
            return False
    owners = (artifact.get("metadata") or {}).get("ownerReferences") or ()
    if (spec.get("mode") or SHARED) == DEDICATED:
        return _owned_by(artifact, cache["metadata"].get("uid") or "")
    return not owners


def _rank(artifact: Obj, wanted_name: str) -> tuple[int, bool, str]:
    name = artifact["metadata"]["name"]
    return (-_state((artifact.get("status") or {}).get("status")).priority, name != wanted_name, name)


def desired_artifact(cache: Obj, template: Obj, scope: str, source: Obj, index: int) -> dict[str, Any]:
    """The AIMArtifact a cache creates for a model source nothing matched (F67)."""
    meta, spec = cache["metadata"], cache.get("spec") or {}
    env = merge_env(spec.get("env") or [], source.get("env") or [])
    storage_class = spec.get("storageClassName") or ""
    dedicated = (spec.get("mode") or SHARED) == DEDICATED
    storage = {k: spec[k] for k in STORAGE_KEYS if spec.get(k) is not None}
    name = artifact_name(source["sourceUri"], env, storage_class, dedicated_to=meta["name"] if dedicated else "",
                         storage=storage)
    labels = {lbl.TEMPLATE_CREATED_LABEL: "true", lbl.TEMPLATE_SCOPE_LABEL: scope, lbl.TEMPLATE_INDEX_LABEL: str(index)}
    for key, value in ((lbl.TEMPLATE_NAME_LABEL, template["metadata"]["name"]),
                       (lbl.TEMPLATE_CACHE_NAME_LABEL, meta["name"])):
        clean = sanitize_label_value(value)
        if clean is not None:
            labels[key] = clean
    art_spec: dict[str, Any] = {"sourceUri": source["sourceUri"]}
    optional = {"modelId": source.get("modelId"), "size": source.get("size"), "storageClassName": storage_class,
                "env": env, "runtimeConfigName": spec.get("runtimeConfigName"),
                "modelDownloadImage": spec.get("downloadImage"), "imagePullSecrets": spec.get("imagePullSecrets")}
    art_spec.update({k: v for k, v in optional.items() if v})
    art_spec.update(storage)
    return {"apiVersion": ARTIFACTS.api_version, "kind": ARTIFACTS.kind,
            "metadata": {"name": name, "namespace": meta.get("namespace"), "labels": labels}, "spec": art_spec}


@attrs.frozen
class _Match:
    source: Obj
    artifact: Obj | None  # the artifact in use, if any
    desired: dict[str, Any] | None = None  # the artifact to create when none exists


def match_sources(cache: Obj, template: Obj, scope: str, artifacts: Iterable[Obj]) -> list[_Match]:
    """Pair each model source of the template with an artifact to reuse, or one to create."""
    sources = cache_sources(cache, template)
    by_uri: dict[str, list[Obj]] = {}
    for artifact in artifacts:
        by_uri.setdefault((artifact.get("spec") or {}).get("sourceUri") or "", []).append(artifact)
    matches, missing = [], 0
    for source in sources:
        candidates = by_uri.get(source.get("sourceUri") or "", [])
        desired = desired_artifact(cache, template, scope, source, missing)
        wanted = desired["metadata"]["name"]
        usable = [a for a in candidates if _acceptable(a, cache)]
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
    return (artifact.get("status") or {}).get("status") or ""


def artifacts_health(template: Obj | None, template_ready: bool, matches: Sequence[_Match]) -> Health:
    """The ``Artifacts`` component (F68, with ``NoCachesNeeded`` for templates without sources)."""
    if template is None or (not matches and not template_ready):
        return Health(State.PENDING, "WaitingForTemplate",
                      "the model sources are known once the template is found and ready")
    if not matches:
        return Health.ok("NoCachesNeeded", f"template {template['metadata']['name']} lists no model sources; "
                                           "nothing to download")
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
    return _worst_artifact(worst, worst_state)


def _worst_artifact(artifact: Obj, state: State) -> Health:
    ready = _ready_condition(artifact) or {}
    name = artifact["metadata"]["name"]
    detail = ready.get("message") or f"artifact {name} is {state.value}"
    reason = ready.get("reason") if ready.get("status") == "False" and ready.get("reason") else "CachesNotReady"
    return Health(state, reason, f"One or more caches are not ready: {detail}")


def artifacts_status(old: Obj | None, matches: Sequence[_Match]) -> dict[str, Any] | None:
    """``status.artifacts`` by artifact name; entries that went away map to None (merge-patch removal)."""
    new: dict[str, Any] = {}
    for m in matches:
        if m.artifact is None:
            continue
        art, status = m.artifact, m.artifact.get("status") or {}
        entry = {"name": art["metadata"]["name"], "uid": art["metadata"].get("uid") or "",
                 "model": m.source.get("modelId") or (art.get("spec") or {}).get("modelId") or "",
                 "status": status.get("status") or State.PENDING.value}
        if status.get("persistentVolumeClaim"):
            entry["persistentVolumeClaim"] = status["persistentVolumeClaim"]
        new[entry["name"]] = entry
    stale = {name: None for name in (old or {}) if name not in new}
    return {**new, **stale} or None



def cleanup_targets(cache: Obj, namespace: Obj | None, labelled: Iterable[Obj]) -> list[str]:
    """Artifacts the finalizer deletes: labelled with the cache and not Ready; none if the namespace is going (F15)."""
    if namespace_going(namespace):
        return []
    label = sanitize_label_value(cache["metadata"]["name"])
    return sorted(a["metadata"]["name"] for a in labelled
                  if ((a.get("metadata") or {}).get("labels") or {}).get(lbl.TEMPLATE_CACHE_NAME_LABEL) == label
                  and _artifact_state(a) != State.READY.value)


# ---------------------------------------------------------------- controller


class TemplateCacheController(Controller):
    name: ClassVar[str] = "template-cache"
    resource: ClassVar[ResourceRef] = TEMPLATE_CACHES
    finalizer: ClassVar[str | None] = lbl.TEMPLATE_CACHE_FINALIZER

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(TEMPLATE_CACHES, BY_TEMPLATE, lambda o: [(o.get("spec") or {}).get("templateName") or ""])
        store.add_index(TEMPLATE_CACHES, BY_CONFIG, lambda o: [config_name(o.get("spec"))])
        store.add_index(TEMPLATE_CACHES, BY_ARTIFACT, lambda o: [
            (o["metadata"].get("namespace"), name) for name in ((o.get("status") or {}).get("artifacts") or {})])
        store.add_index(ARTIFACTS, ARTIFACTS_BY_SOURCE, lambda o: [
            (o["metadata"].get("namespace"), (o.get("spec") or {}).get("sourceUri") or "")])
        store.add_index(ARTIFACTS, ARTIFACTS_BY_CACHE, _cache_label_keys)

    def watches(self) -> list[Watch]:
        return [
            Watch(TEMPLATES, lambda o: self._by(BY_TEMPLATE, o, namespaced=True)),
            Watch(CLUSTER_TEMPLATES, lambda o: self._by(BY_TEMPLATE, o, namespaced=False)),
            Watch(RUNTIME_CONFIGS, lambda o: self._by(BY_CONFIG, o, namespaced=True)),
            Watch(CLUSTER_RUNTIME_CONFIGS, lambda o: self._by(BY_CONFIG, o, namespaced=False)),
            Watch(ARTIFACTS, self._caches_of_artifact),
        ]

    def extra_resources(self) -> list[ResourceRef]:
        return [NAMESPACES]

    def _by(self, index: str, obj: Obj, *, namespaced: bool) -> list[ObjectKey]:
        keys = self._store.keys_by_index(TEMPLATE_CACHES, index, obj["metadata"]["name"])
        if namespaced:
            keys = {k for k in keys if k[0] == obj["metadata"].get("namespace")}
        return sorted(keys, key=str)

    def _caches_of_artifact(self, artifact: Obj) -> list[ObjectKey]:
        meta = artifact["metadata"]
        ns = meta.get("namespace")
        keys = set(self._store.keys_by_index(TEMPLATE_CACHES, BY_ARTIFACT, (ns, meta["name"])))
        keys |= {(ns, name) for _, name in _cache_label_keys(artifact)}
        keys |= {(ns, r["name"]) for r in meta.get("ownerReferences") or () if r.get("kind") == TEMPLATE_CACHES.kind}
        return sorted(keys, key=str)

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, ns, spec = ctx.store, obj["metadata"].get("namespace"), obj.get("spec") or {}
        name = spec.get("templateName") or ""
        template, scope = find_template(spec, store.get(TEMPLATES, ns, name), store.get(CLUSTER_TEMPLATES, None, name))
        config = config_name(spec)
        resolution = resolve(config, store.get(RUNTIME_CONFIGS, ns, config),
                             store.get(CLUSTER_RUNTIME_CONFIGS, None, config))
        artifacts: dict[str, Obj] = {}
        for source in cache_sources(obj, template):
            for artifact in store.by_index(ARTIFACTS, ARTIFACTS_BY_SOURCE, (ns, source.get("sourceUri") or "")):
                artifacts[artifact["metadata"]["name"]] = artifact
        return Observed(template, scope, resolution, tuple(artifacts.values()))

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        plan = Plan()
        spec = obj.get("spec") or {}
        config_health = observed.config.health()
        plan.component("RuntimeConfig", config_health)
        template_state = template_health(spec, observed.template, observed.template_scope)
        plan.component("ServiceTemplate", template_state)
        matches: list[_Match] = []
        if observed.template is not None:
            matches = match_sources(obj, observed.template, observed.template_scope, observed.artifacts)
        plan.component("Artifacts", artifacts_health(observed.template, template_state.ready, matches))

        blocked = any(h.category is not None and h.category.blocks_apply for h in (config_health, template_state))
        mode = spec.get("mode") or SHARED
        for m in matches:
            if m.desired is not None and not blocked:
                plan.want(ARTIFACTS, m.desired, owned=mode == DEDICATED)

        propagation = observed.config.spec.get("labelPropagation") or {}
        plan.labels = LabelPolicy(bool(propagation.get("enabled")), tuple(propagation.get("match") or ()))
        artifacts = artifacts_status((obj.get("status") or {}).get("artifacts"), matches)
        if artifacts is not None:
            plan.status["artifacts"] = artifacts
        if observed.template is not None:
            plan.status["resolvedTemplateKind"] = observed.template.get("kind") or (
                TEMPLATES.kind if observed.template_scope == "Namespace" else CLUSTER_TEMPLATES.kind)
        if observed.config.reference is not None:
            plan.status["resolvedRuntimeConfig"] = observed.config.reference
        return plan

    async def finalize(self, ctx: Context, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ns = meta.get("namespace")
        namespace = ctx.store.get(NAMESPACES, None, ns) if ns else None
        label = sanitize_label_value(meta["name"])
        labelled = ctx.store.by_index(ARTIFACTS, ARTIFACTS_BY_CACHE, (ns, label)) if label else []
        for name in cleanup_targets(obj, namespace, labelled):
            await ctx.kube.delete(ARTIFACTS, ns, name)


def _cache_label_keys(artifact: Obj) -> list[tuple[str | None, str]]:
    meta = artifact.get("metadata") or {}
    value = (meta.get("labels") or {}).get(lbl.TEMPLATE_CACHE_NAME_LABEL)
    return [(meta.get("namespace"), value)] if value else []
