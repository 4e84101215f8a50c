"""Real local servers for the downloader: a fake Hub, moto's S3 server, the API emulator over TLS.

The downloader runs as a real subprocess (``aim-engine artifact ...``) with the
environment a download Job gives it: the service-account folder (token, ``ca.crt``,
namespace), ``KUBERNETES_SERVICE_HOST``/``PORT`` naming the emulator's TLS port,
``ARTIFACT_NAME``/``ARTIFACT_NAMESPACE``, ``HF_ENDPOINT`` or ``AWS_ENDPOINT_URL``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import attrs
import kmock
import pytest
import pytest_asyncio

from aim_testing.fixtures import Kube, _QuickServer
from aim_testing.hubserver import HubServer
from aim_testing.tlsfiles import TlsFiles, make_tls_files

NAMESPACE = "models"
TOKEN = "sa-token-for-the-downloader"
AIM_ENGINE = str(Path(sys.executable).parent / "aim-engine")


@pytest.fixture(scope="session")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsFiles:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture()
def hub() -> Iterator[HubServer]:
    with HubServer() as server:
        yield server


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """moto's S3-compatible server on 127.0.0.1 (one per session; tests use their own buckets)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture()
def s3(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A boto3 client for the moto server, to create buckets and objects."""
    import boto3

    for name in ("AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
        monkeypatch.delenv(name, raising=False)
    return boto3.client(
        "s3",
        endpoint_url=s3_server,
        region_name="us-east-1",
        aws_access_key_id="AKIATESTING",
        aws_secret_access_key="testing-secret",
    )


@attrs.define
class Cluster:
    """The emulator reachable as a pod sees the API server: TLS, a service-account folder."""

    kube: Kube
    host: str
    port: int
    sa_dir: Path

    def env(self) -> dict[str, str]:
        return {
            "KUBERNETES_SERVICE_HOST": self.host,
            "KUBERNETES_SERVICE_PORT": str(self.port),
            "AIM_SERVICEACCOUNT_DIR": str(self.sa_dir),
        }

    def artifact(self, name: str, source_uri: str) -> dict[str, Any]:
        return self.kube.put_object(
            {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMArtifact",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "spec": {"sourceUri": source_uri},
            }
        )

    def status(self, name: str) -> dict[str, Any]:
        obj = self.kube.get("aimartifacts", NAMESPACE, name)
        assert obj is not None
        return obj.get("status", {})

    def status_patches(self, name: str) -> list[dict[str, Any]]:
        """Bodies of the merge patches the downloader sent to this artifact's status, in order."""
        return [
            request.data["status"]
            for request in self.kube.emulator
            if request.method.value == "PATCH"
            and request.subresource == "status"
            and request.name == name
            and isinstance(request.data, dict)
            and "status" in request.data
        ]

    def patch_tokens(self, name: str) -> set[str]:
        """The Authorization headers the status patches carried."""
        return {
            request.headers.get("Authorization", "")
            for request in self.kube.emulator
            if request.method.value == "PATCH" and request.subresource == "status" and request.name == name
        }


@pytest_asyncio.fixture()
async def cluster(kube: Kube, tls: TlsFiles, tmp_path: Path) -> AsyncIterator[Cluster]:
    context = tls.server_context()

    class TlsServer(_QuickServer):
        async def start_server(self, **kwargs: Any) -> None:
            await super().start_server(ssl=context, **kwargs)

    sa_dir = tmp_path / "serviceaccount"
    sa_dir.mkdir()
    (sa_dir / "token").write_text(TOKEN)
    (sa_dir / "namespace").write_text(NAMESPACE)
    (sa_dir / "ca.crt").write_bytes(tls.ca_file.read_bytes())
    async with kmock.Server(kube.emulator, server_cls=TlsServer) as server:
        yield Cluster(kube, "127.0.0.1", server.port, sa_dir)


@attrs.define
class Result:
    code: int
    stdout: str
    stderr: str


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "PYTHONPATH")}
    env = {
        **keep,
        "TARGET_DIR": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HOME": str(tmp_path / "home"),
        "PROGRESS_INTERVAL": "0.2",
        "STALL_TIMEOUT": "30",
    }
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env.update(extra)
    return env


async def start(args: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        AIM_ENGINE, "artifact", *args, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )


async def finish(process: asyncio.subprocess.Process, timeout: float = 60) -> Result:
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    assert process.returncode is not None
    return Result(process.returncode, stdout.decode(), stderr.decode())


async def run(args: list[str], env: dict[str, str], timeout: float = 60) -> Result:
    """Run ``aim-engine artifact <args>`` without blocking the emulator's event loop."""
    return await finish(await start(args, env), timeout)
