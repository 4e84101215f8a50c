"""/metrics over HTTPS as upstream serves it (F85): TokenReview, then SubjectAccessReview on /metrics.

The real operator against the cluster, which answers TokenReviews for the tokens a test gives it
(``kube.set_users``: the emulator itself, kube-apiserver through the test token-review webhook) and
SubjectAccessReviews from the RBAC objects stored: the ClusterRole from ``deploy/`` itself.
"""

from __future__ import annotations

import asyncio
import datetime
import ssl
import time
from pathlib import Path

import httpx
import pytest
import trustme
import yaml

from aim_core.kube import Credentials, Kube
from aim_core.metrics import Metrics
from aim_core.operator.probes import Endpoints, Readiness
from aim_core.operator.settings import Settings
from aim_core.runtime.leader import LEASE_NAME
from tests.wire.conftest import Operator, ensure_namespace

ROOT = Path(__file__).resolve().parents[2]
READER = yaml.safe_load((ROOT / "deploy" / "metrics_reader_role.yaml").read_text())
PROMETHEUS = "system:serviceaccount:monitoring:prometheus"


@pytest.fixture()
def operator_settings() -> Settings:
    return Settings(
        operator_namespace="aim-system",
        workers=2,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        metrics_secure=True,
    )


def grant_reader(kube) -> None:
    kube.put_object(READER)
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "prometheus-aim-engine-metrics"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": READER["metadata"]["name"],
            },
            "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}],
        }
    )


async def test_metrics_need_https_a_known_token_and_the_reader_role(kube, operator):
    kube.set_users(
        {
            "prometheus-token": {"username": PROMETHEUS, "uid": "1", "groups": ["system:serviceaccounts"]},
            "alice-token": {"username": "alice", "groups": ["system:authenticated"]},
        }
    )
    grant_reader(kube)
    host, port = operator.endpoints.addresses["metrics"]
    url = f"https://{host}:{port}/metrics"
    async with httpx.AsyncClient(verify=False, timeout=10) as client:  # a self-signed certificate
        assert (await client.get(url)).status_code == 401
        assert (await client.get(url, headers={"Authorization": "Bearer who-knows"})).status_code == 401
        denied = await client.get(url, headers={"Authorization": "Bearer alice-token"})
        assert denied.status_code == 403 and 'user "alice"' in denied.text
        reviews = kube.count("create", resource="subjectaccessreviews")
        allowed = await client.get(url, headers={"Authorization": "Bearer prometheus-token"})
        assert allowed.status_code == 200, allowed.text
        assert "controller_runtime_reconcile_total" in allowed.text
        again = await client.get(url, headers={"Authorization": "Bearer prometheus-token"})
        assert again.status_code == 200
        # the answers are kept: a scrape every 15 s does not ask the API server every time
        assert kube.count("create", resource="subjectaccessreviews") == reviews + 1
        assert kube.count("create", resource="tokenreviews") == 3
    async with httpx.AsyncClient(timeout=10) as plain:
        with pytest.raises(httpx.HTTPError):  # no plain HTTP on the HTTPS port
            await plain.get(f"http://{host}:{port}/metrics", headers={"Authorization": "Bearer prometheus-token"})


async def test_a_mounted_certificate_is_served(kube, tmp_path):
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.cert_chain_pems[0].write_to_path(tmp_path / "tls.crt")
    cert.private_key_pem.write_to_path(tmp_path / "tls.key")
    ca.cert_pem.write_to_path(tmp_path / "ca.crt")
    kube.set_users({"prometheus-token": {"username": PROMETHEUS}})
    grant_reader(kube)
    client_of_operator = Kube(Credentials(server=kube.url))
    readiness = Readiness(client=lambda: client_of_operator)
    endpoints = Endpoints(
        Metrics(),
        readiness,
        metrics_address="127.0.0.1:0",
        probe_address="0",
        metrics_secure=True,
        cert_dir=str(tmp_path),
    )
    await endpoints.start()
    try:
        host, port = endpoints.addresses["metrics"]
        async with httpx.AsyncClient(
            verify=ssl.create_default_context(cafile=str(tmp_path / "ca.crt")), timeout=10
        ) as client:
            answer = await client.get(
                f"https://localhost:{port}/metrics", headers={"Authorization": "Bearer prometheus-token"}
            )
        assert answer.status_code == 200
    finally:
        await endpoints.stop()
        await client_of_operator.aclose()


async def test_a_missing_certificate_is_an_error_naming_the_flags(tmp_path):
    from aim_core.operator.probes import EndpointError

    endpoints = Endpoints(
        Metrics(),
        Readiness(),
        metrics_address="127.0.0.1:0",
        probe_address="0",
        metrics_secure=True,
        cert_dir=str(tmp_path / "absent"),
    )
    try:
        with pytest.raises(EndpointError, match="--metrics-cert-path"):
            await endpoints.start()
    finally:
        await endpoints.stop()


async def test_a_standby_replica_answers_scrapes_too(kube):
    # Two replicas with leader election: the other one holds the lease for an hour, so this one is a standby.
    # Its reviews are creates; they go through a client without the leader-only write guard.
    kube.set_users({"prometheus-token": {"username": PROMETHEUS, "groups": ["system:serviceaccounts"]}})
    grant_reader(kube)
    ensure_namespace(kube, "aim-system")
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    kube.put_object(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": "aim-system"},
            "spec": {
                "holderIdentity": "the-other-replica",
                "leaseDurationSeconds": 3600,
                "acquireTime": now,
                "renewTime": now,
            },
        }
    )
    settings = Settings(
        operator_namespace="aim-system",
        workers=2,
        leader_election=True,
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        metrics_secure=True,
    )
    op = Operator()
    op.start(settings, kube.url, token=kube.token)
    try:
        deadline = time.monotonic() + 30
        while not (op.runtime is not None and op.runtime.ready.is_set() and op.runtime.ctx.kube.write_guard):
            assert op.error is None, op.error
            assert time.monotonic() < deadline, "operator did not start"
            await asyncio.sleep(0.05)
        assert not op.runtime.ctx.kube.write_guard()  # a standby: the engine's client sends no write
        host, port = op.endpoints.addresses["metrics"]
        async with httpx.AsyncClient(verify=False, timeout=10) as client:
            answer = await client.get(
                f"https://{host}:{port}/metrics", headers={"Authorization": "Bearer prometheus-token"}
            )
            assert answer.status_code == 200, answer.text
            assert "leader_election_master_status" in answer.text
            assert (await client.get(f"https://{host}:{port}/metrics")).status_code == 401
        assert kube.get("coordination.k8s.io/v1/leases", "aim-system", LEASE_NAME)["spec"]["holderIdentity"] == (
            "the-other-replica"
        )
    finally:
        op.stop.set()
        while op.thread.is_alive():
            await asyncio.sleep(0.05)
    assert op.error is None, op.error
