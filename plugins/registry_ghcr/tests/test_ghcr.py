"""GHCR: ghcr.io with its token service and Link paging; organisation wildcards via the GitHub packages API.

The registry is Debian's docker-registry with token auth behind a front that
pages tags 100 at a time with ``Link`` (as GHCR does); the GitHub REST API is a
local server following its contract (``per_page``/``page``, ``Link`` with
``rel="next"``, a token required). Base URLs come from the plugin's environment.
"""

import base64
import json
import math
import time

import pytest
from aim_plugin_registry_ghcr import plugin
from aim_plugin_registry_ghcr.client import GhcrClient

from aim_core import ImageReference, RegistryCredentials, RegistryError, credentials_for
from aim_core.plugin.manager import get_plugin_manager, registry_client
from aim_core.registry import fetch_image_info, list_repositories, list_tags
from aim_testing.registry import JsonApi

PAT = "ghp_testtoken0123456789"


@pytest.fixture
def plugins():
    return get_plugin_manager(only=["registry_ghcr", "registry_oci"], disabled=())


@pytest.fixture
def ghcr(monkeypatch, oci_registry_token, registry_token_server, registry_front, fast_registry_retries):
    front = registry_front(oci_registry_token, page_size=100)
    monkeypatch.setenv("AIM_ENGINE_GHCR_REGISTRY_URL", front.url)
    monkeypatch.setenv("AIM_ENGINE_GHCR_AUTH_URL", registry_token_server.realm)
    monkeypatch.setenv("AIM_ENGINE_GHCR_AUTH_SERVICE", registry_token_server.service)
    return front


def pull_secret(user, token):
    config = {
        "auths": {
            "ghcr.io": {
                "username": user,
                "password": token,
                "auth": base64.b64encode(f"{user}:{token}".encode()).decode(),
            }
        }
    }
    return {
        "metadata": {"name": "ghcr"},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }


def test_ghcr_io_goes_to_the_ghcr_client(plugins):
    assert isinstance(registry_client(plugins, "ghcr.io"), GhcrClient)
    assert registry_client(plugins, "docker.io").name == "oci"  # with only these two plugins loaded
    assert plugin.aim_registry_client(registry="quay.io") is None
    client = GhcrClient()
    assert (client.registry.transport.base_url, client.api.base_url) == ("https://ghcr.io", "https://api.github.com")


async def test_public_metadata_through_the_token_service(plugins, ghcr, registry_token_server):
    pushed = ghcr.registry.push_image("amd/aim-ghcr", "0.9.0", labels={"k": "v"})
    ghcr.clear()
    registry_token_server.requests.clear()
    info = await fetch_image_info(plugins, ImageReference.parse("ghcr.io/amd/aim-ghcr:0.9.0"), None)
    assert (info.digest, info.labels) == (pushed.digest, {"k": "v"})
    assert [r.answered for r in ghcr.log] == [200, 200]  # no 401 round trip
    assert [r.user for r in registry_token_server.requests] == [None]


async def test_tags_are_paged_by_link(plugins, ghcr, oci_registry_token):
    pushed = ghcr.registry.push_image("amd/aim-many", "latest")
    oci_registry_token.add_tags("amd/aim-many", pushed.digest, [f"1.{i}.0" for i in range(260)])
    ghcr.clear()
    tags = await list_tags(plugins, "ghcr.io", "amd/aim-many", None)
    assert tags == sorted([*(f"1.{i}.0" for i in range(260)), "latest"])
    assert len(ghcr.requests("/tags/list")) == 3


async def test_private_image_with_a_ghcr_pull_secret(plugins, ghcr):
    ghcr.registry.push_image("private/aim-ghcr", "1.0", labels={"private": "1"})
    credentials = credentials_for("ghcr.io", [pull_secret("alice", "alice-pw")])
    image = ImageReference.parse("ghcr.io/private/aim-ghcr:1.0")
    assert (await fetch_image_info(plugins, image, credentials)).labels == {"private": "1"}
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, image, None)
    assert (info.value.kind, info.value.registry) == ("auth", "ghcr.io")


# ---------------------------------------------------------------------------
# GitHub packages API
# ---------------------------------------------------------------------------


