"""The running operator: watch streams feed the store, the engine reconciles.

kopf gives us login. Every resource the controllers
read is listed and then watched by a :class:`~aim_core.runtime.reflector.Reflector`
(Events once per involved kind), whose events land in
:class:`~aim_core.runtime.store.Store` directly: no per-event handler machinery, no
copy of what was just decoded. Streams resume from their last version after
errors (an API server restart lists nothing again); ``--resync-seconds`` makes
each stream list again in its own loop (:meth:`Runtime.resync`), never beside
its running watch. The engine starts once the credentials are
known and every stream has listed once (so planners never see a half-filled
cache), optionally only while this replica holds the leader lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from aim_core.kube import Credentials, Kube
from aim_core.operator import collection
from aim_core.operator.secure import REVIEW_CONNECTIONS
from aim_core.operator.settings import ERROR_BACKOFFS, Settings
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.resources import EVENTS, NAMESPACES, PODS
from aim_core.runtime.controller import Context, Controller
from aim_core.runtime.engine import Engine
from aim_core.runtime.eventstore import EventCache
from aim_core.runtime.leader import LeaderElector
from aim_core.runtime.reflector import Reflector
from aim_core.runtime.selection import EVERYTHING, Selection, union
from aim_core.runtime.store import Relisting, Store
from aim_core.runtime.storeform import pod_essentials

log = logging.getLogger("aim_engine.operator")


def warn_if_unverified(creds: Credentials) -> None:
    """One WARNING at start when the API server's certificate is not verified (``insecure-skip-tls-verify``)."""
    if creds.insecure and creds.server.startswith("https:"):
        log.warning(
            "the API server's certificate is not verified (insecure-skip-tls-verify): anyone between "
            "the operator and %s can read and change what it sends; give the cluster's CA instead",
            creds.server,
        )


