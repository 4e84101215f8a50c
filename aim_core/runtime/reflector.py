"""List-then-watch of one resource (optionally field-selected), feeding the store.

Every watched resource has one (per namespace when the operator is limited
to namespaces); Events have one per involved kind (a field selector per
stream, several streams of one resource: kopf cannot express that). Events
go to the callbacks as decoded, with no per-event handler machinery: in a
burst kopf's per-event processing cost about a fifth of the operator's CPU.

The loop a client-go reflector runs: list, a page of ``page_size`` objects at
a time (the answer's ``resourceVersion`` is where the watch starts), then watch
from the last version seen, resuming after every end of a watch request; a
bookmark only moves the version. A watch that fails (network error, 5xx, 429,
an API server restarting) is resumed from the last version after a backoff:
the server replays what happened meanwhile, deletions included, so an API
server that comes back is not asked for a listing of everything by every
stream of every replica. Only ``410 Gone`` (the version is older than the
server keeps) means "list again": the fresh listing replaces what the stream
fed, so objects deleted while the stream was away leave the store too. With
``listing`` every page goes into the store as it comes (10,000 objects decoded
at once took 600 MiB); a listing that fails half way deletes nothing.

Errors back off (``backoffs``, the last one repeated, each stretched by up to
half at random so that the streams of a restarted API server do not all come
back in the same second) and are logged once per failure. A watch request that
ends within a second having delivered nothing counts as a failure too (a proxy
that closes streams at once cannot make the loop spin). A resource the server
does not serve (404: no Gateway API, or a CRD deleted and re-created during an
upgrade) is empty for the store and looked for again with the same backoff,
growing to ``missing_retry``.

:meth:`Reflector.relist` asks a running stream for a fresh listing (the periodic
``--resync-seconds``): the stream stops watching, lists and watches on from the
listing's version, so no watch event can race the listing.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.errors import ApiError

log = logging.getLogger("aim_engine.watch")

OnList = Callable[[list[dict[str, Any]]], None]
OnEvent = Callable[[str, dict[str, Any]], None]


class Listing(Protocol):
    """Where one listing goes, a page at a time (e.g. :meth:`aim_core.runtime.store.Store.relisting`)."""

    def add(self, items: Iterable[dict[str, Any]]) -> None: ...

    def finish(self) -> None: ...


class _Whole:
    """A listing handed to ``on_list`` in one piece once complete."""

    def __init__(self, on_list: OnList) -> None:
        self.on_list = on_list
        self.items: list[dict[str, Any]] = []

    def add(self, items: Iterable[dict[str, Any]]) -> None:
        self.items.extend(items)

    def finish(self) -> None:
        self.on_list(self.items)


# Objects per listing page. With 10,000 services and InferenceServices a restarted operator's RSS
# was 465 MiB listing each resource whole, 218 MiB in pages of 500, 188 MiB in pages of 100
# (fewer decoded objects at once, less of Python's small-object memory left fragmented).
PAGE_SIZE = 100


class Gone(Exception):
    """The watch's resourceVersion is too old (410): list again."""


