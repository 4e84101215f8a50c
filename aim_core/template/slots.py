"""The cluster-wide limit on discovery Jobs (F34): at most ten run at once, counted under a Lease so that operator replicas agree."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aim_core.reconcile.errors import describe
from aim_core.reconcile.labels import (
    DISCOVERY_LEASE,
)
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.resources import (
    JOBS,
)
from aim_core.runtime.controller import Context
from aim_core.runtime.leader import LeaderElector, default_identity
from aim_core.runtime.store import ObjectKey, Store
from aim_core.template import discovery as disc
from aim_core.template.observed import Slot

ACTIVE_JOBS = "tpl:active-discovery-job"


class DiscoverySlots:
    """The cluster-wide limit of concurrent discovery Jobs, serialised by a Lease (F34).

    A template that wants a Job asks for a slot. Under an in-process lock, and
    holding the Lease ``aim-discovery-lock`` in the operator namespace (so
    another operator replica cannot count at the same time), the active
    discovery Jobs of all namespaces are counted from the store, plus slots
    granted whose Job the store does not show yet. Fewer than
    :data:`~aim_core.template.discovery.MAX_ACTIVE_JOBS` -> granted.

    The Lease is renewed at most every ``renew_seconds`` while this process
    keeps granting, so 25 templates at once cost two Lease requests, not 50.
    Upstream waits up to 30 s for a busy Lease; here the template is requeued
    after 2 s instead, so no worker blocks.
    """

    def __init__(
        self,
        *,
        limit: int = disc.MAX_ACTIVE_JOBS,
        identity: str | None = None,
        lease_seconds: int = 30,
        renew_seconds: float = 10.0,
        reservation_seconds: float = 30.0,
    ) -> None:
        self.limit = limit
        self.identity = identity or default_identity()
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds
        self.reservation_seconds = reservation_seconds
        self._lock: asyncio.Lock | None = None
        self._held_at = -1e18
        self._elector: LeaderElector | None = None
        self._reserved: dict[tuple[str, str], float] = {}
        self.waiting: dict[str, set[ObjectKey]] = {}

    async def _lease(self, kube: Any, namespace: str) -> str:
        """ "" when we hold the discovery Lease, else why not."""
        now = time.monotonic()
        if now - self._held_at < self.renew_seconds:
            return ""
        elector = self._elector
        if elector is None or elector.kube is not kube or elector.namespace != namespace:
            # kept: another replica's lease counts as expired a lease after this one saw it last change
            elector = self._elector = LeaderElector(
                kube,
                namespace,
                identity=self.identity,
                name=DISCOVERY_LEASE,
                lease_duration=self.lease_seconds,
                renew_deadline=self.lease_seconds * 2 / 3,
                retry_period=1.0,
            )
        try:
            held = await elector.try_acquire()
        except Exception as exc:  # noqa: BLE001 - reported in the template's status, retried
            return f"Lease {namespace}/{DISCOVERY_LEASE} could not be taken: {describe(exc).message}"
        if not held:
            return f"Lease {namespace}/{DISCOVERY_LEASE} is held by another operator replica"
        self._held_at = now
        return ""

    def active(self, store: Store) -> int:
        now = time.monotonic()
        for key, expires in list(self._reserved.items()):
            if expires < now or store.get(JOBS, *key) is not None:
                del self._reserved[key]
        return len(store.keys_by_index(JOBS, ACTIVE_JOBS, True)) + len(self._reserved)

    async def acquire(self, ctx: Context, controller: str, key: ObjectKey, job: Obj) -> tuple[Slot, str]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            busy = await self._lease(ctx.kube, ctx.operator_namespace)
            if busy:
                return Slot.LOCK_BUSY, busy
            active = self.active(ctx.store)
            if active >= self.limit:
                self.waiting.setdefault(controller, set()).add(key)
                return Slot.LIMIT_REACHED, (
                    f"{active} discovery Jobs are active cluster-wide (limit {self.limit}); "
                    "this one starts when one of them finishes"
                )
            self.waiting.get(controller, set()).discard(key)
            meta = job["metadata"]
            self._reserved[(meta["namespace"], meta["name"])] = time.monotonic() + self.reservation_seconds
            return Slot.GRANTED, ""

    def release_waiting(self, controller: str) -> set[ObjectKey]:
        return self.waiting.pop(controller, set())
