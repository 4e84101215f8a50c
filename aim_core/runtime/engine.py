"""The reconcile engine every controller shares: observe → plan → apply → status.

For one key it reads the object from the store, handles the finalizer and the
paused annotation, runs the controller's observe and plan steps, applies the
plan's children with server-side apply (fixed order, one field manager,
owner references and identity labels set in :mod:`aim_core.runtime.applyset`),
deletes what the plan drops, and writes status only when it changed. Errors
never escape: they are classified (F10), reported in status, and decide the
retry. What it writes is built purely in :mod:`aim_core.reconcile.writes`; its
Events are posted in the background by :mod:`aim_core.runtime.recorder`.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Hashable, Iterable
from typing import Any

from aim_core import metrics
from aim_core.kube import Kube
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile import events as eventing
from aim_core.reconcile import labels as labelling
from aim_core.reconcile import status as statusing
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.plan import Issue, Plan
from aim_core.reconcile.resources import NAMESPACES
from aim_core.reconcile.writes import build_status, rfc3339, status_patch
from aim_core.runtime import adoption, applyset, outcomes
from aim_core.runtime.controller import Context, Controller, namespace_going
from aim_core.runtime.patches import (
    finalizers_patch,
    issue_from,
    log_failure,
    routine,
    same_but_finalizers,
    same_but_status,
)
from aim_core.runtime.recorder import FLUSH_TIMEOUT, EventRecorder
from aim_core.runtime.store import Store
from aim_core.runtime.workqueue import WorkQueue

__all__ = ["Engine", "build_status", "rfc3339", "routine", "utcnow"]  # build_status, rfc3339: reconcile.writes

log = logging.getLogger("aim_engine.engine")

Key = tuple[str, str | None, str]  # (controller name, namespace, name)


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


class Engine:
    """Runs controllers over a store, a work queue and the API adapter."""

    def __init__(self, ctx: Context, controllers: Iterable[Controller], *, recurring_warning_interval: float = 600.0):
        self.ctx = ctx
        self.controllers = {c.name: c for c in controllers}
        self.queue = WorkQueue()
        self._infra_since: dict[Key, datetime.datetime] = {}
        self._warned: dict[tuple[Key, str], datetime.datetime] = {}
        self._applied = applyset.AppliedForms()  # what the server stored of each child we applied
        self._statuses = applyset.AppliedForms()  # ... and of each status we wrote (schemas prune status too)
        self._trouble: dict[Key, str] = {}  # why a reconcile asked for a retry, for the one log line
        self._refused: dict[str, str | None] = {}  # namespaces that refused a create as terminating -> their uid
        self._warning_interval = datetime.timedelta(seconds=recurring_warning_interval)
        self._routes: dict[ResourceRef, list[tuple[Controller, Any]]] = {}
        self._writer: Key | None = None  # whose write is being stored (its own child does not re-trigger it)
        # per controller, the resources it watches only in part (selectors): the store may miss an object there
        self._selective = {c.name: set(c.selections()) for c in self.controllers.values()}
        self.events = EventRecorder(lambda: self.ctx.kube, terminating=self.terminating, refused=self._note_refusal)
        for controller in self.controllers.values():
            controller.setup(ctx.store)
            self._routes.setdefault(controller.resource, []).append((controller, None))
            for watch in controller.watches():
                self._routes.setdefault(watch.resource, []).append((controller, watch))
        ctx.store.subscribe(self._on_change)
        ctx.wake = lambda controller, namespace, name: self.queue.add((controller, namespace, name))

    @property
    def store(self) -> Store:
        return self.ctx.store

    @property
    def kube(self) -> Kube:
        return self.ctx.kube

    def store_filter(self, ref: ResourceRef) -> Any:
        """Which objects of ``ref`` the store keeps: accepted by any controller that filters it, else all."""
        filters = []
        for controller in self.controllers.values():
            if ref in controller.store_filters():
                filters.append(controller.store_filters()[ref])
            elif (
                ref == controller.resource
                or any(w.resource == ref for w in controller.watches())
                or ref in controller.extra_resources()
            ):
                return None
        if not filters:
            return None
        return lambda obj: any(f(obj) for f in filters)

    def resources(self) -> list[ResourceRef]:
        """Every resource the engine needs watched, primary ones first."""
        seen: dict[ResourceRef, None] = {}
        for controller in self.controllers.values():
            seen[controller.resource] = None
        for controller in self.controllers.values():
            for watch in controller.watches():
                seen[watch.resource] = None
            for ref in controller.extra_resources():
                seen[ref] = None
        return list(seen)

    # ------------------------------------------------------------- triggering

    def _on_change(self, ref: ResourceRef, event: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        for controller, mapper in self._routes.get(ref, ()):
            if mapper is None:
                if event == "MODIFIED" and old is not None and same_but_status(old, obj):
                    continue  # our own status write (or a resync): nothing to reconcile
                meta = obj["metadata"]
                key = (controller.name, meta.get("namespace") or None, meta["name"])
                if key != self._writer or old is None or not same_but_finalizers(old, obj):
                    self.queue.add(key)  # (not: our finalizer patch, stored by the reconcile that sent it)
                continue
            watch = mapper
            if watch.changed is not None and event == "MODIFIED" and not watch.changed(old, obj):
                continue
            keys = set(watch.mapper(obj))
            if old is not None and old is not obj:
                keys |= set(watch.mapper(old))
            for namespace, name in keys:
                key = (controller.name, namespace, name)
                if key != self._writer:
                    (self.queue.add_soon if watch.coalesce else self.queue.add)(key)

    def enqueue_all(self) -> None:
        for controller in self.controllers.values():
            for obj in self.store.list(controller.resource):
                meta = obj["metadata"]
                self.queue.add((controller.name, meta.get("namespace") or None, meta["name"]))

    async def run(self, workers: int = 4, *, flush_timeout: float = FLUSH_TIMEOUT) -> None:
        """Reconcile until cancelled (stop, lost leadership); then send waiting Events for ``flush_timeout`` s."""
        metrics.engine_started(self.controllers, workers)
        self.enqueue_all()
        self.events.start()
        try:
            await self.queue.run(self.handle, workers)
        finally:
            await self.events.stop(flush_timeout)

    async def idle(self, settle: float = 0.05, timeout: float = 30.0) -> None:
        """Wait until nothing is queued or running and every Event handed over is sent (delayed keys may remain)."""
        await self.queue.idle(settle, timeout)
        while self.events.pending():
            await self.events.sent(timeout)
            await self.queue.idle(settle, timeout)

    # ---------------------------------------------------------------- handling

    async def handle(self, key: Hashable) -> None:
        controller_name, namespace, name = key  # type: ignore[misc]
        controller = self.controllers[controller_name]
        try:
            requeue = await self.reconcile(controller, namespace, name)
        except ApiError as exc:
            if exc.status == 404 and self.store.get(controller.resource, namespace, name) is None:
                log.debug("%s %s/%s went away during its reconcile", controller.name, namespace, name)
                return
            self._failed(controller, key, namespace, name, exc)
            return
        except Exception as exc:  # noqa: BLE001 - the engine must survive any controller bug
            self._failed(controller, key, namespace, name, exc)
            return
        trouble = self._trouble.pop((controller_name, namespace, name), None)
        if requeue == "backoff":
            delay = self.queue.backoff(key)
            if trouble:
                log.warning("%s %s/%s: %s; retrying in %.1fs", controller.name, namespace, name, trouble, delay)
            return
        self.queue.forget(key)
        if requeue is not None:
            self.queue.add_after(key, float(requeue))

    def _failed(
        self, controller: Controller, key: Hashable, namespace: str | None, name: str, exc: BaseException
    ) -> None:
        """Back off; routine trouble (API server or network) is one WARNING line, a bug gets its traceback."""
        log_failure(f"{controller.name} {namespace}/{name}", exc, self.queue.backoff(key))

    @metrics.timed_reconcile
    async def reconcile(self, controller: Controller, namespace: str | None, name: str) -> float | str | None:
        obj = self.store.get(controller.resource, namespace, name)
        if obj is None:
            self._forget((controller.name, namespace, name))
            return None
        meta = obj["metadata"]
        if controller.finalizer:
            finalizers = list(meta.get("finalizers") or [])
            if meta.get("deletionTimestamp"):
                if controller.finalizer in finalizers:
                    await controller.finalize(self.ctx, obj)
                    remaining = [f for f in finalizers if f != controller.finalizer]
                    try:
                        await self.kube.patch(controller.resource, namespace, name, finalizers_patch(meta, remaining))
                    except ApiError as exc:
                        if exc.status != 404:
                            raise  # 404: already released (a second look at a stale copy) and gone
                return None
        elif meta.get("deletionTimestamp"):
            return None
        if self.terminating(namespace):
            return None  # in a namespace being deleted only what releases finalizers is written (above)
        missing = bool(controller.finalizer) and controller.finalizer not in finalizers
        if missing and controller.has_cleanup_duties(self.store, obj):
            await self._add_finalizer(controller, obj)  # even while paused (Q18)
            missing = False
        if labelling.is_paused(meta):
            return None

        observed = await controller.observe(self.ctx, obj)
        if self.terminating(namespace):
            return None  # seen going while observing: nothing more is written there
        plan = controller.plan(obj, observed)
        issues = list(plan.issues)
        if statusing.should_apply([(i.category, i.reason, i.message) for i in issues]):
            if missing and plan.finalizer:
                await self._add_finalizer(controller, obj)  # before creating what it will clean up
            issues += await self._apply(controller, obj, plan)
        if self.terminating(namespace):
            return None  # seen going while this reconcile ran (or a create was refused): write nothing more there
        failed = await self._write_status(controller, obj, plan, issues) if controller.writes_status else None
        transient = [i for i in issues if i.category.is_transient]
        if transient or failed is not None:
            self._trouble[(controller.name, namespace, name)] = transient[0].message if transient else str(failed)
            return "backoff"
        return adoption.requeue(plan.requeue_after, issues)

    def terminating(self, namespace: str | None) -> bool:
        """Whether ``namespace`` is being deleted: its object says so, or it refused a create as terminating."""
        if not namespace:
            return False
        ns = self.store.get(NAMESPACES, None, namespace)
        if ns is not None and namespace_going(ns):
            return True
        if namespace in self._refused:
            if ns is None or (ns.get("metadata") or {}).get("uid") == self._refused[namespace]:
                return True
            del self._refused[namespace]  # a new namespace of the same name
        return False

    def _note_refusal(self, namespace: str | None, exc: BaseException) -> bool:
        """Remember a namespace that refused a create because it is being terminated (403)."""
        if not namespace or not (isinstance(exc, ApiError) and exc.status == 403 and "being terminated" in str(exc)):
            return False
        ns = self.store.get(NAMESPACES, None, namespace)
        self._refused[namespace] = (ns.get("metadata") or {}).get("uid") if ns is not None else None
        log.info("namespace %s is being deleted; nothing more is created there", namespace)
        return True

    def _forget(self, key: Key) -> None:
        """Drop what the engine remembers about an object that is gone."""
        self._infra_since.pop(key, None)
        self._statuses.forget(key)
        for warned in [w for w in self._warned if w[0] == key]:
            del self._warned[warned]

    async def _add_finalizer(self, controller: Controller, obj: dict[str, Any]) -> None:
        meta = obj["metadata"]
        finalizers = [*(meta.get("finalizers") or []), controller.finalizer]
        result = await self.kube.patch(
            controller.resource, meta.get("namespace"), meta["name"], finalizers_patch(meta, finalizers)
        )
        if isinstance(result, dict) and result.get("metadata"):
            # this reconcile goes on with what it read: only the finalizers changed (the patch
            # carries its resourceVersion), so a second reconcile would plan the same
            self._store_unnoticed(controller, obj, controller.resource, result)

    async def _apply(self, controller: Controller, obj: dict[str, Any], plan: Plan) -> list[Issue]:
        issues: list[Issue] = []
        for desired in sorted(plan.apply, key=lambda d: d.sort_key):
            body = applyset.prepare(desired, obj, controller.name, plan.labels)
            meta = body["metadata"]
            child = (desired.resource, meta.get("namespace") or None, meta["name"])
            live = self.store.get(desired.resource, meta.get("namespace"), meta["name"])
            selective = desired.resource in self._selective.get(controller.name, ())
            live, refused = await adoption.look(self.kube, desired, obj, live, selective)
            if refused is not None:
                issues.append(refused)
                continue
            if not applyset.should_send(desired, body, live, controller.field_manager, self._applied.get(child, body)):
                continue
            if self.terminating(meta.get("namespace")):
                return issues  # seen going while this reconcile ran: an apply there would be refused (or undone)
            if live is None and child in self._applied and await adoption.gone(self.kube, meta, self._refused):
                return issues  # a child of ours vanished: its namespace may be going before its watch says so
            try:
                result = await applyset.send(self.kube, desired, body, controller.field_manager)
            except Exception as exc:  # noqa: BLE001 - reported as a condition
                if self._note_refusal(meta.get("namespace"), exc):
                    return issues
                issues.append(issue_from(exc, f"applying {desired.resource.kind} {meta['name']}"))
                continue
            if result is None:
                continue  # made meanwhile by someone else: theirs; its watch event brings it to the plan
            outcomes.wrote(obj, "applied", desired.resource.kind, meta["name"], created=live is None)
            if isinstance(result, dict) and result.get("metadata"):
                self._applied.remember(child, body, result)
                if desired.anticipated and live is None:
                    self._store_unnoticed(controller, obj, desired.resource, result)
                else:
                    self.store.upsert(desired.resource, result, copy_obj=False)
        for deletion in plan.delete:
            self._applied.forget((deletion.resource, deletion.namespace or None, deletion.name))
            live = self.store.get(deletion.resource, deletion.namespace, deletion.name)
            if live is None or not adoption.may_delete(live, obj, deletion):
                continue
            try:
                await self.kube.delete(deletion.resource, deletion.namespace, deletion.name)
                outcomes.wrote(obj, "deleted", deletion.resource.kind, deletion.name)
            except Exception as exc:  # noqa: BLE001
                issues.append(issue_from(exc, f"deleting {deletion.resource.kind} {deletion.name}"))
        return issues

    def _store_unnoticed(
        self, controller: Controller, obj: dict[str, Any], ref: ResourceRef, result: dict[str, Any]
    ) -> None:
        """Store a child just created, without re-triggering the object whose plan created it.

        Only for children the plan marked ``anticipated`` (its status already reports the child as
        the next reconcile would read it back: one reconcile per new service instead of two), and
        for the object's own finalizer patch. Every later change of the child comes by watch with a
        new resourceVersion and does trigger it; the watch's echo of this write changes nothing.
        """
        meta = obj["metadata"]
        self._writer = (controller.name, meta.get("namespace") or None, meta["name"])
        try:
            self.store.upsert(ref, result, copy_obj=False)
        finally:
            self._writer = None

    async def _write_status(
        self, controller: Controller, obj: dict[str, Any], plan: Plan, issues: list[Issue]
    ) -> BaseException | None:
        """Write the status if it changed and post Events; return the error if the write failed."""
        meta = obj["metadata"]
        key: Key = (controller.name, meta.get("namespace") or None, meta["name"])
        now = utcnow()
        if any(i.category.is_transient for i in issues):
            self._infra_since.setdefault(key, now)
        else:
            self._infra_since.pop(key, None)
        old_status = obj.get("status") or {}
        new_status, derived = build_status(
            controller, obj, plan, issues, now=now, infra_since=self._infra_since.get(key)
        )
        stored = self._statuses.get(key, new_status)
        patch = status_patch(old_status, stored if stored is not None else new_status)
        if patch:
            try:
                result = await self.kube.patch(
                    controller.resource, meta.get("namespace"), meta["name"], {"status": patch}, subresource="status"
                )
                outcomes.status_written(obj, old_status, new_status)
                if isinstance(result, dict) and result.get("metadata"):
                    self._statuses.remember(key, new_status, result.get("status") or {})
                    self.store.upsert(controller.resource, result, copy_obj=False)
            except Exception as exc:  # noqa: BLE001 - a status write failure is retried with backoff
                if isinstance(exc, ApiError) and exc.status == 404:
                    return None  # the object is gone: nothing to report on
                if not routine(exc):
                    log.error(
                        "status write of %s %s/%s failed: %s",
                        controller.name,
                        meta.get("namespace"),
                        meta["name"],
                        exc,
                        exc_info=not isinstance(exc, ApiError),
                    )
                return exc  # no Events for a status that was not written
        old_conditions = list(old_status.get("conditions") or [])
        self._emit_events(controller, obj, key, old_conditions, new_status["conditions"], derived, now)
        return None

    def _emit_events(self, controller, obj, key, old_conditions, conditions, derived, now) -> None:
        """Hand the Events of this status change to the recorder (posted in the background)."""
        specs = eventing.plan_events(old_conditions, conditions, derived.component_states)
        for spec in eventing.summarize(old_conditions, specs, fold_state_change=controller.one_event_per_state):
            if spec.recurring:
                last = self._warned.get((key, spec.reason))
                if last is not None and now - last < self._warning_interval:
                    continue
                self._warned[(key, spec.reason)] = now
            self.events.record(obj, spec, controller.field_manager, now)
