"""Lease-based leader election, so several operator replicas run safely: client-go's leaderelection.

Every replica watches and keeps its store warm; only the holder of the Lease reconciles. Three
durations, as in client-go (and controller-runtime's defaults):

- **lease duration** (15 s): how long a standby waits, from the moment it *observed* the lease
  record change, before it may take the lease. The holder's ``renewTime`` is never compared with
  the local clock, so clock skew between nodes cannot steal a live lease.
- **renew deadline** (10 s, shorter than the lease): the leader keeps trying to renew through
  transient errors, but if no renewal succeeded for this long it stops its work: before any
  standby may take over. A renewal in flight is abandoned at the deadline, and the client refuses
  to send writes once it has passed (:meth:`LeaderElector.leading`), so a leader that was frozen
  (SIGSTOP, a long GC pause, a suspended VM) writes nothing when it resumes.
- **retry period** (2 s): how often a standby tries to take the lease and the leader renews it.

The lease is taken and renewed with optimistic concurrency (``resourceVersion`` on replace), and
released on a graceful stop (``holderIdentity`` emptied), so a rollout hands over in about one
retry period instead of a full lease.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import random
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aim_core import metrics
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import LEASES

log = logging.getLogger("aim_engine.leader")

LEASE_NAME = "3be10d2f.eai.amd.com"
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
JITTER = 0.2  # standbys try every retry period plus up to 20 %, so they do not all ask at once


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _fmt(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Takes, renews and releases the leader Lease of one replica (see the module docstring)."""

    def __init__(
        self,
        kube: Any,
        namespace: str,
        *,
        identity: str | None = None,
        name: str = LEASE_NAME,
        lease_duration: float = LEASE_DURATION,
        renew_deadline: float = RENEW_DEADLINE,
        retry_period: float = RETRY_PERIOD,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < renew_deadline < lease_duration:
            raise ValueError(
                f"the renew deadline ({renew_deadline:g} s) must be shorter than the lease duration "
                f"({lease_duration:g} s)"
            )
        if not 0 < retry_period * (1 + JITTER) < renew_deadline:
            raise ValueError(
                f"the retry period ({retry_period:g} s) must be well shorter than the renew deadline "
                f"({renew_deadline:g} s)"
            )
        self.kube = kube
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.name = name
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._clock = clock
        self._lease: dict[str, Any] | None = None  # the Lease as last read or written
        self._observed: dict[str, Any] | None = None  # its spec, and when (local clock) it last changed
        self._observed_at = 0.0
        self._renewed_at: float | None = None  # local clock before our last successful take or renewal

    # ----------------------------------------------------------------- state

    def leading(self) -> bool:
        """Whether this replica may act as the leader now: it renewed less than a renew deadline ago."""
        return self._renewed_at is not None and self._clock() - self._renewed_at < self.renew_deadline

    def holder(self) -> str | None:
        """The holder as last observed."""
        return (self._observed or {}).get("holderIdentity") or None

    def _observe(self, lease: dict[str, Any]) -> None:
        spec = dict(lease.get("spec") or {})
        if spec != self._observed:
            self._observed, self._observed_at = spec, self._clock()
        self._lease = lease

    # ----------------------------------------------------------------- one attempt

    async def try_acquire(self) -> bool:
        """Take or renew the lease once; return whether we hold it."""
        started = self._clock()
        now = _now()
        mine = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, round(self.lease_duration)),
            "renewTime": _fmt(now),
        }
        lease = await self.kube.get(LEASES, self.namespace, self.name)
        if lease is None:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": {**mine, "acquireTime": _fmt(now), "leaseTransitions": 0},
            }
            try:
                created = await self.kube.create(LEASES, body)
            except ApiError as exc:
                if exc.status == 409:
                    return False
                raise
            self._observe(created or body)
            self._renewed_at = started
            return True
        self._observe(lease)
        current = self._observed or {}
        holder = current.get("holderIdentity")
        duration = float(current.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and self._clock() < self._observed_at + duration:
            return False  # held, and not yet a full lease since we saw it change
        spec = {**current, **mine}
        if holder != self.identity:
            spec["acquireTime"] = _fmt(now)
            spec["leaseTransitions"] = int(current.get("leaseTransitions") or 0) + 1
        try:
            replaced = await self.kube.replace(LEASES, {**lease, "spec": spec})
        except ApiError as exc:
            if exc.status == 409:  # somebody else renewed or took it first
                return False
            raise
        self._observe(replaced or {**lease, "spec": spec})
        self._renewed_at = started
        return True

    async def release(self) -> None:
        """Give the lease up (graceful stop): a standby takes it on its next try, not a lease later."""
        lease = self._lease
        if lease is None or not self.leading():
            return
        try:
            # asyncio.timeout, not wait_for: no task of its own, whose failure kopf would re-raise at exit
            async with asyncio.timeout(self.renew_deadline):
                for attempt in (1, 2):
                    spec = {
                        **(lease.get("spec") or {}),
                        "holderIdentity": "",
                        "leaseDurationSeconds": 1,
                        "renewTime": _fmt(_now()),
                        "acquireTime": _fmt(_now()),
                    }
                    try:
                        # Safe however late it arrives: the resourceVersion makes it fail if someone else took it.
                        await self.kube.replace(LEASES, {**lease, "spec": spec})
                        break
                    except ApiError as exc:
                        # a renewal cancelled in flight (the stop) may have reached the server: read it again
                        fresh = await self.kube.get(LEASES, self.namespace, self.name) if exc.status == 409 else None
                        if (
                            attempt == 2
                            or fresh is None
                            or (fresh.get("spec") or {}).get("holderIdentity") != self.identity
                        ):
                            raise
                        lease = fresh
        except Exception as exc:  # noqa: BLE001 - it expires on its own then
            log.warning("could not release the leader lease %s: %s", self.name, str(exc) or type(exc).__name__)
        else:
            log.info("released the leader lease %s", self.name)
        self._renewed_at = None

    # ----------------------------------------------------------------- the loop

    async def _attempt(self, timeout: float) -> bool:
        try:
            async with asyncio.timeout(timeout):
                return await self.try_acquire()
        except TimeoutError:
            log.warning("leader election: no answer from the API server within %.1f s", timeout)
        except Exception as exc:  # noqa: BLE001 - keep trying; losing the API means losing the lease in time
            log.warning("leader election: %s", exc)
        return False

    async def _acquire(self) -> None:
        while not await self._attempt(self.renew_deadline):
            await asyncio.sleep(self.retry_period * (1 + JITTER * random.random()))

    async def _renew(self) -> bool:
        """Renew until it succeeds (True), or until the deadline passes or another holder shows (False)."""
        assert self._renewed_at is not None
        deadline = self._renewed_at + self.renew_deadline
        while True:
            remaining = deadline - self._clock()
            if remaining <= 0:
                return False  # e.g. resumed after being frozen: not one more request as the leader
            if await self._attempt(remaining):
                return True
            if self.holder() not in (None, self.identity):
                return False
            await asyncio.sleep(min(self.retry_period, max(0.0, deadline - self._clock())))

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Run ``lead()`` while holding the lease; stop it before the renew deadline passes without a renewal.

        A replica that lost the lease goes back to standing by (its store stays warm). When ``run`` is
        cancelled (the operator stops), the work is stopped first and then the lease released.
        """
        task: asyncio.Task[None] | None = None
        try:
            while True:
                metrics.leading(self.name, False)
                await self._acquire()
                log.info("acquired leadership of %s as %s", self.name, self.identity)
                metrics.leading(self.name, True)
                task = asyncio.create_task(lead())
                while True:
                    await asyncio.wait({task}, timeout=self.retry_period)
                    if task.done():
                        await task  # surface a crash of the leader work
                        return
                    if not await self._renew():
                        break
                log.warning(
                    "lost leadership of %s (%s); stopping reconciliation",
                    self.name,
                    f"now held by {self.holder()}"
                    if self.holder() not in (None, self.identity)
                    else f"not renewed for {self.renew_deadline:g} s",
                )
                self._renewed_at = None
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                task = None
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            await asyncio.shield(self.release())
            metrics.leading(self.name, False)
