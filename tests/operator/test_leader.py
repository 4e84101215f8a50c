"""Leader election over a real Lease (the emulator and a real API server), as client-go's leaderelection does it.

In process: expiry judged from when a replica observed the record change (never from the holder's
renewTime against the local clock), leadership kept through transient renewal errors until the
renew deadline, work stopped before it, the lease released on a graceful stop. Then two operator
processes: the leader frozen (SIGSTOP) past the lease is replaced, and writes nothing when resumed;
a graceful stop (SIGTERM) hands over in about one retry period.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml

from aim_core.kube import Credentials, Kube
from aim_core.reconcile.errors import NetworkError
from aim_core.runtime.leader import LeaderElector
from tests.operator.test_cli_run import LOOPBACK_ENDPOINTS
from tests.wire.conftest import eventually

LEASES = "coordination.k8s.io/v1/leases"
LEASE = "3be10d2f.eai.amd.com"
RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


def operator_namespace(kube) -> None:
    """A real API server refuses objects in a namespace that does not exist."""
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aim-system"}})


def holder(kube) -> str | None:
    lease = kube.get(LEASES, "aim-system", LEASE)
    return (lease or {}).get("spec", {}).get("holderIdentity")


async def test_only_one_replica_holds_the_lease_and_the_other_takes_over_a_lease_after_it_stopped_changing(kube):
    operator_namespace(kube)
    a_client, b_client = Kube(Credentials(server=kube.url)), Kube(Credentials(server=kube.url))
    try:
        a = LeaderElector(
            a_client, "aim-system", identity="replica-a", lease_duration=1, renew_deadline=0.6, retry_period=0.1
        )
        b = LeaderElector(
            b_client, "aim-system", identity="replica-b", lease_duration=1, renew_deadline=0.6, retry_period=0.1
        )
        assert await a.try_acquire() is True
        assert await b.try_acquire() is False  # a holds a fresh lease
        await asyncio.sleep(0.7)
        assert await a.try_acquire() is True  # renewing is fine
        assert await b.try_acquire() is False  # b saw the record change just now: a full lease from here
        assert holder(kube) == "replica-a"

        await asyncio.sleep(1.1)  # a stops renewing; b has seen the same record for a lease duration
        assert await b.try_acquire() is True
        lease = kube.get(LEASES, "aim-system", LEASE)
        assert lease["spec"]["holderIdentity"] == "replica-b"
        assert lease["spec"]["leaseTransitions"] == 1
        assert await a.try_acquire() is False
    finally:
        await a_client.aclose()
        await b_client.aclose()


async def test_a_lease_renewed_by_a_holder_whose_clock_is_behind_is_not_taken(kube):
    """The holder's renewTime reads an hour old here (its clock is behind): it still holds the lease."""
    hour_ago = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    kube.put_object(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE, "namespace": "aim-system"},
            "spec": {
                "holderIdentity": "skewed",
                "leaseDurationSeconds": 15,
                "renewTime": hour_ago.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            },
        }
    )
    client = Kube(Credentials(server=kube.url))
    try:
        assert await LeaderElector(client, "aim-system", identity="me").try_acquire() is False
        assert holder(kube) == "skewed"
    finally:
        await client.aclose()


class FlakyKube(Kube):
    """Lease writes fail (no answer) while ``failing`` is set."""

    failing = False

    async def replace(self, ref, obj):
        if self.failing:
            raise NetworkError("refused", "PUT lease: connection refused")
        return await super().replace(ref, obj)


async def test_leadership_survives_renewal_errors_until_the_renew_deadline_and_stops_before_the_lease_ends(kube):
    operator_namespace(kube)
    client = FlakyKube(Credentials(server=kube.url))
    started, stopped = asyncio.Event(), asyncio.Event()

    async def lead():
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    elector = LeaderElector(client, "aim-system", identity="me", lease_duration=2, renew_deadline=1.2, retry_period=0.1)
    task = asyncio.create_task(elector.run(lead))
    try:
        await asyncio.wait_for(started.wait(), 2)
        client.failing = True
        await asyncio.sleep(0.7)  # a few renewals failed: still the leader
        assert not stopped.is_set() and elector.leading()
        client.failing = False
        await asyncio.sleep(0.3)
        assert not stopped.is_set() and elector.leading()
        client.failing = True
        failed_at = time.monotonic()
        await asyncio.wait_for(stopped.wait(), 3)
        # stopped at the renew deadline, before a standby could take the lease (a lease duration)
        assert time.monotonic() - failed_at < 2
        assert not elector.leading()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.aclose()


async def test_losing_the_lease_stops_the_leader_work_and_a_graceful_stop_releases_it(kube):
    operator_namespace(kube)
    client = Kube(Credentials(server=kube.url))
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def lead():
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    elector = LeaderElector(
        client, "aim-system", identity="me", lease_duration=30, renew_deadline=20, retry_period=0.05
    )
    task = asyncio.create_task(elector.run(lead))
    try:
        await asyncio.wait_for(started.wait(), 2)
        # Someone else takes the lease (e.g. after a network partition healed on their side).
        lease = kube.get(LEASES, "aim-system", LEASE)
        lease["spec"]["holderIdentity"] = "someone-else"
        kube.put_object(lease, resource=LEASES)
        await asyncio.wait_for(cancelled.wait(), 2)
        assert holder(kube) == "someone-else"

        # It is ours again (the other one released it); then the operator stops: released at once.
        started.clear()
        lease = kube.get(LEASES, "aim-system", LEASE)
        lease["spec"]["holderIdentity"] = ""
        kube.put_object(lease, resource=LEASES)
        await asyncio.wait_for(started.wait(), 10)  # the emulator's first PUT of a lease takes seconds
        assert holder(kube) == "me"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.aclose()
    assert holder(kube) == ""


