"""The API adapter (aim_core.kube): credentials, TLS verification, and how failures are classified."""

from __future__ import annotations

import asyncio
import base64
import logging
import socket
import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import kopf
import kubernetes.config.kube_config
import pytest
import pytest_asyncio
import trustme
import yaml
from aiohttp import web

from aim_core.kube import Credentials, Kube, proxy_for
from aim_core.operator import handlers
from aim_core.operator.login import credentials as login_credentials
from aim_core.reconcile.errors import ApiError, NetworkError
from aim_core.reconcile.resources import EVENTS, SERVICES
from aim_testing.fixtures import Kube as EmulatedApi

NS = "team"


def service(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"model": {"name": "m"}},
    }


# --------------------------------------------------------------------------- against the cluster (both backends)


@pytest.fixture()
def team(kube: EmulatedApi) -> EmulatedApi:
    """The namespace the tests write to (a real API server refuses creates in one that does not exist)."""
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    return kube


async def test_verbs_round_trip(kube: EmulatedApi, team: EmulatedApi) -> None:
    client = Kube(Credentials(server=kube.url))
    try:
        created = await client.create(SERVICES, service("a"))
        applied = await client.apply(
            SERVICES, {**service("b"), "spec": {"model": {"name": "other"}}}, field_manager="aim-engine"
        )
        patched = await client.patch(SERVICES, NS, "a", {"status": {"status": "Pending"}}, subresource="status")
        listed = await client.list(SERVICES, NS)
        missing = await client.get(SERVICES, NS, "nope")
        await client.delete(SERVICES, NS, "nope")  # a missing object is not an error
        await client.delete(SERVICES, NS, "b")
    finally:
        await client.aclose()

    assert created["metadata"]["uid"]
    assert applied["spec"]["model"]["name"] == "other"
    assert patched["status"]["status"] == "Pending"
    assert [(o["kind"], o["metadata"]["name"]) for o in listed] == [("AIMService", "a"), ("AIMService", "b")]
    assert missing is None
    assert kube.get("aimservices", NS, "b") is None or kube.get("aimservices", NS, "b")["metadata"].get(
        "deletionTimestamp"
    )
    assert client.counter.by_verb == {"create": 1, "apply": 1, "patch": 1, "list": 1, "get": 1, "delete": 2}


async def test_a_failure_status_becomes_an_api_error_with_its_reason(kube: EmulatedApi, team: EmulatedApi) -> None:
    client = Kube(Credentials(server=kube.url))
    try:
        await client.create(SERVICES, service("a"))
        with pytest.raises(ApiError) as caught:
            await client.create(SERVICES, service("a"))
    finally:
        await client.aclose()

    assert caught.value.status == 409
    assert caught.value.reason == "AlreadyExists"
    assert "POST /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimservices" in str(caught.value)


async def test_pod_logs_come_back_as_text(kube: EmulatedApi) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": NS}})
    kube.set_log(NS, "p", "line 1\nline 2\n")
    client = Kube(Credentials(server=kube.url))
    try:
        text = await client.read_log(NS, "p", tail_lines=5)
    finally:
        await client.aclose()

    assert text == "line 1\nline 2\n"


async def test_the_user_agent_names_the_operator(kube: EmulatedApi) -> None:
    client = Kube(Credentials(server=kube.url))
    try:
        await client.list(EVENTS, NS)
    finally:
        await client.aclose()

    assert kube.count("list", agent="aim-engine") == 1


# --------------------------------------------------------------------------- credentials


@pytest_asyncio.fixture()
async def recorder() -> AsyncIterator[tuple[str, list[web.Request]]]:
    """A plain HTTP server answering {} and keeping every request (headers included)."""
    seen: list[web.Request] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request)
        return web.json_response({"items": []})

    runner = web.AppRunner(_app(handle))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    yield f"http://127.0.0.1:{port}", seen
    await runner.cleanup()


def _app(handle: Any) -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def test_a_token_is_sent_as_a_bearer_header(recorder) -> None:
    url, seen = recorder
    client = Kube(Credentials(server=url, token="s3cret"))
    try:
        await client.list(SERVICES, NS)
    finally:
        await client.aclose()

    assert seen[0].headers["Authorization"] == "Bearer s3cret"
    assert seen[0].headers["User-Agent"] == "aim-engine"
    assert seen[0].path == "/apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimservices"


async def test_a_username_and_password_are_sent_as_basic_auth(recorder) -> None:
    url, seen = recorder
    client = Kube(Credentials(server=url, username="admin", password="pw"))
    try:
        await client.list(SERVICES, NS, label_selector="a=b", field_selector="metadata.name=x")
    finally:
        await client.aclose()

    assert seen[0].headers["Authorization"] == "Basic YWRtaW46cHc="
    assert dict(seen[0].query) == {"labelSelector": "a=b", "fieldSelector": "metadata.name=x"}


