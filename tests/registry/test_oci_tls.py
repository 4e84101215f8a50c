"""HTTPS registries: standard trust, SSL_CERT_FILE, and a private CA through AIM_ENGINE_REGISTRY_CA_FILE."""

import pytest
import trustme

from aim_core import ImageReference, RegistryError
from aim_core.registry.oci import OciRegistryClient
from aim_testing.registry import Registry, RegistryServer, find_registry_binary


@pytest.fixture(scope="module")
def tls_registry(tmp_path_factory):
    if find_registry_binary() is None:
        pytest.skip("docker-registry is not installed")
    base = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    ca_file, cert_file, key_file = base / "ca.pem", base / "cert.pem", base / "key.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    cert.private_key_pem.write_to_path(str(key_file))
    cert_file.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
    server = RegistryServer(tls=(str(cert_file), str(key_file))).start()
    registry = Registry(server.url, storage=server.storage, verify=str(ca_file))
    registry.push_image("tls/model", "1.0", labels={"tls": "yes"})
    yield server, ca_file
    registry.close()
    server.stop()


def client(server):
    # a name that is not loopback, so the client speaks HTTPS; the address is the local server
    return OciRegistryClient("registry.example.com", base_url=server.url)


IMAGE = ImageReference.parse("registry.example.com/tls/model:1.0")


async def test_an_unknown_ca_is_a_tls_error_saying_how_to_trust_it(tls_registry, monkeypatch):
    server, _ = tls_registry
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_RETRIES", "0")
    with pytest.raises(RegistryError) as info:
        await client(server).image_info(IMAGE, None)
    error = info.value
    assert (error.kind, error.reason) == ("unavailable", "TLSError")
    assert "AIM_ENGINE_REGISTRY_CA_FILE" in str(error) and "registry.example.com/tls/model:1.0" in str(error)


async def test_a_private_ca_file_is_trusted(tls_registry, monkeypatch):
    server, ca_file = tls_registry
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_CA_FILE", str(ca_file))
    assert (await client(server).image_info(IMAGE, None)).labels == {"tls": "yes"}


async def test_ssl_cert_file_is_honoured(tls_registry, monkeypatch):
    server, ca_file = tls_registry
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    assert (await client(server).image_info(IMAGE, None)).labels == {"tls": "yes"}
