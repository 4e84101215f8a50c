"""List-then-watch of one resource (optionally field-selected), feeding the store.

Every watched resource has one (per namespace when the operator is limited
to namespaces); Events have one per involved kind (a field selector per
stream, several streams of one resource: kopf cannot express that). Events
go to the callbacks as decoded, with no per-event handler machinery: in a
burst kopf's per-event processing cost about a fifth of the operator's CPU.

The loop a client-go reflector runs: list, a page of ``page_size`` objects at
a time (the answer's ``resourceVersion`` is where the watch starts), then watch from the last version seen, resuming
after every normal end of a watch request; a bookmark only moves the version.
``410 Gone`` (the version is older than the server keeps) or any error means
"list again": the fresh listing replaces what the stream fed, so objects
deleted while the stream was away leave the store too. With ``listing``
every page goes into the store as it comes (10,000 objects decoded at once
took 600 MiB); a listing that fails half way deletes nothing. Errors back off
(``backoffs``, the last one repeated) and are logged once per failure.
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
        self.on_list = on_list
        self.listing = listing
        self.page_size = page_size
        self.on_event = on_event
        self.backoffs = list(backoffs) or [1.0]
        self.timeout_seconds = timeout_seconds
        self.missing_retry = missing_retry
        self.listed = asyncio.Event()  # set after the first complete listing
        self.resource_version: str | None = None
        self.lists = 0  # how many listings were made (for tests)

    def __repr__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        sel = f" ({self.field_selector})" if self.field_selector else ""
        return f"{self.ref.plural}{where}{sel}"

    async def run(self) -> None:
        """List (unless a version to resume from is known), then watch, until cancelled."""
        failures = 0
        while True:
            try:
                if self.resource_version is None:
                    await self._list()
                await self._watch_once()
                failures = 0  # a request that ended normally: resume from the version reached
            except asyncio.CancelledError:
                raise
            except (Gone, ApiError) as exc:
                if isinstance(exc, ApiError) and exc.status == 404 and self.resource_version is None:
                    await self._missing()
                    continue
                if isinstance(exc, ApiError) and exc.status != 410:
                    failures = await self._failed(exc, failures)
                    continue
                log.debug("watch of %r: resourceVersion %s is gone; listing again", self, self.resource_version)
                self.resource_version = None
            except Exception as exc:  # noqa: BLE001 - the stream must survive the API server going away
                failures = await self._failed(exc, failures)

    async def _missing(self) -> None:
        """The API is not served (e.g. no Gateway API on a cluster that routes nothing): run without it.

        Objects that need it report the failed apply in their status. The listing is tried
        again after ``missing_retry`` seconds, for an API installed later.
        """
        if not self.listed.is_set():
            log.warning("%s (%s) is not served by this cluster; continuing without it",
                        self.ref.kind, self.ref.api_version)
        self._new_listing().finish()
        self.listed.set()
        await asyncio.sleep(self.missing_retry)

    async def _failed(self, exc: BaseException, failures: int) -> int:
        """Back off, then list again: what happened while the stream was away is unknown."""
        delay = self.backoffs[min(failures, len(self.backoffs) - 1)]
        log.warning("watch of %r failed: %s; listing again in %ss", self, exc, delay)
        self.resource_version = None
        await asyncio.sleep(delay)
        return failures + 1

    def _new_listing(self) -> Listing:
        if self.listing is not None:
            return self.listing()
        assert self.on_list is not None
        return _Whole(self.on_list)

    async def _list(self) -> None:
        listing, version = self._new_listing(), None
        async for items, version in self.kube.list_pages(self.ref, self.namespace, field_selector=self.field_selector,
                                                        limit=self.page_size):
            listing.add(items)
        self.lists += 1
        self.resource_version = version
        listing.finish()
        self.listed.set()

    def watch_timeout(self) -> int:
        """How long the next watch request asks the server to keep it open: ``timeout_seconds`` to twice that.

        As client-go's reflectors do: the streams an operator opens together
        would otherwise all end, and be opened again, in the same second.
        """
        return int(self.timeout_seconds * (1.0 + random.random()))  # noqa: S311 - spreading, not secrecy

    async def _watch_once(self) -> None:
        async for event in self.kube.watch(
            self.ref, self.namespace, resource_version=self.resource_version,
            field_selector=self.field_selector, timeout_seconds=self.watch_timeout(),
        ):
            kind = event.get("type")
            obj = event.get("object") or {}
            if kind == "ERROR":
                if obj.get("code") == 410:
                    raise Gone()
                raise ApiError(int(obj.get("code") or 500), str(obj.get("reason") or ""),
                               f"watch of {self!r}: {obj.get('message') or obj}")
            version = (obj.get("metadata") or {}).get("resourceVersion")
            if kind == "BOOKMARK":
                if version:
                    self.resource_version = version
                continue
            if kind not in ("ADDED", "MODIFIED", "DELETED"):
                continue
            obj.setdefault("apiVersion", self.ref.api_version)
            obj.setdefault("kind", self.ref.kind)
            self.on_event(kind, obj)
            if version:
                self.resource_version = version