async def test_writes_send_json_with_their_patch_types(recorder) -> None:
    url, seen = recorder
    client = Kube(Credentials(server=url))
    bodies = []
    try:
        await client.apply(SERVICES, service("a"), field_manager="aim-engine")
        await client.patch(SERVICES, NS, "a", {"status": {"x": 1}}, subresource="status")
        await client.create(SERVICES, service("b"))
    finally:
        await client.aclose()
    for request in seen:
        bodies.append(request.headers["Content-Type"])

    assert bodies == ["application/apply-patch+yaml", "application/merge-patch+json", "application/json"]
    assert dict(seen[0].query) == {"fieldManager": "aim-engine", "force": "true"}
    assert seen[1].path.endswith("/aimservices/a/status")


# --------------------------------------------------------------------------- TLS


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest_asyncio.fixture()
async def tls_server(ca: trustme.CA) -> AsyncIterator[tuple[str, list[Any]]]:
    """An HTTPS server on 127.0.0.1 whose certificate the private CA signed; it asks for client certificates."""
    peers: list[Any] = []

    async def handle(request: web.Request) -> web.Response:
        peers.append(request.transport.get_extra_info("peercert") if request.transport else None)
        return web.json_response({"items": []})

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    ca.configure_trust(context)
    context.verify_mode = ssl.CERT_OPTIONAL
    runner = web.AppRunner(_app(handle))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001
    yield f"https://127.0.0.1:{port}", peers
    await runner.cleanup()


async def _list(creds: Credentials) -> list[dict[str, Any]]:
    client = Kube(creds)
    try:
        return await client.list(SERVICES, NS)
    finally:
        await client.aclose()


async def test_an_unknown_ca_is_refused(tls_server) -> None:
    url, _ = tls_server
    with pytest.raises(NetworkError) as caught:
        await _list(Credentials(server=url))

    assert caught.value.kind.value == "refused"
    assert "certificate" in str(caught.value).lower()


async def test_the_ca_from_a_file_or_from_data_is_trusted(tls_server, ca, tmp_path) -> None:
    url, _ = tls_server
    path = tmp_path / "ca.crt"
    ca.cert_pem.write_to_path(str(path))

    assert await _list(Credentials(server=url, ca_path=str(path))) == []
    assert await _list(Credentials(server=url, ca_data=ca.cert_pem.bytes())) == []


async def test_insecure_skips_verification(tls_server) -> None:
    url, _ = tls_server
    assert await _list(Credentials(server=url, insecure=True)) == []


async def test_a_client_certificate_is_presented(tls_server, ca, tmp_path) -> None:
    url, peers = tls_server
    cert = ca.issue_cert("aim-engine.example", common_name="aim-engine")
    cert_path, key_path = tmp_path / "client.crt", tmp_path / "client.key"
    cert.cert_chain_pems[0].write_to_path(str(cert_path))
    cert.private_key_pem.write_to_path(str(key_path))

    await _list(
        Credentials(
            server=url,
            ca_data=ca.cert_pem.bytes(),
            certificate_data=cert.cert_chain_pems[0].bytes(),
            private_key_data=cert.private_key_pem.bytes(),
        )
    )
    await _list(
        Credentials(
            server=url, ca_data=ca.cert_pem.bytes(), certificate_path=str(cert_path), private_key_path=str(key_path)
        )
    )

    assert [dict(x[0] for x in peer["subject"]).get("commonName") for peer in peers] == ["aim-engine"] * 2


def _files_holding(root: Path, secret: bytes) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file() and secret in path.read_bytes()]


