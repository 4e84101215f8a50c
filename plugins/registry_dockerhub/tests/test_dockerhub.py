"""Docker Hub: docker.io goes to its registry API with the token service; wildcards go to the Hub API.

The registry API is played by Debian's docker-registry with token auth, the Hub
API by a local server following its paging contract (``page``/``page_size`` up
to 100, ``next`` as an absolute URL until ``null``). Base URLs come from the
plugin's environment variables, so nothing leaves the machine.
"""

import base64
import json
import math

import pytest
from aim_plugin_registry_dockerhub.client import DockerHubClient

from aim_core import ImageReference, RegistryCredentials, RegistryError, credentials_for, hookimpl
from aim_core.plugin.manager import get_plugin_manager, registry_client
from aim_core.registry import fetch_image_info, list_repositories, list_tags
from aim_testing.registry import JsonApi


@pytest.fixture
def hub_env(monkeypatch, oci_registry_token, registry_token_server, fast_registry_retries):
    monkeypatch.setenv("AIM_ENGINE_DOCKERHUB_REGISTRY_URL", oci_registry_token.url)
    monkeypatch.setenv("AIM_ENGINE_DOCKERHUB_AUTH_URL", registry_token_server.realm)
    monkeypatch.setenv("AIM_ENGINE_DOCKERHUB_AUTH_SERVICE", registry_token_server.service)
    return oci_registry_token


@pytest.fixture
def plugins():
    return get_plugin_manager(only=["registry_dockerhub", "registry_oci"], disabled=())


def test_docker_io_goes_to_the_dockerhub_client_and_other_hosts_do_not(plugins):
    assert isinstance(registry_client(plugins, "docker.io"), DockerHubClient)
    assert registry_client(plugins, "ghcr.io").name == "oci"
    client = DockerHubClient()
    assert client.registry.transport.base_url == "https://registry-1.docker.io"
    assert client.api.base_url == "https://hub.docker.com"


def test_aim_registry_client_hook_answers_none_for_other_hosts():
    from aim_plugin_registry_dockerhub import plugin

    assert plugin.aim_registry_client(registry="quay.io") is None
    assert isinstance(plugin.aim_registry_client(registry="docker.io"), DockerHubClient)


async def test_metadata_and_tags_through_the_token_service_without_a_401_round_trip(
    plugins, hub_env, registry_token_server, registry_front, monkeypatch
):
    front = registry_front(hub_env)
    monkeypatch.setenv("AIM_ENGINE_DOCKERHUB_REGISTRY_URL", front.url)
    pushed = front.registry.push_image(
        "amdenterpriseai/aim-hub-test", "0.8.4", labels={"org.amd.silogen.model.canonicalName": "x/y"}
    )
    front.clear()
    registry_token_server.requests.clear()
    image = ImageReference.parse("amdenterpriseai/aim-hub-test:0.8.4")
    info = await fetch_image_info(plugins, image, None)
    assert info.digest == pushed.digest and info.labels == {"org.amd.silogen.model.canonicalName": "x/y"}
    assert [(r.method, r.answered, r.authorization) for r in front.log] == [
        ("GET", 200, "bearer"),
        ("GET", 200, "bearer"),
    ]
    assert [r.user for r in registry_token_server.requests] == [None]  # one anonymous token
    assert await list_tags(plugins, "docker.io", "amdenterpriseai/aim-hub-test", None) == ["0.8.4"]


async def test_private_image_with_the_conventional_docker_hub_secret_key(plugins, hub_env):
    pushed = hub_env.push_image("private/aim-secret", "1.0", labels={"private": "yes"})
    config = {"auths": {"https://index.docker.io/v1/": {"auth": base64.b64encode(b"alice:alice-pw").decode()}}}
    secret = {
        "metadata": {"name": "hub"},
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }
    credentials = credentials_for("docker.io", [secret])
    image = ImageReference.parse("docker.io/private/aim-secret:1.0")
    assert (await fetch_image_info(plugins, image, credentials)).digest == pushed.digest
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, image, None)
    assert (info.value.kind, info.value.registry) == ("auth", "docker.io")
    assert "docker.io/private/aim-secret:1.0" in str(info.value)


# ---------------------------------------------------------------------------
# Hub API for repository wildcards
# ---------------------------------------------------------------------------


class FakeHub:
    """The Hub API's repositories listing, with page/page_size, ``next`` links and login."""

    def __init__(self, repos, private=(), users=None):
        self.repos = repos
        self.private = set(private)
        self.users = users or {}
        self.api = JsonApi(self.route)

    def route(self, request):
        if request.method == "POST" and request.path == "/v2/auth/token":
            body = request.body or {}
            if self.users.get(body.get("identifier")) != body.get("secret"):
                return 401, {}, {"detail": "Incorrect authentication credentials"}
            return 200, {}, {"access_token": f"jwt-{body['identifier']}"}
        parts = request.path.strip("/").split("/")
        if parts[:2] != ["v2", "namespaces"] or len(parts) != 4 or parts[3] != "repositories":
            return 404, {}, {"message": "not found"}
        namespace = parts[2]
        names = self.repos.get(namespace)
        if names is None:
            return 404, {}, {"message": "object not found"}
        authorized = request.authorization.startswith("Bearer jwt-")
        visible = [n for n in names if authorized or f"{namespace}/{n}" not in self.private]
        size = min(int(request.query.get("page_size", 10)), 100)
        page = int(request.query.get("page", 1))
        chunk = visible[(page - 1) * size : page * size]
        last = max(1, math.ceil(len(visible) / size))
        base = f"{self.api.url}{request.path}?page_size={size}"
        return (
            200,
            {},
            {
                "count": len(visible),
                "next": f"{base}&page={page + 1}" if page < last else None,
                "previous": f"{base}&page={page - 1}" if page > 1 else None,
                "results": [{"name": n, "namespace": namespace, "repository_type": "image"} for n in chunk],
            },
        )


