"""The running operator: kopf watches feed the store, the engine reconciles.

kopf gives us login, resilient watch streams and the liveness probe; every
watch event lands in :class:`~aim_core.store.Store` through one thin handler.
The engine starts once the credentials are known and the store holds a full
listing of every resource it reads (so planners never see a half-filled
cache), optionally only while this replica holds the leader lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from aim_core.controller import Context, Controller
from aim_core.engine import Engine
from aim_core.eventstore import EventCache
from aim_core.kube import Credentials, Kube
from aim_core.operator.leader import LeaderElector
from aim_core.operator.reflector import Reflector
from aim_core.operator.settings import ERROR_BACKOFFS, Settings
from aim_core.providers import ResourceRef
from aim_core.reconcile.errors import ApiError
from aim_core.resources import EVENTS, NAMESPACES
from aim_core.store import Store

log = logging.getLogger("aim_engine.operator")


class Runtime:
    """Everything one operator process holds; kopf handlers reach it through ``memo``."""

    def __init__(self, settings: Settings, controllers: Iterable[Controller], plugins: Any) -> None:
        self.settings = settings
        self.store = Store()
        self.ctx = Context(store=self.store, kube=None, plugins=plugins, operator_namespace=settings.operator_namespace)
        self.engine = Engine(self.ctx, controllers)
        self.credentials: asyncio.Future[Credentials] | None = None
        self.ready = asyncio.Event()
        self._by_plural: dict[tuple[str, str, str], ResourceRef] = {}
        self._filters: dict[ResourceRef, Any] = {}
        for ref in self.watched():
            self._by_plural[(ref.group, ref.version, ref.plural)] = ref
            self._filters[ref] = self.engine.store_filter(ref)
        involved: dict[ResourceRef, None] = {}
        for controller in self.engine.controllers.values():
            involved.update(dict.fromkeys(controller.event_sources()))
        self.events = EventCache(self.store, involved) if involved else None
        self.reflectors: list[Reflector] = []

    def watched(self) -> list[ResourceRef]:
        """What kopf watches (Events are streamed per involved kind by :meth:`event_streams`)."""
        refs = [ref for ref in self.engine.resources() if ref != EVENTS]
        if NAMESPACES not in refs:
            refs.append(NAMESPACES)  # F15: namespace termination lets finalizers step aside
        return refs

    def event_streams(self) -> list[tuple[str | None, str]]:
        """``(namespace or None, field selector)`` of every Event watch the operator opens."""
        if self.events is None:
            return []
        namespaces: list[str | None] = list(self.settings.namespaces) or [None]
        return [(ns, selector) for selector in self.events.selectors() for ns in namespaces]

    # ------------------------------------------------------------- kopf side

    def set_credentials(self, creds: Credentials) -> None:
        if self.credentials is None:
            self.credentials = asyncio.get_running_loop().create_future()
        if not self.credentials.done():
            self.credentials.set_result(creds)

    def on_watch_event(self, group: str, version: str, plural: str, event_type: str | None, body: dict[str, Any]) -> None:
        ref = self._by_plural.get((group, version, plural))
        if ref is None or not body.get("metadata", {}).get("name"):
            return
        keep = self._filters.get(ref)
        if event_type == "DELETED" or (keep is not None and not keep(body)):
            meta = body["metadata"]
            self.store.delete(ref, meta.get("namespace"), meta["name"])
        else:
            self.store.upsert(ref, body)

    # ------------------------------------------------------------ engine side

    async def sync(self) -> None:
        """List every watched resource once, so the store starts complete."""
        kube: Kube = self.ctx.kube
        namespaces = set(self.settings.namespaces) or None
        for ref in self.watched():
            try:
                if ref.namespaced and namespaces:
                    items: list[dict[str, Any]] = []
                    for ns in sorted(namespaces):
                        items += await kube.list(ref, ns)
                else:
                    items = await kube.list(ref)
            except ApiError as exc:
                if exc.status != 404:
                    raise
                # The API is not installed (e.g. no Gateway API on a cluster that routes nothing):
                # start without it; objects that need it report the failed apply in their status.
                log.warning("%s (%s) is not served by this cluster; continuing without it", ref.kind, ref.api_version)
                items = []
            keep = self._filters.get(ref)
            if keep is not None:
                items = [item for item in items if keep(item)]
            self.store.replace_all(ref, items, namespaces if ref.namespaced else None)
        if all(reflector.listed.is_set() for reflector in self.reflectors):
            self.ready.set()

    async def run_engine(self) -> None:
        if self.credentials is None:
            self.credentials = asyncio.get_running_loop().create_future()
        creds = await self.credentials
        self.ctx.kube = Kube(creds, connections=3 * self.settings.workers + 2)  # status, Event, child per worker
        streams = [asyncio.create_task(r.run()) for r in self._make_reflectors()]
        try:
            while True:
                try:
                    await self.sync()
                    break
                except Exception as exc:  # noqa: BLE001 - API not reachable yet: retry
                    log.warning("initial listing failed (%s); retrying in 2s", exc)
                    await asyncio.sleep(2)
            for reflector in self.reflectors:
                await reflector.listed.wait()
            self.ready.set()
            resync = asyncio.create_task(self._resync_forever())
            try:
                if self.settings.leader_election:
                    elector = LeaderElector(self.ctx.kube, self.settings.operator_namespace)
                    await elector.run(lambda: self.engine.run(self.settings.workers))
                else:
                    await self.engine.run(self.settings.workers)
            finally:
                resync.cancel()
                await asyncio.gather(resync, return_exceptions=True)
        finally:
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
            await self.aclose()

    def _make_reflectors(self) -> list[Reflector]:
        """The Event streams: listed and watched by us, as kopf has one field selector per resource."""
        events = self.events
        self.reflectors = []
        if events is None:
            return []
        for namespace, selector in self.event_streams():
            self.reflectors.append(Reflector(
                self.ctx.kube, EVENTS, namespace=namespace, field_selector=selector, backoffs=ERROR_BACKOFFS,
                on_list=lambda items, sel=selector: events.replace(sel, items),
                on_event=events.apply,
            ))
        return self.reflectors

    async def _resync_forever(self) -> None:
        """List everything again now and then.

        Watch streams that reconnect re-list what exists but say nothing of
        what was deleted while they were away; a periodic listing removes such
        objects from the store (and re-triggers their dependants). Unchanged
        objects cause no work.
        """
        interval = self.settings.resync_seconds
        if not interval:
            return
        while True:
            await asyncio.sleep(interval)
            try:
                await self.sync()
            except Exception as exc:  # noqa: BLE001 - try again next time
                log.warning("periodic listing failed: %s", exc)

    async def aclose(self) -> None:
        """Close the API connections (idempotent): open keep-alive connections would hold servers up."""
        if self.ctx.kube is not None:
            await asyncio.shield(self.ctx.kube.aclose())
