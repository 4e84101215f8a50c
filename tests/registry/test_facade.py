"""The facade picks one client per host through the hook and turns failures into RegistryError."""

import asyncio

import pytest

from aim_core import ImageInfo, ImageReference, RegistryCredentials, RegistryError, hookimpl
from aim_core.plugin.manager import get_plugin_manager
from aim_core.registry import fetch_image_info, list_repositories, list_tags


class Recording:
    """A registry client that answers from memory and counts what it was asked."""

    name = "recording"

    def __init__(self, registry: str, fail: Exception | None = None, slow: float = 0.0) -> None:
        self.registry = registry
        self.fail = fail
        self.slow = slow
        self.calls: list[str] = []

    async def _maybe_fail(self, what: str) -> None:
        self.calls.append(what)
        if self.slow:
            await asyncio.sleep(self.slow)
        if self.fail is not None:
            raise self.fail

    async def image_info(self, image, credentials):
        await self._maybe_fail(f"image {image}")
        return ImageInfo(digest="sha256:" + "0" * 64, labels={"a": "b"}, architecture="amd64", os="linux")

    async def list_tags(self, repository, credentials):
        await self._maybe_fail(f"tags {repository}")
        return ["b", "a", "b", "latest"]

    async def list_repositories(self, pattern, credentials):
        await self._maybe_fail(f"repos {pattern}")
        return ["org/z", "org/a"]


class ThirdParty:
    """A third-party registry plugin answering for one host only."""

    def __init__(self, host: str, **kwargs) -> None:
        self.host = host
        self.kwargs = kwargs
        self.made: list[Recording] = []

    @hookimpl
    def aim_registry_client(self, registry):
        if registry != self.host:
            return None
        client = Recording(registry, **self.kwargs)
        self.made.append(client)
        return client


def manager(plugin: ThirdParty):
    pm = get_plugin_manager(load_entrypoints=False)
    pm.register(plugin, name="thirdparty")
    return pm


async def test_one_client_per_host_serves_every_call():
    plugin = ThirdParty("registry.example.com")
    pm = manager(plugin)
    image = ImageReference.parse("registry.example.com/org/model:1")
    info = await fetch_image_info(pm, image, None)
    assert info.labels == {"a": "b"}
    assert await list_tags(pm, "registry.example.com", "org/model", None) == ["a", "b", "latest"]
    assert await list_repositories(pm, "Registry.Example.com", "org/*", None) == ["org/a", "org/z"]
    [client] = plugin.made
    assert client.calls == ["image registry.example.com/org/model:1", "tags org/model", "repos org/*"]


async def test_a_host_no_plugin_handles_is_unavailable_not_a_crash():
    pm = manager(ThirdParty("registry.example.com"))
    with pytest.raises(RegistryError) as info:
        await list_tags(pm, "quay.io", "org/model", None)
    assert (info.value.kind, info.value.reason, info.value.registry) == (
        "unavailable",
        "RegistryUnavailable",
        "quay.io",
    )
    assert "quay.io" in str(info.value) and "is the plugin installed" in str(info.value)
    assert info.value.transient


async def test_registry_errors_pass_through_unchanged():
    error = RegistryError("not_found", "image r.io/a:b not found on registry r.io", registry="r.io", image="r.io/a:b")
    pm = manager(ThirdParty("r.io", fail=error))
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(pm, ImageReference.parse("r.io/a:b"), None)
    assert info.value is error
    assert (info.value.reason, info.value.permanent) == ("ImageNotFound", True)


async def test_a_client_crash_becomes_unavailable_without_the_credentials():
    creds = RegistryCredentials(username="alice", password="s3cret-pw")
    pm = manager(ThirdParty("r.io", fail=RuntimeError("login alice:s3cret-pw refused")))
    with pytest.raises(RegistryError) as info:
        await list_tags(pm, "r.io", "org/model", creds)
    message = str(info.value)
    assert "s3cret-pw" not in message and "alice" not in message
    assert "r.io" in message and "org/model" in message and "RuntimeError" in message
    assert (info.value.kind, info.value.reason) == ("unavailable", "RegistryClientError")


async def test_the_whole_call_is_bounded_by_the_deadline(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_DEADLINE", "0.05")
    pm = manager(ThirdParty("r.io", slow=5))
    with pytest.raises(RegistryError) as info:
        await list_tags(pm, "r.io", "org/model", None)
    assert (info.value.kind, info.value.reason) == ("timeout", "NetworkTimeout")
    assert "r.io" in str(info.value) and "org/model" in str(info.value)


def test_error_kinds_decide_permanence():
    permanent = {
        k
        for k in ("auth", "not_found", "invalid", "rate_limited", "unavailable", "timeout")
        if RegistryError(k, "m", registry="r").permanent
    }
    assert permanent == {"auth", "not_found", "invalid"}
    with pytest.raises(ValueError, match="unknown registry error kind"):
        RegistryError("weird", "m", registry="r")


async def test_an_unusable_operator_setting_is_a_registry_error_naming_the_variable(monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_TIMEOUT", "soon")
    pm = get_plugin_manager(only=["registry_oci"], disabled=())
    with pytest.raises(RegistryError) as info:
        await list_tags(pm, "quay.io", "org/model", None)
    assert (info.value.kind, info.value.reason) == ("invalid", "InvalidRegistrySetting")
    assert "AIM_ENGINE_REGISTRY_TIMEOUT='soon'" in str(info.value)