class Reflector:
    def __init__(
        self,
        kube: Any,
        ref: ResourceRef,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
        label_selector: str | None = None,
        on_list: OnList | None = None,
        listing: Callable[[], Listing] | None = None,
        on_event: OnEvent,
        backoffs: Sequence[float] = (1, 2, 5, 10, 20),
        timeout_seconds: int = 300,
        missing_retry: float = 600.0,
        page_size: int = PAGE_SIZE,
    ) -> None:
        """``listing`` (a new one per listing, fed page by page) or ``on_list`` (the whole listing at once)."""
        if (on_list is None) == (listing is None):
            raise ValueError("a reflector needs on_list or listing, not both")
        self.kube = kube
        self.ref = ref
        self.namespace = namespace
        self.field_selector = field_selector
        self.label_selector = label_selector
        self.on_list = on_list
        self.listing = listing
        self.page_size = page_size
        self.on_event = on_event
        self.backoffs = list(backoffs) or [1.0]
        self.timeout_seconds = timeout_seconds
        self.missing_retry = missing_retry
        self.listed = asyncio.Event()  # set after the first complete listing
        self.served: bool | None = None  # False while the server answers 404 for the resource
        self.resource_version: str | None = None
        self.lists = 0  # how many listings were made (for tests)
        self.failures = 0  # how many requests failed (for tests)
        self._relist = asyncio.Event()
        self._waiting: list[asyncio.Future[None]] = []  # callers of relisted()

    def __repr__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        chosen = ", ".join(s for s in (self.field_selector, self.label_selector) if s)
        sel = f" ({chosen})" if chosen else ""
        return f"{self.ref.plural}{where}{sel}"

    async def run(self) -> None:
        """List (unless a version to resume from is known), then watch, until cancelled."""
        failures = 0
        missing = 0
        while True:
            try:
                if self._relist.is_set():
                    self._relist.clear()
                    self.resource_version = None
                if self.resource_version is None:
                    await self._list()
                    missing = 0
                if await self._watch_once():
                    failures = 0  # a request that ended normally: resume from the version reached
                else:
                    failures = await self._failed("the watch request ended at once with nothing", failures)
            except asyncio.CancelledError:
                raise
            except (Gone, ApiError) as exc:
                if isinstance(exc, ApiError) and exc.status == 404:
                    missing = await self._missing(missing)
                    continue
                if isinstance(exc, ApiError) and exc.status != 410:
                    failures = await self._failed(exc, failures)
                    continue
                log.debug("watch of %r: resourceVersion %s is gone; listing again", self, self.resource_version)
                self.resource_version = None
            except Exception as exc:  # noqa: BLE001 - the stream must survive the API server going away
                failures = await self._failed(exc, failures)

    def relist(self) -> None:
        """List again now (the watch request in flight ends), then watch on from the fresh listing's version."""
        self._relist.set()

    async def relisted(self) -> None:
        """:meth:`relist`, and wait until the fresh listing is in (or the API was found not served)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(done)
        self.relist()
        await done

    def _done_listing(self) -> None:
        self.listed.set()
        waiting, self._waiting = self._waiting, []
        for done in waiting:
            if not done.done():
                done.set_result(None)

    async def _missing(self, times: int) -> int:
        """The API is not served (e.g. no Gateway API on a cluster that routes nothing, or a CRD deleted and
        being re-created): run without it.

        Objects that need it report the failed apply in their status. The
        listing is tried again with backoff, ``missing_retry`` seconds apart at
        most: an API installed (again) later is found within that.
        """
        if not self.listed.is_set() or times == 0:
            log.warning(
                "%s (%s) is not served by this cluster; continuing without it", self.ref.kind, self.ref.api_version
            )
        self.resource_version = None
        self.served = False
        self._new_listing().finish()
        self._done_listing()
        delay = min(
            self.missing_retry,
            self.backoffs[min(times, len(self.backoffs) - 1)] * 2 ** max(0, times - len(self.backoffs) + 1),
        )
        await self._sleep(_jittered(delay))
        return times + 1

    async def _failed(self, exc: BaseException | str, failures: int) -> int:
        """Back off, then resume from the last version (the server replays what happened meanwhile)."""
        delay = _jittered(self.backoffs[min(failures, len(self.backoffs) - 1)])
        where = f"resuming from {self.resource_version}" if self.resource_version else "listing again"
        log.warning("watch of %r failed: %s; %s in %.1fs", self, exc, where, delay)
        self.failures += 1
        await self._sleep(delay)
        return failures + 1

    async def _sleep(self, delay: float) -> None:
        """Sleep ``delay`` seconds, or less when :meth:`relist` is asked for meanwhile."""
        if self._relist.is_set():
            return
        try:
            await asyncio.wait_for(self._relist.wait(), delay)
        except TimeoutError:
            pass

    def _new_listing(self) -> Listing:
        if self.listing is not None:
            return self.listing()
        assert self.on_list is not None
        return _Whole(self.on_list)

    async def _list(self) -> None:
        listing, version = self._new_listing(), None
        selectors = {"label_selector": self.label_selector} if self.label_selector else {}
        pages = self.kube.list_pages(
            self.ref, self.namespace, field_selector=self.field_selector, limit=self.page_size, **selectors
        )
        async for items, version in pages:  # noqa: B007 (the last page's version is kept)
            listing.add(items)
        self.lists += 1
        self.resource_version = version
        self.served = True
        listing.finish()
        self._done_listing()

    def watch_timeout(self) -> int:
        """How long the next watch request asks the server to keep it open: ``timeout_seconds`` to twice that.

        As client-go's reflectors do: the streams an operator opens together
        would otherwise all end, and be opened again, in the same second.
        """
        return int(self.timeout_seconds * (1.0 + random.random()))  # noqa: S311 - spreading, not secrecy

    async def _watch_once(self) -> bool:
        """One watch request; False when it ended within a second having delivered nothing (a spin guard).

        A :meth:`relist` asked for meanwhile ends the request at once.
        """
        if self._relist.is_set():
            return True
        loop = asyncio.get_running_loop()
        started = loop.time()
        watch = asyncio.ensure_future(self._follow())
        relist = asyncio.ensure_future(self._relist.wait())
        try:
            await asyncio.wait((watch, relist), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (watch, relist):
                if not task.done():
                    task.cancel()
            await asyncio.gather(relist, return_exceptions=True)
            if not watch.done() or watch.cancelled():
                await asyncio.gather(watch, return_exceptions=True)
        if watch.cancelled():
            return True  # ended for a fresh listing
        return watch.result() or loop.time() - started >= 1.0

    async def _follow(self) -> bool:
        """Apply the events of one watch request until it ends; whether it delivered any."""
        delivered = False
        async for event in self.kube.watch(
            self.ref,
            self.namespace,
            resource_version=self.resource_version,
            field_selector=self.field_selector,
            timeout_seconds=self.watch_timeout(),
            **({"label_selector": self.label_selector} if self.label_selector else {}),
        ):
            delivered = True
            self._handle(event)
        return delivered

    def _handle(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone()
            raise ApiError(
                int(obj.get("code") or 500),
                str(obj.get("reason") or ""),
                f"watch of {self!r}: {obj.get('message') or obj}",
            )
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "BOOKMARK":
            if version:
                self.resource_version = version
            return
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            return
        obj.setdefault("apiVersion", self.ref.api_version)
        obj.setdefault("kind", self.ref.kind)
        self.on_event(kind, obj)
        if version:
            self.resource_version = version


def _jittered(delay: float) -> float:
    """``delay`` stretched by up to half at random (client-go's jitter): streams that failed together spread out."""
    return delay * (1.0 + 0.5 * random.random())  # noqa: S311 - spreading, not secrecy
