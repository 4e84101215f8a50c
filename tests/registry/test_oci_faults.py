"""429, 5xx, timeouts and network failures end as the right RegistryError, after bounded retries."""

import socket

import pytest

from aim_core import ImageReference, RegistryCredentials, RegistryError
from aim_core.registry import fetch_image_info, list_tags


def ref(text):
    return ImageReference.parse(text)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
async def test_a_passing_server_error_is_retried_away(plugins, oci_registry, registry_front, unique_repo, status):
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0", labels={"ok": "1"})
    front.clear()
    front.fail(r"/manifests/", status, times=2)
    assert (await fetch_image_info(plugins, ref(pushed.reference), None)).labels == {"ok": "1"}
    assert [r.answered for r in front.requests("/manifests/")] == [status, status, 200]


@pytest.mark.parametrize(("status", "reason"), [(500, "ServerError"), (503, "ServiceUnavailable")])
async def test_a_lasting_server_error_is_unavailable(
    plugins, oci_registry, registry_front, unique_repo, status, reason
):
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0")
    front.clear()
    front.fail(r"/manifests/", status, times=100)
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), None)
    error = info.value
    assert (error.kind, error.reason, error.status, error.transient) == ("unavailable", reason, status, True)
    assert pushed.reference in str(error) and front.host in str(error)
    assert len(front.requests("/manifests/")) == 4  # the first try and AIM_ENGINE_REGISTRY_RETRIES=3 retries


async def test_429_waits_for_retry_after_then_succeeds(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0", labels={"ok": "1"})
    front.clear()
    front.fail(r"/manifests/", 429, retry_after="1")
    assert (await fetch_image_info(plugins, ref(pushed.reference), None)).labels == {"ok": "1"}
    limited, passed = front.requests("/manifests/")
    assert (limited.answered, passed.answered) == (429, 200)
    assert passed.at - limited.at >= 1.0  # Retry-After honoured, although the backoff is milliseconds


async def test_429_with_a_long_retry_after_fails_at_once_carrying_it(
    plugins, oci_registry, registry_front, unique_repo
):
    front = registry_front(oci_registry)
    front.registry.push_image(unique_repo, "1.0")
    front.clear()
    front.fail(r"/tags/list", 429, retry_after="3600")
    with pytest.raises(RegistryError) as info:
        await list_tags(plugins, front.host, unique_repo, None)
    error = info.value
    assert (error.kind, error.reason, error.retry_after, error.transient) == ("rate_limited", "RateLimited", 3600, True)
    assert "retry after 3600s" in str(error) and unique_repo in str(error)
    assert len(front.log) == 1


async def test_429_that_does_not_stop_is_rate_limited(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry)
    front.registry.push_image(unique_repo, "1.0")
    front.clear()
    front.fail(r"/tags/list", 429, times=100)
    with pytest.raises(RegistryError) as info:
        await list_tags(plugins, front.host, unique_repo, None)
    assert (info.value.kind, info.value.status) == ("rate_limited", 429)


async def test_a_stalled_registry_times_out(plugins, oci_registry, registry_front, unique_repo, monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_TIMEOUT", "0.2")
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_RETRIES", "1")
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0")
    front.clear()
    front.stall(r"/manifests/", 1.0, times=2)
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), None)
    error = info.value
    assert (error.kind, error.reason, error.transient) == ("timeout", "NetworkTimeout", True)
    assert "did not answer within 0.2s" in str(error) and pushed.reference in str(error)


async def test_a_stall_shorter_than_the_timeout_is_just_slow(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry)
    pushed = front.registry.push_image(unique_repo, "1.0", labels={"slow": "ok"})
    front.stall(r"/manifests/", 0.1)
    assert (await fetch_image_info(plugins, ref(pushed.reference), None)).labels == {"slow": "ok"}


async def test_nothing_listening_is_connection_refused(plugins, monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_RETRIES", "1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening
        with pytest.raises(RegistryError) as info:
            await fetch_image_info(plugins, ref(f"127.0.0.1:{port}/org/x:1"), None)
    error = info.value
    assert (error.kind, error.reason) == ("unavailable", "ConnectionRefused")
    assert f"127.0.0.1:{port}/org/x:1" in str(error)


async def test_credentials_never_appear_in_any_failure(plugins, oci_registry_basic, registry_front, unique_repo):
    front = registry_front(oci_registry_basic)
    front.registry.push_image(unique_repo, "1.0")
    front.fail(r"/tags/list", 500, times=100, body={"errors": [{"code": "X", "message": "echo alice-pw"}]})
    with pytest.raises(RegistryError) as info:
        await list_tags(plugins, front.host, unique_repo, RegistryCredentials(username="alice", password="alice-pw"))
    assert "alice-pw" not in str(info.value) and "***" in str(info.value)


async def test_an_unknown_host_fails_at_once_as_a_dns_failure(plugins, monkeypatch):
    from aim_core.registry import facade

    monkeypatch.setenv("AIM_ENGINE_REGISTRY_RETRIES", "5")
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_INSECURE", "no-such-registry.invalid")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref("no-such-registry.invalid/org/x:1"), None)
    error = info.value
    assert error.kind == "unavailable" and "no-such-registry.invalid/org/x:1" in str(error)
    if error.reason == "DNSFailure":  # where the resolver answers at all (it may time out instead)
        assert facade.client_for(plugins, "no-such-registry.invalid").requests == 1