@pytest.fixture
def hub_api(monkeypatch, fast_registry_retries):
    names = [f"aim-model-{i:03}" for i in range(230)] + ["other-thing", "aim-private"]
    hub = FakeHub({"amdenterpriseai": names}, private={"amdenterpriseai/aim-private"}, users={"alice": "alice-pw"})
    hub.api.start()
    monkeypatch.setenv("AIM_ENGINE_DOCKERHUB_API_URL", hub.api.url)
    yield hub
    hub.api.stop()


async def test_wildcards_walk_every_hub_api_page(plugins, hub_api):
    found = await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-model-*", None)
    assert found == [f"amdenterpriseai/aim-model-{i:03}" for i in range(230)]
    pages = [r for r in hub_api.api.requests if r.path.endswith("/repositories")]
    assert [r.query.get("page", "1") for r in pages] == ["1", "2", "3"]
    assert all(r.query["page_size"] == "100" for r in pages)


async def test_the_hub_api_429_is_retried_after_retry_after(plugins, hub_api):
    hub_api.api.fail(r"/repositories", 429, times=2, headers={"Retry-After": "0"})
    found = await list_repositories(plugins, "docker.io", "amdenterpriseai/other-*", None)
    assert found == ["amdenterpriseai/other-thing"]
    assert [r.answered for r in hub_api.api.requests][:3] == [429, 429, 200]


async def test_private_repositories_are_listed_with_the_pull_secret_user(plugins, hub_api):
    creds = RegistryCredentials(username="alice", password="alice-pw")
    assert await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", creds) == [
        "amdenterpriseai/aim-private"
    ]
    assert await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", None) == []
    logins = [r for r in hub_api.api.requests if r.path == "/v2/auth/token"]
    assert len(logins) == 1 and logins[0].body == {"identifier": "alice", "secret": "alice-pw"}


async def test_a_hub_login_is_not_reused_for_the_same_user_with_a_wrong_password(plugins, hub_api):
    right = RegistryCredentials(username="alice", password="alice-pw")
    assert await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", right) == [
        "amdenterpriseai/aim-private"
    ]
    wrong = RegistryCredentials(username="alice", password="a-guess-123")
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", wrong)
    assert info.value.kind == "auth"
    logins = [r.body for r in hub_api.api.requests if r.path == "/v2/auth/token"]
    assert logins == [{"identifier": "alice", "secret": "alice-pw"}, {"identifier": "alice", "secret": "a-guess-123"}]


async def test_a_refused_hub_login_is_an_auth_error_without_the_password(plugins, hub_api):
    creds = RegistryCredentials(username="alice", password="wrong-password-x")
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "docker.io", "amdenterpriseai/*", creds)
    assert info.value.kind == "auth" and "wrong-password-x" not in str(info.value)


async def test_an_unknown_namespace_is_not_found(plugins, hub_api):
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "docker.io", "nobody-here/*", None)
    assert (info.value.kind, info.value.reason) == ("not_found", "RepositoryNotFound")
    assert "nobody-here" in str(info.value)


@pytest.mark.parametrize("pattern", ["*", "amd*/aim", "*/aim-*"])
async def test_a_wildcard_namespace_is_refused_before_any_request(plugins, hub_api, pattern):
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, "docker.io", pattern, None)
    assert (info.value.kind, info.value.reason) == ("invalid", "InvalidRepositoryPattern")
    assert hub_api.api.requests == []


async def test_a_third_party_plugin_registered_first_wins_docker_io():
    class Mirror:
        name = "mirror"

    class MirrorPlugin:
        @hookimpl(tryfirst=True)
        def aim_registry_client(self, registry):
            return Mirror() if registry == "docker.io" else None

    pm = get_plugin_manager(only=["registry_dockerhub", "registry_oci"], disabled=())
    pm.register(MirrorPlugin(), name="mirror")
    assert registry_client(pm, "docker.io").name == "mirror"


async def test_an_expired_hub_token_is_replaced_by_logging_in_again(plugins, hub_api):
    creds = RegistryCredentials(username="alice", password="alice-pw")
    assert await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", creds) == [
        "amdenterpriseai/aim-private"
    ]
    hub_api.api.fail(r"/repositories", 401)  # the JWT the client holds is refused once
    assert await list_repositories(plugins, "docker.io", "amdenterpriseai/aim-p*", creds) == [
        "amdenterpriseai/aim-private"
    ]
    assert len([r for r in hub_api.api.requests if r.path == "/v2/auth/token"]) == 2
