"""Controller for AIMArtifact: indexes, watches and the observe step (F70-F76).

The plan is pure and lives in :mod:`aim_core.artifact.plan`. Here:

* the artifact's Jobs, their pods and its PVC come back to it through the
  ``aim.eai.amd.com/cache.name`` label; the status-updater RoleBinding of a
  namespace re-triggers every artifact of that namespace when it appears or
  goes (F72);
* runtime configs re-trigger the artifacts that use them; a change of any
  cluster config (quota) or of another artifact's storage (deleted, sized,
  Ready or not) re-triggers the artifacts waiting for quota;
* services and template caches re-trigger the artifacts they use, which
  keeps ``status.lastUsed`` and eviction eligibility current.

Observe reads the store, and the API only for what the store does not hold:
the log of a finished size check, the log of a failed pod (F12) and the
Events of pending pods and claims.
"""

from __future__ import annotations

import datetime
import os
import time
from collections.abc import Iterable
from typing import Any, ClassVar

import attrs

from aim_core.api.artifact import DEFAULT_DOWNLOAD_IMAGE
from aim_core.artifact import children
from aim_core.artifact.keys import (
    CACHE_BY_ARTIFACT,
    POD_BY_CLAIM,
    SVC_BY_ADAPTER,
    SVC_BY_CACHE,
    allocated_of,
    cache_label_keys,
    download_finished,
    is_deleting,
    namespace_of,
    parse_quota,
    pvc_claims,
    service_uses,
    storage_fields,
    waiting_for_storage,
)
from aim_core.artifact.observed import Observed, Quota, Usage
from aim_core.artifact.plan import plan_artifact
from aim_core.artifact.progress import discovered_size
from aim_core.artifact.usage import in_use, usage
from aim_core.artifact.validation import spec_size
from aim_core.artifact.view import ArtifactView
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile import labels as lbl
from aim_core.reconcile.errors import describe
from aim_core.reconcile.naming import (
    artifact_pvc_name,
    check_size_job_name,
    download_job_name,
    sanitize_label_value,
)
from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.redaction import redact
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_RUNTIME_CONFIGS,
    EVENTS,
    JOBS,
    PODS,
    PVCS,
    ROLE_BINDINGS,
    RUNTIME_CONFIGS,
    SERVICES,
    TEMPLATE_CACHES,
)
from aim_core.reconcile.workloads import LOG_TAIL_LINES, pod_failed
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.eventstore import add_index as index_events
from aim_core.runtime.eventstore import events_about, involved
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import config_name, resolve
from aim_core.service import adapter_artifacts

DOWNLOAD_IMAGE_ENV = "AIM_ARTIFACT_DOWNLOAD_IMAGE"

BY_LABEL = "artifact:by-label"  # artifacts by (namespace, cache.name label value)
BY_NAMESPACE = "artifact:by-namespace"
BY_CONFIG = "artifact:by-config"  # (namespace, config) and (None, config)
WAITING = "artifact:waiting-for-quota"
CHILD_BY_LABEL = "artifact:child-by-label"  # Jobs, pods, PVCs by (namespace, cache.name label)
CACHE_BY_TEMPLATE = "artifact:cache-by-template"  # template caches by (namespace, spec.templateName)
BY_CLAIM = "artifact:by-claim"  # artifacts by (namespace, status.persistentVolumeClaim)


