"""Controller for AIMTemplateCache: one AIMArtifact per model source of a template (F66-F69).

This module wires the kind to the engine (indexes, watches, observe, finalizer); the
decisions are pure functions in :mod:`aim_core.templatecache.plan`.

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

from typing import Any, ClassVar

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.naming import sanitize_label_value
from aim_core.reconcile.obj import Obj, meta_of, spec_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    NAMESPACES,
    RUNTIME_CONFIGS,
    TEMPLATE_CACHES,
    TEMPLATES,
)
from aim_core.runtime.controller import Context, Controller, Watch, namespace_going
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import config_name, resolve
from aim_core.templatecache.plan import Observed, cleanup_targets, find_template, plan_cache
from aim_core.templatecache.sources import cache_sources
from aim_core.templatecache.view import CacheView

BY_TEMPLATE = "template-cache:by-template"  # caches by spec.templateName
BY_CONFIG = "template-cache:by-config"  # caches by runtime config name
BY_ARTIFACT = "template-cache:by-artifact"  # caches by (namespace, artifact in status.artifacts)
ARTIFACTS_BY_SOURCE = "template-cache:by-source"  # artifacts by (namespace, spec.sourceUri)
ARTIFACTS_BY_CACHE = "template-cache:by-cache-label"  # artifacts by (namespace, template-cache.name label)

# ---------------------------------------------------------------- controller


class TemplateCacheController(Controller):
    name: ClassVar[str] = "template-cache"
    resource: ClassVar[ResourceRef] = TEMPLATE_CACHES
    finalizer: ClassVar[str | None] = lbl.TEMPLATE_CACHE_FINALIZER

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(TEMPLATE_CACHES, BY_TEMPLATE, lambda o: [CacheView.of(o).template_name])
        store.add_index(TEMPLATE_CACHES, BY_CONFIG, lambda o: [config_name(o.get("spec"))])
        store.add_index(
            TEMPLATE_CACHES,
            BY_ARTIFACT,
            lambda o: [(o["metadata"].get("namespace"), name) for name in (CacheView.of(o).artifacts or {})],
        )
        store.add_index(
            ARTIFACTS,
            ARTIFACTS_BY_SOURCE,
            lambda o: [(o["metadata"].get("namespace"), spec_of(o).get("sourceUri") or "")],
        )
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
        store, ns, spec = ctx.store, obj["metadata"].get("namespace"), spec_of(obj)
        name = CacheView.of(obj).template_name
        template, scope = find_template(spec, store.get(TEMPLATES, ns, name), store.get(CLUSTER_TEMPLATES, None, name))
        config = config_name(spec)
        resolution = resolve(
            config, store.get(RUNTIME_CONFIGS, ns, config), store.get(CLUSTER_RUNTIME_CONFIGS, None, config)
        )
        artifacts: dict[str, Obj] = {}
        for source in cache_sources(obj, template):
            for artifact in store.by_index(ARTIFACTS, ARTIFACTS_BY_SOURCE, (ns, source.get("sourceUri") or "")):
                artifacts[artifact["metadata"]["name"]] = artifact
        return Observed(template, scope, resolution, tuple(artifacts.values()))

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_cache(obj, observed)

    async def finalize(self, ctx: Context, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        ns = meta.get("namespace")
        namespace = ctx.store.get(NAMESPACES, None, ns) if ns else None
        label = sanitize_label_value(meta["name"])
        labelled = ctx.store.by_index(ARTIFACTS, ARTIFACTS_BY_CACHE, (ns, label)) if label else []
        doomed = cleanup_targets(obj, namespace, labelled)
        # The namespace watch may not have brought the namespace's Terminating yet when the namespace
        # controller's deletion of its content arrives: read it before deleting anything (F15).
        if doomed and ns and namespace_going(await ctx.kube.get(NAMESPACES, None, ns)):
            return
        for name in doomed:
            await ctx.kube.delete(ARTIFACTS, ns, name)


def _cache_label_keys(artifact: Obj) -> list[tuple[str | None, str]]:
    meta = meta_of(artifact)
    value = (meta.get("labels") or {}).get(lbl.TEMPLATE_CACHE_NAME_LABEL)
    return [(meta.get("namespace"), value)] if value else []
