"""Lease-based leader election, so several operator replicas run safely.

Every replica watches and keeps its store warm; only the holder of the Lease
reconciles. The lease is taken and renewed with optimistic concurrency
(``resourceVersion`` on replace), so two replicas can never both believe they
lead for longer than one lease duration.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from aim_core import metrics
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import LEASES

log = logging.getLogger("aim_engine.leader")

LEASE_NAME = "3be10d2f.eai.amd.com"


def default_identity() -> str:
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _fmt(ts: datetime.datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: str | None) -> datetime.datetime | None:
    if not text:
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.datetime.strptime(text, fmt).replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
    return None


class LeaderElector:
    def __init__(self, kube: Any, namespace: str, *, identity: str | None = None, name: str = LEASE_NAME,
                 lease_seconds: int = 15, renew_seconds: float = 5.0) -> None:
        self.kube = kube
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.name = name
        self.lease_seconds = lease_seconds
        self.renew_seconds = renew_seconds

    async def try_acquire(self) -> bool:
        """Take or renew the lease once; return whether we hold it."""
        now = _now()
        lease = await self.kube.get(LEASES, self.namespace, self.name)
        spec = {"holderIdentity": self.identity, "leaseDurationSeconds": self.lease_seconds,
                "renewTime": _fmt(now)}
        if lease is None:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {**spec, "acquireTime": _fmt(now), "leaseTransitions": 0}}
            try:
                await self.kube.create(LEASES, body)
                return True
            except ApiError as exc:
                if exc.status == 409:
                    return False
                raise
        current = lease.get("spec") or {}
        holder = current.get("holderIdentity")
        renewed = _parse(current.get("renewTime")) or _parse(current.get("acquireTime"))
        duration = int(current.get("leaseDurationSeconds") or self.lease_seconds)
        expired = renewed is None or renewed + datetime.timedelta(seconds=duration) < now
        if holder not in (None, "", self.identity) and not expired:
            return False
        new_spec = {**current, **spec}
        if holder != self.identity:
            new_spec["acquireTime"] = _fmt(now)
            new_spec["leaseTransitions"] = int(current.get("leaseTransitions") or 0) + 1
        body = {**lease, "spec": new_spec}
        try:
            await self.kube.replace(LEASES, body)
            return True
        except ApiError as exc:
            if exc.status == 409:  # somebody else renewed or took it first
                return False
            raise

    async def run(self, lead: Callable[[], Awaitable[None]]) -> None:
        """Run ``lead()`` while holding the lease; stop it as soon as the lease is lost."""
        task: asyncio.Task[None] | None = None
        try:
            while True:
                try:
                    holding = await self.try_acquire()
                except Exception as exc:  # noqa: BLE001 - keep trying; losing the API means losing the lease
                    log.warning("leader election: %s", exc)
                    holding = False
                metrics.leading(self.name, holding)
                if holding and task is None:
                    log.info("acquired leadership as %s", self.identity)
                    task = asyncio.create_task(lead())
                elif not holding and task is not None:
                    log.warning("lost leadership; stopping reconciliation")
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                    task = None
                if task is not None and task.done():
                    await task  # surface a crash of the leader work
                    task = None
                await asyncio.sleep(self.renew_seconds)
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
