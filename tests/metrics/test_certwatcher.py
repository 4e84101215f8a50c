"""The HTTPS metrics server follows its mounted certificate when cert-manager rotates it (certwatcher)."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import pytest
import trustme

from aim_core.metrics import Metrics
from aim_core.operator.probes import Endpoints, Readiness
from tests.wire.conftest import eventually


def issue(folder: Path, ca: trustme.CA) -> None:
    """cert-manager's Secret as the kubelet mounts it: tls.crt and tls.key, from ``ca``."""
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.cert_chain_pems[0].write_to_path(folder / "tls.crt")
    cert.private_key_pem.write_to_path(folder / "tls.key")


async def handshake(port: int, ca: trustme.CA) -> bool:
    """Whether a new TLS connection to the metrics port verifies against ``ca``."""
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx, server_hostname="localhost")
    except ssl.SSLCertVerificationError:
        return False
    writer.close()
    await writer.wait_closed()
    return True


@pytest.fixture()
async def endpoints(tmp_path, monkeypatch):
    monkeypatch.setattr("aim_core.metrics.certwatcher.POLL_SECONDS", 0.1)  # 10 s in production
    served = Endpoints(
        Metrics(),
        Readiness(),
        metrics_address="127.0.0.1:0",
        probe_address="0",
        metrics_secure=True,
        cert_dir=str(tmp_path),
    )
    yield served
    await served.stop()


async def test_a_rotated_certificate_is_served_to_new_connections_without_a_restart(tmp_path, endpoints):
    first, second = trustme.CA(), trustme.CA()
    issue(tmp_path, first)
    await endpoints.start()
    port = endpoints.addresses["metrics"][1]
    assert await handshake(port, first)
    assert not await handshake(port, second)

    issue(tmp_path, second)  # cert-manager renewed it

    await eventually(lambda: endpoints.certwatcher.reloads == 1, timeout=5)
    assert await handshake(port, second)
    assert not await handshake(port, first)
    assert endpoints.certwatcher.reloads == 1


async def test_a_pair_that_does_not_match_keeps_the_certificate_served(tmp_path, endpoints, caplog):
    first, second = trustme.CA(), trustme.CA()
    issue(tmp_path, first)
    await endpoints.start()
    port = endpoints.addresses["metrics"][1]
    half = tmp_path / "half"
    half.mkdir()
    issue(half, second)
    (tmp_path / "tls.crt").write_bytes((half / "tls.crt").read_bytes())  # the new certificate, the old key
    await eventually(lambda: "cannot be loaded" in caplog.text, timeout=5)
    assert await handshake(port, first)  # still the old pair, whole
    (tmp_path / "tls.key").write_bytes((half / "tls.key").read_bytes())  # the rest of the rotation arrives
    await eventually(lambda: endpoints.certwatcher.reloads == 1, timeout=5)
    assert await handshake(port, second)
