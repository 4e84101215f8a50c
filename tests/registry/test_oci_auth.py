"""Basic and bearer-token auth against real registries, with credentials from a pull secret."""

import pytest

from aim_core import ImageReference, RegistryCredentials, RegistryError, credentials_for
from aim_core.registry import fetch_image_info, list_repositories, list_tags


def ref(text):
    return ImageReference.parse(text)


async def test_basic_auth_with_credentials_from_a_dockerconfigjson_secret(plugins, oci_registry_basic, unique_repo):
    registry = oci_registry_basic
    pushed = registry.push_image(unique_repo, "1.0", labels={"k": "v"})
    secret = registry.pull_secret("pull", "team")
    credentials = credentials_for(registry.host, [secret])
    assert credentials == registry.credentials
    assert (await fetch_image_info(plugins, ref(pushed.reference), credentials)).labels == {"k": "v"}
    assert await list_tags(plugins, registry.host, unique_repo, credentials) == ["1.0"]


async def test_basic_auth_without_credentials_is_an_auth_failure(plugins, oci_registry_basic, unique_repo):
    pushed = oci_registry_basic.push_image(unique_repo, "1.0")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), None)
    error = info.value
    assert (error.kind, error.reason, error.status, error.permanent) == ("auth", "Unauthorized", 401, True)
    assert pushed.reference in str(error) and "add a pull secret" in str(error)


async def test_a_wrong_password_never_appears_in_the_error(plugins, oci_registry_basic, unique_repo):
    pushed = oci_registry_basic.push_image(unique_repo, "1.0")
    wrong = RegistryCredentials(username="alice", password="Wrong-Password-123")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), wrong)
    assert info.value.kind == "auth"
    assert "Wrong-Password-123" not in str(info.value) and "credentials were refused" in str(info.value)


async def test_bearer_flow_anonymous_pull_of_a_public_repository(plugins, oci_registry_token, unique_repo):
    pushed = oci_registry_token.push_image(unique_repo, "1.0", labels={"public": "yes"})
    assert (await fetch_image_info(plugins, ref(pushed.reference), None)).labels == {"public": "yes"}
    assert await list_tags(plugins, oci_registry_token.host, unique_repo, None) == ["1.0"]


async def test_bearer_flow_sends_credentials_to_the_token_service_only(
    plugins, oci_registry_token, registry_token_server, registry_front, unique_repo
):
    front = registry_front(oci_registry_token)
    repo = f"private/{unique_repo}"
    pushed = front.registry.push_image(repo, "1.0", labels={"private": "yes"})
    front.clear()
    registry_token_server.requests.clear()
    credentials = credentials_for(front.host, [front.registry.pull_secret()])
    info = await fetch_image_info(plugins, ref(pushed.reference), credentials)
    assert info.labels == {"private": "yes"}
    assert {r.authorization for r in front.log} <= {"", "bearer"}  # the registry never sees the password
    assert [(r.user, r.scope) for r in registry_token_server.requests] == [("alice", [f"repository:{repo}:pull"])]
    # the token is reused: a second image of the same repository asks the token service nothing
    other = front.registry.push_image(repo, "2.0", labels={"n": "2"})
    registry_token_server.requests.clear()
    assert (await fetch_image_info(plugins, ref(other.reference), credentials)).labels == {"n": "2"}
    assert registry_token_server.requests == []


async def test_bearer_flow_private_repository_needs_credentials(plugins, oci_registry_token, unique_repo):
    pushed = oci_registry_token.push_image(f"private/{unique_repo}", "1.0")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), None)
    assert (info.value.kind, info.value.reason) == ("auth", "Unauthorized")
    assert "needs credentials" in str(info.value) and pushed.reference in str(info.value)


async def test_bearer_flow_wrong_password_is_refused_by_the_token_service(plugins, oci_registry_token, unique_repo):
    pushed = oci_registry_token.push_image(unique_repo, "1.0")
    wrong = RegistryCredentials(username="alice", password="not-alices-password")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), wrong)
    assert (info.value.kind, info.value.status) == ("auth", 401)
    assert "token service" in str(info.value) and "not-alices-password" not in str(info.value)


async def test_catalog_through_the_token_flow_needs_a_user(plugins, oci_registry_token, unique_repo):
    oci_registry_token.push_image(unique_repo + "-a", "1")
    oci_registry_token.push_image(unique_repo + "-b", "1")
    found = await list_repositories(
        plugins, oci_registry_token.host, unique_repo + "-*", oci_registry_token.credentials
    )
    assert found == [unique_repo + "-a", unique_repo + "-b"]
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, oci_registry_token.host, "t/*", None)
    assert info.value.kind == "auth"


async def test_a_token_got_with_the_right_password_is_not_reused_for_a_wrong_one(
    plugins, oci_registry_token, unique_repo
):
    pushed = oci_registry_token.push_image(f"private/{unique_repo}", "1.0", labels={"private": "yes"})
    right = oci_registry_token.credentials
    assert (await fetch_image_info(plugins, ref(pushed.reference), right)).labels == {"private": "yes"}
    for other in (RegistryCredentials(username=right.username, password="a-guess"), None):
        with pytest.raises(RegistryError) as info:
            await fetch_image_info(plugins, ref(pushed.reference), other)
        assert info.value.kind == "auth", other


@pytest.mark.parametrize("flow", ["basic", "token"])
async def test_what_was_read_with_credentials_is_not_served_to_callers_without_them(
    plugins, oci_registry_basic, oci_registry_token, unique_repo, flow
):
    registry = oci_registry_basic if flow == "basic" else oci_registry_token
    pushed = registry.push_image(f"private/{unique_repo}", "1.0", labels={"private": "yes"})
    by_digest = ref(f"{registry.host}/private/{unique_repo}@{pushed.digest}")
    right = registry.credentials
    for image in (ref(pushed.reference), by_digest):
        assert (await fetch_image_info(plugins, image, right)).labels == {"private": "yes"}
    for image in (ref(pushed.reference), by_digest):
        for other in (RegistryCredentials(username=right.username, password="a-guess"), None):
            with pytest.raises(RegistryError) as info:
                await fetch_image_info(plugins, image, other)
            assert info.value.kind == "auth", (image, other)
    # the right credentials still read it, from the cache
    assert (await fetch_image_info(plugins, by_digest, right)).labels == {"private": "yes"}