@pytest.fixture()
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory (TMPDIR) for this test, empty at the start."""
    path = tmp_path / "tmp"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


async def test_an_inline_client_key_is_not_left_on_disk(tls_server, ca, scratch) -> None:
    url, peers = tls_server
    cert = ca.issue_cert("aim-engine.example", common_name="aim-engine")
    key = cert.private_key_pem.bytes()
    # as kopf's kubeconfig reader hands them over: base64 of the PEM, as strings
    creds = Credentials(
        server=url,
        ca_data=base64.b64encode(ca.cert_pem.bytes()).decode(),
        certificate_data=base64.b64encode(cert.cert_chain_pems[0].bytes()).decode(),
        private_key_data=base64.b64encode(key).decode(),
    )

    client = Kube(creds)
    left_after_building = _files_holding(scratch, key)
    try:
        assert await client.list(SERVICES, NS) == []
    finally:
        await client.aclose()

    assert left_after_building == []
    assert list(scratch.iterdir()) == []
    assert [dict(x[0] for x in peer["subject"]).get("commonName") for peer in peers] == ["aim-engine"]
    assert "BEGIN" not in repr(creds) and key.decode() not in repr(creds)


async def test_a_kubeconfig_with_an_inline_client_key_authenticates_and_leaves_no_key_on_disk(
    tls_server, ca, scratch, tmp_path
) -> None:
    url, peers = tls_server
    cert = ca.issue_cert("aim-engine.example", common_name="kubeconfig-user")
    key = cert.private_key_pem.bytes()
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "tls",
                "clusters": [
                    {
                        "name": "tls",
                        "cluster": {
                            "server": url,
                            "certificate-authority-data": base64.b64encode(ca.cert_pem.bytes()).decode(),
                        },
                    }
                ],
                "users": [
                    {
                        "name": "tls",
                        "user": {
                            "client-certificate-data": base64.b64encode(cert.cert_chain_pems[0].bytes()).decode(),
                            "client-key-data": base64.b64encode(key).decode(),
                        },
                    }
                ],
                "contexts": [{"name": "tls", "context": {"cluster": "tls", "user": "tls", "namespace": NS}}],
            }
        )
    )

    creds = login_credentials(str(config))
    left_after_login = _files_holding(scratch, key)
    await _list(creds)

    assert left_after_login == []
    assert list(scratch.iterdir()) == []
    assert creds.default_namespace == NS
    assert [dict(x[0] for x in peer["subject"]).get("commonName") for peer in peers] == ["kubeconfig-user"]


async def test_the_operators_login_hands_kopf_and_the_runtime_the_key_in_memory(
    tls_server, ca, scratch, tmp_path, monkeypatch
) -> None:
    url, peers = tls_server
    cert = ca.issue_cert("aim-engine.example", common_name="operator")
    key = cert.private_key_pem.bytes()
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "tls",
                "clusters": [
                    {
                        "name": "tls",
                        "cluster": {
                            "server": url,
                            "certificate-authority-data": base64.b64encode(ca.cert_pem.bytes()).decode(),
                        },
                    }
                ],
                "users": [
                    {
                        "name": "tls",
                        "user": {
                            "client-certificate-data": base64.b64encode(cert.cert_chain_pems[0].bytes()).decode(),
                            "client-key-data": base64.b64encode(key).decode(),
                        },
                    }
                ],
                "contexts": [{"name": "tls", "context": {"cluster": "tls", "user": "tls"}}],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(config))
    # as in a fresh operator process, where the kubernetes client reads $KUBECONFIG when imported
    monkeypatch.setattr(kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", str(config))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # not in a cluster: the kubeconfig is used
    given: list[Credentials] = []

    class Runtime:
        set_credentials = given.append

    info = handlers.login(
        memo=kopf.Memo(runtime=Runtime()), logger=logging.getLogger("test"), settings=kopf.OperatorSettings()
    )
    kopf_context = info.as_ssl_context()  # what kopf's own client builds from it
    left_after_login = _files_holding(scratch, key)
    await _list(given[0])

    assert left_after_login == [] and list(scratch.iterdir()) == []
    assert info.private_key_path is None and info.private_key_data
    assert kopf_context.verify_mode == ssl.CERT_REQUIRED
    assert [dict(x[0] for x in peer["subject"]).get("commonName") for peer in peers] == ["operator"]


# --------------------------------------------------------------------------- network failures


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_a_refused_connection_is_classified_refused() -> None:
    with pytest.raises(NetworkError) as caught:
        await _list(Credentials(server=f"http://127.0.0.1:{_free_port()}"))

    assert caught.value.kind.value == "refused"
    assert "GET /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimservices" in str(caught.value)


async def test_a_name_that_does_not_resolve_is_classified_dns() -> None:
    with pytest.raises(NetworkError) as caught:
        await _list(Credentials(server="https://aim-engine-test.invalid:6443"))

    assert caught.value.kind.value == "dns"


async def _serve(handler: Any) -> tuple[asyncio.AbstractServer, str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_no_answer_is_a_timeout() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        await asyncio.sleep(5)
        writer.close()

    server, url = await _serve(silent)
    client = Kube(Credentials(server=url), timeout=0.3)
    try:
        with pytest.raises(NetworkError) as caught:
            await client.list(SERVICES, NS)
    finally:
        await client.aclose()
        server.close()

    assert caught.value.kind.value == "timeout"


async def test_a_connection_closed_without_an_answer_is_a_reset() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.close()

    server, url = await _serve(hang_up)
    try:
        with pytest.raises(NetworkError) as caught:
            await _list(Credentials(server=url))
    finally:
        server.close()

    assert caught.value.kind.value == "reset"


async def test_a_server_error_without_a_status_body_keeps_its_text(recorder) -> None:
    async def broken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        writer.write(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\nbusy..."
        )
        await writer.drain()
        writer.close()

    server, url = await _serve(broken)
    try:
        with pytest.raises(ApiError) as caught:
            await _list(Credentials(server=url))
    finally:
        server.close()

    assert caught.value.status == 503
    assert "busy..." in str(caught.value)


def test_the_proxy_comes_from_the_environment_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "NO_PROXY",
        "no_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,.svc")

    assert proxy_for("https://api.cluster.example:6443") == "http://proxy.example:3128"
    assert proxy_for("https://kubernetes.default.svc") is None
    assert proxy_for("https://127.0.0.1:6443") is None
    assert proxy_for("http://api.cluster.example:8080") is None  # no HTTP_PROXY
