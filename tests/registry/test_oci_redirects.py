"""Blobs redirected to a CDN (as Docker Hub and GHCR do) are followed without sending the credentials there."""

import pytest

from aim_core import ImageReference, RegistryCredentials
from aim_core.registry import fetch_image_info
from aim_testing.registry import BlobCdn, Registry, RegistryServer, find_registry_binary
from aim_testing.registry.fixtures import ADMIN, USERS


@pytest.fixture(scope="module")
def redirecting_registry():
    if find_registry_binary() is None:
        pytest.skip("docker-registry is not installed")
    cdn = BlobCdn()
    server = RegistryServer(auth="htpasswd", users=USERS, redirect_to=cdn.url).start()
    cdn.serve(server.storage)
    registry = Registry(
        server.url,
        storage=server.storage,
        admin=ADMIN,
        credentials=RegistryCredentials(username=ADMIN[0], password=ADMIN[1]),
    )
    yield registry, cdn
    registry.close()
    server.stop()
    cdn.stop()


async def test_config_blob_comes_from_the_cdn_without_authorization(plugins, redirecting_registry, unique_repo):
    registry, cdn = redirecting_registry
    pushed = registry.push_image(unique_repo, "1.0", labels={"via": "cdn"})
    cdn.requests.clear()
    info = await fetch_image_info(plugins, ImageReference.parse(pushed.reference), registry.credentials)
    assert info.labels == {"via": "cdn"}
    [(path, headers)] = cdn.requests
    assert pushed.config_digest.split(":")[1] in path
    assert "authorization" not in headers