class ArtifactController(Controller):
    name: ClassVar[str] = "artifact"
    resource: ClassVar[ResourceRef] = ARTIFACTS

    def __init__(self, default_image: str | None = None) -> None:
        self.default_image = default_image or os.environ.get(DOWNLOAD_IMAGE_ENV, "").strip() or DEFAULT_DOWNLOAD_IMAGE
        self._store: Store | None = None
        # Quota decisions made but not yet in the store (issue 18): storage planned for an artifact whose
        # status.allocatedSize is not stored yet, and artifacts chosen for eviction whose deletion is not seen yet.
        self._reserved: dict[tuple[str, str], tuple[int, float]] = {}
        self._evicting: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------ indexes

    def setup(self, store: Store) -> None:
        self._store = store
        index_events(store)
        store.add_index(ARTIFACTS, BY_LABEL, lambda a: [(namespace_of(a), sanitize_label_value(a["metadata"]["name"]))])
        store.add_index(ARTIFACTS, BY_NAMESPACE, lambda a: [namespace_of(a)])
        store.add_index(
            ARTIFACTS,
            BY_CONFIG,
            lambda a: [(namespace_of(a), config_name(a.get("spec"))), (None, config_name(a.get("spec")))],
        )
        store.add_index(ARTIFACTS, WAITING, lambda a: [True] if waiting_for_storage(a) else [])
        store.add_index(
            ARTIFACTS,
            BY_CLAIM,
            lambda a: (
                [(namespace_of(a), status_of(a).get("persistentVolumeClaim"))]
                if status_of(a).get("persistentVolumeClaim")
                else []
            ),
        )
        store.add_index(PODS, POD_BY_CLAIM, pvc_claims)
        for ref in (JOBS, PODS, PVCS):
            store.add_index(ref, CHILD_BY_LABEL, cache_label_keys)
        store.add_index(
            TEMPLATE_CACHES,
            CACHE_BY_ARTIFACT,
            lambda c: [(namespace_of(c), name) for name in (status_of(c).get("artifacts") or {})],
        )
        store.add_index(
            TEMPLATE_CACHES, CACHE_BY_TEMPLATE, lambda c: [(namespace_of(c), spec_of(c).get("templateName") or "")]
        )
        store.add_index(SERVICES, SVC_BY_CACHE, service_uses)
        store.add_index(SERVICES, SVC_BY_ADAPTER, lambda s: [(namespace_of(s), a) for a in adapter_artifacts(s)])

    def _artifacts(self, index: str, value: Any) -> set[ObjectKey]:
        assert self._store is not None
        return self._store.keys_by_index(ARTIFACTS, index, value)

    # ------------------------------------------------------------- watches

    def watches(self) -> list[Watch]:
        def by_child(obj: Obj) -> Iterable[ObjectKey]:
            keys: set[ObjectKey] = set()
            for key in cache_label_keys(obj):
                keys |= self._artifacts(BY_LABEL, key)
            return keys

        def by_pod(pod: Obj) -> Iterable[ObjectKey]:
            keys = set(by_child(pod))
            for claim in pvc_claims(pod):
                keys |= self._artifacts(BY_CLAIM, claim)
            return keys

        def by_binding(binding: Obj) -> Iterable[ObjectKey]:
            return self._artifacts(BY_NAMESPACE, namespace_of(binding))

        def by_config(config: Obj) -> Iterable[ObjectKey]:
            ns = meta_of(config).get("namespace")
            keys = self._artifacts(BY_CONFIG, (ns, config["metadata"]["name"]))
            if ns is None:
                keys = keys | self._artifacts(WAITING, True)
            return keys

        def waiting(_: Obj) -> Iterable[ObjectKey]:
            return self._artifacts(WAITING, True)

        def by_cache(cache: Obj) -> Iterable[ObjectKey]:
            ns = namespace_of(cache)
            return {(ns, name) for name in (status_of(cache).get("artifacts") or {})}

        def by_service(svc: Obj) -> Iterable[ObjectKey]:
            assert self._store is not None
            keys: set[ObjectKey] = set()
            for ns, used in service_uses(svc):
                cache = self._store.get(TEMPLATE_CACHES, ns, used)
                caches = [cache] if cache is not None else []
                caches += self._store.by_index(TEMPLATE_CACHES, CACHE_BY_TEMPLATE, (ns, used))
                for c in caches:
                    keys |= set(by_cache(c))
            keys |= {(namespace_of(svc), name) for name in adapter_artifacts(svc)}  # LoRA adapters (issue 22)
            return keys

        def by_event(event: Obj) -> Iterable[ObjectKey]:
            about = involved(event)  # type: ignore[arg-type]
            if about is None or about[1] not in ("Pod", "PersistentVolumeClaim"):
                return []
            assert self._store is not None
            ns, kind, name = about
            obj = self._store.get(PODS if kind == "Pod" else PVCS, ns, name)
            if obj is None:
                return []  # not ours, or not seen yet (its add triggers)
            return by_pod(obj) if kind == "Pod" else by_child(obj)

        def uses(svc: Obj) -> tuple[frozenset[tuple[str, str]], tuple[str, ...], bool]:
            return frozenset(service_uses(svc)), tuple(adapter_artifacts(svc)), is_deleting(svc)

        def uses_changed(old: Obj | None, new: Obj) -> bool:
            return old is None or uses(old) != uses(new)

        def own(artifact: Obj) -> Iterable[ObjectKey]:
            return [(namespace_of(artifact), artifact["metadata"]["name"])]

        return [
            # the download pod's status patches: only reaching 100 % changes the plan (Verifying)
            Watch(
                ARTIFACTS,
                own,
                changed=lambda old, new: old is not None and download_finished(old) != download_finished(new),
            ),
            Watch(JOBS, by_child),
            Watch(PODS, by_pod),
            Watch(PVCS, by_child),
            Watch(EVENTS, by_event),
            Watch(ROLE_BINDINGS, by_binding, changed=lambda old, new: False),
            Watch(RUNTIME_CONFIGS, by_config),
            Watch(CLUSTER_RUNTIME_CONFIGS, by_config),
            Watch(
                ARTIFACTS, waiting, changed=lambda old, new: old is None or storage_fields(old) != storage_fields(new)
            ),
            Watch(TEMPLATE_CACHES, by_cache),
            # only what the usage reads (caches and templates used, adapters, deletion); a burst of new
            # services in a namespace is gathered into one reconcile of its shared cache's artifact
            Watch(SERVICES, by_service, changed=uses_changed, coalesce=True),
        ]

    def event_sources(self) -> list[ResourceRef]:
        return [PODS, PVCS]

    def selections(self) -> dict[ResourceRef, list[Selection]]:
        # Our Jobs, their pods and our PVCs (labelled), and the serving pods that mount artifact PVCs (usage, F76):
        # a pod of another kind mounting one is not seen (the cluster's other pods are never sent).
        ours = Selection(label_selector=lbl.CACHE_NAME_LABEL)
        return {
            JOBS: [ours],
            PODS: [ours, Selection(label_selector=lbl.KSERVE_ISVC_LABEL)],
            PVCS: [ours],
            ROLE_BINDINGS: [Selection(field_selector=f"metadata.name={children.STATUS_UPDATER}")],
        }

    def store_filters(self) -> dict[ResourceRef, Any]:
        labelled = lambda obj: lbl.CACHE_NAME_LABEL in (meta_of(obj).get("labels") or {})  # noqa: E731
        return {
            JOBS: labelled,
            PODS: lambda pod: (
                labelled(pod)
                or any(  # our Job pods, and pods mounting claims (usage, F76)
                    "persistentVolumeClaim" in v for v in spec_of(pod).get("volumes") or ()
                )
            ),
            PVCS: labelled,
            ROLE_BINDINGS: lambda obj: obj["metadata"]["name"] == children.STATUS_UPDATER,
        }

    # ------------------------------------------------------------- observe

    def in_use(self, store: Store, artifact: Obj) -> tuple[bool, tuple[str, ...]]:
        return in_use(store, artifact)

    def usage(self, store: Store, artifact: Obj) -> Usage:
        return usage(store, artifact)

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, art = ctx.store, ArtifactView.of(obj)
        ns, name, uid = art.namespace, art.name, art.uid
        cfg = config_name(art.spec)
        config = resolve(cfg, store.get(RUNTIME_CONFIGS, ns, cfg), store.get(CLUSTER_RUNTIME_CONFIGS, None, cfg))
        check_job = store.get(JOBS, ns, check_size_job_name(name, uid))
        download_job = store.get(JOBS, ns, download_job_name(name, uid))
        pvc = store.get(PVCS, ns, artifact_pvc_name(name, uid))
        label = sanitize_label_value(name) or "artifact"
        pods = tuple(p for p in store.by_index(PODS, CHILD_BY_LABEL, (ns, label)) if not is_deleting(p))
        used, _ = self.in_use(store, obj)
        quota, usage = Quota(), Usage()
        if pvc is None:
            quota = parse_quota(store.list(CLUSTER_RUNTIME_CONFIGS))
            if quota.cluster_limit is not None or quota.namespace_limit is not None:
                usage = self.usage(store, obj)

        size_unknown = spec_size(art.spec)[0] is None and discovered_size(art.status) is None
        events: list[Obj] = []
        logs: dict[str, str] = {}
        errors: list[str] = []
        try:
            for pod in pods:
                pod_name = pod["metadata"]["name"]
                phase = status_of(pod).get("phase")
                component = (pod["metadata"].get("labels") or {}).get(lbl.COMPONENT_LABEL)
                if phase == "Succeeded" and component == children.COMPONENT_CHECK_SIZE and size_unknown:
                    logs[pod_name] = redact(await ctx.kube.read_log(ns, pod_name, tail_lines=LOG_TAIL_LINES))
                elif pod_failed(pod):
                    # credentials a failing download printed never reach conditions or Events (issue 18)
                    logs[pod_name] = redact(await ctx.kube.read_log(ns, pod_name, tail_lines=LOG_TAIL_LINES))
                elif phase == "Pending":  # Events from the watches (aim_core.runtime.eventstore)
                    events += events_about(store, "Pod", ns, pod_name)
            if pvc is not None and status_of(pvc).get("phase") != "Bound":
                events += events_about(store, "PersistentVolumeClaim", ns, pvc["metadata"]["name"])
        except Exception as exc:  # noqa: BLE001 - a failed read becomes a condition, not a crash
            errors.append(describe(exc))
        return Observed(
            config=config,
            default_image=self.default_image,
            now=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            check_size_job=check_job,
            download_job=download_job,
            pvc=pvc,
            role_binding=store.get(ROLE_BINDINGS, ns, children.STATUS_UPDATER),
            pods=pods,
            events=tuple(events),
            logs=logs,
            read_errors=tuple(errors),
            in_use=used,
            quota=quota,
            usage=usage,
        )

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        """The plan, with quota decisions serialised (issue 18).

        Storage use is read from the store again here, synchronously, with the decisions other reconciles made
        and the store does not show yet: storage they planned counts as used, artifacts they are evicting as
        freed (for them) and never chosen again. This reconcile's own decision is then recorded before any other
        worker runs, so a burst of artifacts never exceeds a limit and no eviction frees more than needed.
        """
        limited = observed.pvc is None and (
            observed.quota.cluster_limit is not None or observed.quota.namespace_limit is not None
        )
        if not limited or self._store is None:
            return plan_artifact(obj, observed)
        key = (namespace_of(obj), obj["metadata"]["name"])
        self._settle_decisions(self._store)
        self._reserved.pop(key, None)  # decided again below
        observed = attrs.evolve(observed, usage=self._with_decisions(self.usage(self._store, obj), key[0]))
        plan = plan_artifact(obj, observed)
        expires = time.monotonic() + DECISION_TTL
        planned = [d for d in plan.apply if d.resource == PVCS]
        evicted = [(d.namespace or "", d.name) for d in plan.delete if d.resource == ARTIFACTS]
        if plan.storage and (planned or evicted):
            self._reserved[key] = (plan.storage, expires)
        for victim in evicted:
            self._evicting[victim] = expires
        return plan

    def _settle_decisions(self, store: Store) -> None:
        """Forget decisions the store shows now (or that never reached the server)."""
        now = time.monotonic()
        for key, (_, expires) in list(self._reserved.items()):
            live = store.get(ARTIFACTS, key[0], key[1])
            if live is None or is_deleting(live) or allocated_of(live) or expires < now:
                del self._reserved[key]
        for key, expires in list(self._evicting.items()):
            live = store.get(ARTIFACTS, key[0], key[1])
            if live is None or is_deleting(live) or expires < now:
                del self._evicting[key]

    def _with_decisions(self, usage: Usage, namespace: str) -> Usage:
        cluster, in_namespace = usage.cluster_bytes, usage.namespace_bytes
        candidates = []
        for c in usage.candidates:
            if (c.namespace, c.name) in self._evicting:  # being freed by another reconcile: not ours to count
                cluster -= c.allocated_bytes
                if c.namespace == namespace:
                    in_namespace -= c.allocated_bytes
                continue
            candidates.append(c)
        for (ns, _name), (need, _) in self._reserved.items():
            cluster += need
            if ns == namespace:
                in_namespace += need
        return Usage(cluster, in_namespace, tuple(candidates))


DECISION_TTL = 120.0  # seconds a quota decision waits for the store before it is forgotten (a write that failed)


__all__ = ["ArtifactController", "parse_quota"]