def test_the_renew_deadline_must_be_shorter_than_the_lease():
    with pytest.raises(ValueError, match="shorter than the lease duration"):
        LeaderElector(None, "aim-system", lease_duration=10, renew_deadline=10)


# ------------------------------------------------------------- two operator processes

# generous for a loaded test machine (the emulator shares a CPU with both replicas as they start)
LEASE_SECONDS, DEADLINE_SECONDS, RETRY_SECONDS = 8.0, 6.0, 1.0


@contextlib.asynccontextmanager
async def replica(kube, tmp_path: Path, name: str):
    """``aim-engine run --leader-elect`` with short durations, as identity ``name`` with a token of its own."""
    operator_namespace(kube)
    kube.accept_tokens({"token-replica-a", "token-replica-b"})  # the tokens tell the replicas' requests apart
    config = tmp_path / f"kubeconfig-{name}"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "emulator",
                "clusters": [{"name": "emulator", "cluster": {"server": kube.url}}],
                "users": [{"name": "emulator", "user": {"token": f"token-{name}"}}],
                "contexts": [{"name": "emulator", "context": {"cluster": "emulator", "user": "emulator"}}],
            }
        )
    )
    env = {**os.environ, "KUBECONFIG": str(config), "AIM_SYSTEM_NAMESPACE": "aim-system", "POD_NAME": name}
    log = tmp_path / f"{name}.log"
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aim_core.cli",
            "run",
            "-A",
            "--log-format",
            "plain",
            *LOOPBACK_ENDPOINTS,
            "--leader-elect",
            "--leader-elect-lease-duration",
            f"{LEASE_SECONDS}s",
            "--leader-elect-renew-deadline",
            f"{DEADLINE_SECONDS}s",
            "--leader-elect-retry-period",
            f"{RETRY_SECONDS}s",
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        proc.log = log
        try:
            yield proc
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGCONT)
                    proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(proc.wait(), 20)


def writes_by(kube, name: str, since: int) -> list[str]:
    """The writes sent with replica ``name``'s token since request ``since``."""
    return [f"{r.method} {r.path}" for r in kube.sent(since) if r.authorization == f"Bearer token-{name}" and r.write]


def standing_by(kube, name: str):
    """Replica ``name`` has asked for the lease (its elector runs once its store is filled)."""

    def check():
        return any(
            r.authorization == f"Bearer token-{name}" and r.path.endswith(f"/leases/{LEASE}") for r in kube.sent()
        )

    return check


def runtime_config(name: str) -> dict:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"env": [{"name": "A", "value": "1"}]},
    }


def ready(kube, name: str):
    def check():
        conditions = kube.get(RC, "team", name)["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        return True

    return check


async def test_a_frozen_leader_is_replaced_within_a_lease_and_writes_nothing_when_it_resumes(kube, tmp_path):
    async with replica(kube, tmp_path, "replica-a") as a:
        await eventually(lambda: holder(kube) == "replica-a", timeout=30)
        async with replica(kube, tmp_path, "replica-b"):
            await eventually(standing_by(kube, "replica-b"), timeout=30)
            kube.put_object(runtime_config("before"))
            await eventually(ready(kube, "before"), timeout=20)

            a.send_signal(signal.SIGSTOP)
            frozen_at = time.monotonic()
            await eventually(lambda: holder(kube) == "replica-b", timeout=LEASE_SECONDS + 10, interval=0.05)
            took = time.monotonic() - frozen_at
            # a lease after b last saw a's record change, found on b's next try (plus this machine's load)
            assert LEASE_SECONDS - RETRY_SECONDS <= took <= LEASE_SECONDS + 2.4 * RETRY_SECONDS + 2, took
            kube.put_object(runtime_config("after"))
            await eventually(ready(kube, "after"), timeout=20)

            mark = kube.mark()
            a.send_signal(signal.SIGCONT)
            kube.put_object(runtime_config("while-a-resumes"))  # work a resumed leader would pick up
            await eventually(ready(kube, "while-a-resumes"), timeout=20)
            await asyncio.sleep(3 * RETRY_SECONDS)
            assert writes_by(kube, "replica-a", mark) == []
            assert holder(kube) == "replica-b"
            assert a.returncode is None  # it stands by again
            assert "lost leadership" in a.log.read_text()


async def test_a_graceful_stop_hands_over_in_about_one_retry_period(kube, tmp_path):
    async with replica(kube, tmp_path, "replica-a") as a:
        await eventually(lambda: holder(kube) == "replica-a", timeout=30)
        async with replica(kube, tmp_path, "replica-b"):
            await eventually(standing_by(kube, "replica-b"), timeout=30)
            assert holder(kube) == "replica-a"
            a.send_signal(signal.SIGTERM)
            stopped_at = time.monotonic()
            await eventually(lambda: holder(kube) == "replica-b", timeout=LEASE_SECONDS + 10, interval=0.05)
            took = time.monotonic() - stopped_at
            assert await asyncio.wait_for(a.wait(), 20) == 0
            assert "released the leader lease" in a.log.read_text(), a.log.read_text()[-3000:]
            assert took < LEASE_SECONDS, took  # not a full lease: a released it
            kube.put_object(runtime_config("after"))
            await eventually(ready(kube, "after"), timeout=20)
