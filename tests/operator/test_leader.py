"""Leader election over a real Lease on the API emulator: one replica reconciles at a time."""

from __future__ import annotations

import asyncio

from aim_core.kube import Credentials, Kube
from aim_core.runtime.leader import LeaderElector


async def test_only_one_replica_holds_the_lease_and_the_other_takes_over_when_it_expires(kube):
    a_client, b_client = Kube(Credentials(server=kube.url)), Kube(Credentials(server=kube.url))
    try:
        a = LeaderElector(a_client, "aim-system", identity="replica-a", lease_seconds=1)
        b = LeaderElector(b_client, "aim-system", identity="replica-b", lease_seconds=1)
        assert await a.try_acquire() is True
        assert await b.try_acquire() is False  # a holds a fresh lease
        assert await a.try_acquire() is True  # renewing is fine
        lease = kube.get("coordination.k8s.io/v1/leases", "aim-system", "3be10d2f.eai.amd.com")
        assert lease["spec"]["holderIdentity"] == "replica-a"

        await asyncio.sleep(1.3)  # a stops renewing; its lease runs out
        assert await b.try_acquire() is True
        lease = kube.get("coordination.k8s.io/v1/leases", "aim-system", "3be10d2f.eai.amd.com")
        assert lease["spec"]["holderIdentity"] == "replica-b"
        assert lease["spec"]["leaseTransitions"] == 1
        assert await a.try_acquire() is False
    finally:
        await a_client.aclose()
        await b_client.aclose()


async def test_losing_the_lease_stops_the_leader_work(kube):
    client = Kube(Credentials(server=kube.url))
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def lead():
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    elector = LeaderElector(client, "aim-system", identity="me", lease_seconds=30, renew_seconds=0.05)
    task = asyncio.create_task(elector.run(lead))
    try:
        await asyncio.wait_for(started.wait(), 2)
        # Someone else takes the lease (e.g. after a network partition healed on their side).
        lease = kube.get("coordination.k8s.io/v1/leases", "aim-system", "3be10d2f.eai.amd.com")
        lease["spec"]["holderIdentity"] = "someone-else"
        kube.put_object(lease, resource="coordination.k8s.io/v1/leases")
        await asyncio.wait_for(cancelled.wait(), 2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.aclose()