class Runtime:
    """Everything one operator process holds; kopf handlers reach it through ``memo``."""

    def __init__(self, settings: Settings, controllers: Iterable[Controller], plugins: Any) -> None:
        self.settings = settings
        self._listing_began = 0.0  # when the first listings were asked for (for the start-up log line)
        controllers = list(controllers)
        # managedFields entries are kept only for our own applies (what needs_apply reads);
        # objects are stored compacted (memory at 10,000 services: see aim_core.runtime.storeform.compact)
        self.store = Store(
            field_managers={c.field_manager for c in controllers}, compact=True, projections={PODS: pod_essentials}
        )
        self.ctx = Context(store=self.store, kube=None, plugins=plugins, operator_namespace=settings.operator_namespace)
        self.engine = Engine(self.ctx, controllers)
        self.credentials: asyncio.Future[Credentials] | None = None
        # The client of /metrics' token and access reviews: every replica answers scrapes, and the engine's
        # client refuses a standby's writes (a review is a create); its own pool, so reviews never take the
        # connections reconciles need.
        self.review_kube: Kube | None = None
        self.ready = asyncio.Event()
        self._filters: dict[ResourceRef, Any] = {ref: self.engine.store_filter(ref) for ref in self.watched()}
        involved: dict[ResourceRef, None] = {}
        for controller in self.engine.controllers.values():
            involved.update(dict.fromkeys(controller.event_sources()))
        self.events = EventCache(self.store, involved) if involved else None
        self.reflectors: list[Reflector] = []
        self._selections: dict[ResourceRef, list[Selection]] = {ref: self.selections(ref) for ref in self.watched()}

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

    def selections(self, ref: ResourceRef) -> list[Selection]:
        """The streams of one resource: the union of what the controllers reading it select
        (:meth:`~aim_core.runtime.controller.Controller.selections`), or all of it."""
        declared: list[list[Selection] | None] = []
        for controller in self.engine.controllers.values():
            uses = {controller.resource, *(w.resource for w in controller.watches()), *controller.extra_resources()}
            if ref in uses:
                declared.append(controller.selections().get(ref))
        return union(declared)

    def streams(self) -> list[tuple[ResourceRef, str | None, Selection]]:
        """``(resource, namespace or None, selection)`` of every object watch the operator opens (Events aside)."""
        namespaces: list[str | None] = list(self.settings.namespaces) or [None]
        return [
            (ref, ns, selection)
            for ref in self.watched()
            for selection in self._selections[ref]
            for ns in (namespaces if ref.namespaced else [None])
        ]

    # ------------------------------------------------------------- kopf side

    def set_credentials(self, creds: Credentials) -> None:
        if self.credentials is None:
            self.credentials = asyncio.get_running_loop().create_future()
        if not self.credentials.done():
            self.credentials.set_result(creds)

    # ---------------------------------------------------------- watch side

    def on_watch_event(
        self, ref: ResourceRef, event_type: str, body: dict[str, Any], selection: Selection = EVERYTHING
    ) -> None:
        """One event of a stream: ``body`` was just decoded and is nobody else's, so it is stored as is."""
        meta = body.get("metadata") or {}
        if not meta.get("name"):
            return
        keep = self._filters.get(ref)
        if event_type == "DELETED":
            if not selection.matches(body) and any(
                other.matches(body) for other in self._selections.get(ref, ()) if other != selection
            ):
                return  # it left this stream's selection for another stream's: that stream keeps it
            self.store.delete(ref, meta.get("namespace"), meta["name"])
        elif keep is not None and not keep(body):
            self.store.delete(ref, meta.get("namespace"), meta["name"])
        else:
            version = meta.get("resourceVersion")
            held = self.store.get(ref, meta.get("namespace"), meta["name"]) if version else None
            if held is not None and (held.get("metadata") or {}).get("resourceVersion") == version:
                return  # the echo of our own write, whose answer is stored already: the same version, the same object
            self.store.upsert(ref, body, copy_obj=False)

    def listing(self, ref: ResourceRef, namespace: str | None, selection: Selection = EVERYTHING) -> Relisting:
        """A fresh listing of one stream, fed a page at a time (decoded pages are nobody else's):
        what it no longer holds (of what its selection covers) leaves the store."""
        where = None if selection == EVERYTHING else selection.matches
        return self.store.relisting(
            ref, {namespace} if namespace else None, where=where, keep=self._filters.get(ref), copy_obj=False
        )

    # ------------------------------------------------------------ engine side

    async def resync(self) -> None:
        """List every stream again, one at a time (``--resync-seconds``).

        Each stream stops watching for its listing and watches on from the
        listing's version, so what changes during the listing reaches the store
        after it: a listing beside a running watch would drop objects created
        meanwhile and bring back objects deleted meanwhile.
        """
        for reflector in self.reflectors:
            await reflector.relisted()

    async def _reconcile(self) -> None:
        """Run the engine; one INFO line once every object of the listings has been reconciled once.

        After a restart that line is when the operator has caught up with the cluster (a measure
        of how long a restart takes; benchmarks/bench_apiserver.py reads it).
        """
        loop = asyncio.get_running_loop()
        keys = [
            (c.name, obj["metadata"].get("namespace") or None, obj["metadata"]["name"])
            for c in self.engine.controllers.values()
            for obj in self.store.list(c.resource)
        ]
        started = loop.time()
        caught_up = self.engine.queue.first_pass(keys)

        async def report() -> None:
            await caught_up.wait()
            log.info(
                "every object listed at start reconciled once: %d objects, listings %.1f s, reconciles %.1f s",
                len(keys),
                started - self._listing_began,
                loop.time() - started,
            )

        reporter = asyncio.create_task(report())
        try:
            await self.engine.run(self.settings.workers)
        finally:
            reporter.cancel()

    async def run_engine(self) -> None:
        if self.credentials is None:
            self.credentials = asyncio.get_running_loop().create_future()
        creds = await self.credentials
        warn_if_unverified(creds)
        self.ctx.kube = Kube(creds, connections=3 * self.settings.workers + 2)  # status, Event, child per worker
        self.review_kube = Kube(creds, connections=REVIEW_CONNECTIONS)  # no write guard: see __init__
        self._listing_began = asyncio.get_running_loop().time()
        streams = [asyncio.create_task(r.run()) for r in self._make_reflectors()]
        # what the cluster does not serve (an optional CRD not installed), for plans that explain it
        self.ctx.extras["served"] = lambda ref: all(r.served is not False for r in self.reflectors if r.ref == ref)
        try:
            for reflector in self.reflectors:  # each retries its own listing until it succeeds
                await reflector.listed.wait()
            self.ready.set()
            resync = asyncio.create_task(self._resync_forever())
            collector = asyncio.create_task(collection.collect_old(lambda: not self.engine.queue.busy()))
            try:
                if self.settings.leader_election:
                    # The elector has a client of its own: the engine's refuses writes once the lease ran out.
                    lease_client = Kube(creds, connections=2)
                    elector = LeaderElector(
                        lease_client,
                        self.settings.operator_namespace,
                        lease_duration=self.settings.lease_duration,
                        renew_deadline=self.settings.renew_deadline,
                        retry_period=self.settings.retry_period,
                    )
                    self.ctx.kube.write_guard = elector.leading
                    try:
                        await elector.run(self._reconcile)
                    finally:
                        await asyncio.shield(lease_client.aclose())
                else:
                    await self._reconcile()
            finally:
                resync.cancel()
                collector.cancel()
                await asyncio.gather(resync, collector, return_exceptions=True)
        finally:
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
            await self.aclose()

    def _make_reflectors(self) -> list[Reflector]:
        """One stream per watched resource (and namespace), one per involved kind of Events."""
        kube = self.ctx.kube
        missing = self.settings.resync_seconds or 600.0
        self.reflectors = [
            Reflector(
                kube,
                ref,
                namespace=ns,
                backoffs=ERROR_BACKOFFS,
                missing_retry=missing,
                label_selector=sel.label_selector,
                field_selector=sel.field_selector,
                listing=lambda ref=ref, ns=ns, sel=sel: self.listing(ref, ns, sel),
                on_event=lambda kind, body, ref=ref, sel=sel: self.on_watch_event(ref, kind, body, sel),
            )
            for ref, ns, sel in self.streams()
        ]
        events = self.events
        if events is not None:
            for namespace, selector in self.event_streams():
                self.reflectors.append(
                    Reflector(
                        kube,
                        EVENTS,
                        namespace=namespace,
                        field_selector=selector,
                        backoffs=ERROR_BACKOFFS,
                        missing_retry=missing,
                        listing=lambda sel=selector: events.relisting(sel),
                        on_event=events.apply,
                    )
                )
        return self.reflectors

    async def _resync_forever(self) -> None:
        """List everything again every ``--resync-seconds`` (0: never).

        Not needed for correctness: a stream resumes from its last version
        (the server replays deletions too) and lists again after 410 Gone.
        """
        interval = self.settings.resync_seconds
        if not interval:
            return
        while True:
            await asyncio.sleep(interval)
            await self.resync()

    async def aclose(self) -> None:
        """Close the API connections (idempotent): open keep-alive connections would hold servers up."""
        if self.ctx.kube is not None:
            await asyncio.shield(self.ctx.kube.aclose())
        review, self.review_kube = self.review_kube, None  # a scrape after this is answered 503, not reopened
        if review is not None:
            await asyncio.shield(review.aclose())