class FakeGitHub:
    def __init__(self, orgs, users):
        self.orgs, self.users = orgs, users
        self.api = JsonApi(self.route)
        self.exhausted_until = None

    def route(self, request):
        if request.authorization != f"Bearer {PAT}":
            return 401, {}, {"message": "Requires authentication"}
        if self.exhausted_until is not None:
            return (
                403,
                {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(self.exhausted_until))},
                {"message": "API rate limit exceeded"},
            )
        kind, owner, what = (request.path.strip("/").split("/") + ["", "", ""])[:3]
        packages = (self.orgs if kind == "orgs" else self.users if kind == "users" else {}).get(owner)
        if packages is None or what != "packages" or request.query.get("package_type") != "container":
            return 404, {}, {"message": "Not Found"}
        per_page = min(int(request.query.get("per_page", 30)), 100)
        page = int(request.query.get("page", 1))
        last = max(1, math.ceil(len(packages) / per_page))
        links = []
        base = f"{self.api.url}{request.path}?package_type=container&per_page={per_page}"
        if page < last:
            links += [f'<{base}&page={page + 1}>; rel="next"', f'<{base}&page={last}>; rel="last"']
        body = [
            {"id": i, "name": n, "package_type": "container"}
            for i, n in enumerate(packages[(page - 1) * per_page : page * per_page])
        ]
        return 200, ({"Link": ", ".join(links)} if links else {}), body


@pytest.fixture
def github(monkeypatch, fast_registry_retries):
    fake = FakeGitHub(
        {"amd": [f"aim-{i:03}" for i in range(205)] + ["tools", "team/aim-nested"]},
        {"someone": ["aim-personal", "dotfiles"]},
    )
    fake.api.start()
    monkeypatch.setenv("AIM_ENGINE_GHCR_API_URL", fake.api.url)
    yield fake
    fake.api.stop()


async def test_organisation_wildcards_walk_every_packages_page(plugins, github):
    credentials = credentials_for("ghcr.io", [pull_secret("bot", PAT)])
    found = await list_repositories(plugins, "ghcr.io", "amd/aim-*", credentials)
    assert found == sorted([f"amd/aim-{i:03}" for i in range(205)])
    assert [r.query.get("page", "1") for r in github.api.requests] == ["1", "2", "3"]
    assert all(r.query["per_page"] == "100" for r in github.api.requests)
    assert await list_repositories(plugins, "ghcr.io", "amd/team/*", credentials) == ["amd/team/aim-nested"]


async def test_a_user_account_is_listed_when_no_organisation_has_that_name(plugins, github):
    credentials = RegistryCredentials(username="bot", password=PAT)
    assert await list_repositories(plugins, "ghcr.io", "someone/aim-*", credentials) == ["someone/aim-personal"]
    assert [r.path for r in github.api.requests] == ["/orgs/someone/packages", "/users/someone/packages"]


async def test_without_a_token_nothing_is_asked_and_the_error_says_what_to_add(plugins, github):
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "ghcr.io", "amd/aim-*", None)
    assert info.value.kind == "auth" and "ghcr.io entry" in str(info.value)
    assert github.api.requests == []


async def test_a_refused_token_is_an_auth_error_without_the_token(plugins, github):
    with pytest.raises(RegistryError) as info:
        await list_repositories(
            plugins, "ghcr.io", "amd/aim-*", RegistryCredentials(username="bot", password="ghp_wrong_token")
        )
    assert (info.value.kind, info.value.status) == ("auth", 401)
    assert "ghp_wrong_token" not in str(info.value)


async def test_a_used_up_api_quota_is_a_rate_limit_with_its_reset_time(plugins, github):
    github.exhausted_until = time.time() + 1800
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "ghcr.io", "amd/aim-*", RegistryCredentials(username="bot", password=PAT))
    assert info.value.kind == "rate_limited"
    assert 1700 < info.value.retry_after <= 1800
    assert len(github.api.requests) == 1


async def test_an_unknown_owner_is_not_found(plugins, github):
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "ghcr.io", "nobody/*", RegistryCredentials(username="bot", password=PAT))
    assert (info.value.kind, info.value.reason) == ("not_found", "RepositoryNotFound")
