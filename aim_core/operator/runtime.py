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
from aim_core.kube import Credentials, Kube
from aim_core.operator.leader import LeaderElector
from aim_core.operator.settings import Settings
from aim_core.providers import ResourceRef
from aim_core.reconcile.errors import ApiError
from aim_core.resources import NAMESPACES
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

    def watched(self) -> list[ResourceRef]:
        refs = self.engine.resources()
        if NAMESPACES not in refs:
            refs.append(NAMESPACES)  # F15: namespace termination lets finalizers step aside
        return refs

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
        self.ready.set()

    async def run_engine(self) -> None:
        if self.credentials is None:
            self.credentials = asyncio.get_running_loop().create_future()
        creds = await self.credentials
        self.ctx.kube = Kube(creds)
        try:
            while True:
                try:
                    await self.sync()
                    break
                except Exception as exc:  # noqa: BLE001 - API not reachable yet: retry
                    log.warning("initial listing failed (%s); retrying in 2s", exc)
                    await asyncio.sleep(2)
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
            await self.aclose()

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
