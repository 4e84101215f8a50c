"""Model sources against real registries on loopback (Debian's docker-registry), through the
registry layer's generic OCI client, the controller and the engine, over the API emulator.

The documented examples name docker.io, ghcr.io and private.registry.io; a throwaway
``aim_registry_client`` plugin sends those hosts to loopback registries (anonymous, bearer
token flow, htpasswd Basic), so the models and their names come out exactly as documented.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from aim_core.kube import Credentials, Kube
from aim_core.plugin.hookspecs import hookimpl
from aim_core.plugin.manager import get_plugin_manager
from aim_core.registry import close_clients
from aim_core.registry.oci import OciRegistryClient
from tests.modelsource.docexamples import CATALOG, EXAMPLES, example, source
from tests.modelsource.harness import Harness, make_harness, pull_secret

IDS = [s["metadata"]["name"] for s, _ in EXAMPLES]
ALICE = ("alice", "alice-pw")


def condition(obj, type_):
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


class LoopbackRegistries:
    """Plugin: public registry hosts answered by loopback registries (an OCI client with another base URL)."""

    def __init__(self, hosts: dict[str, str]) -> None:
        self.hosts = hosts
        self.clients: list[OciRegistryClient] = []

    @hookimpl
    def aim_registry_client(self, registry: str) -> OciRegistryClient | None:
        if registry not in self.hosts:
            return None
        client = OciRegistryClient(registry, base_url=self.hosts[registry])
        self.clients.append(client)
        return client

    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.clients)


def fill(registry: Any, repositories: dict[str, list[str]]) -> None:
    for repository, tags in repositories.items():
        pushed = registry.push_image(repository, tags[0])
        registry.add_tags(repository, pushed.digest, tags[1:])


@pytest.fixture(scope="module")
def documented_registries(oci_registry, oci_registry_token, oci_registry_basic) -> dict[str, Any]:
    """docker.io, ghcr.io and private.registry.io of the documented examples, filled with CATALOG."""
    fill(oci_registry, CATALOG["docker.io"])
    fill(oci_registry_token, CATALOG["ghcr.io"])
    fill(oci_registry_basic, CATALOG["private.registry.io"])
    return {"docker.io": oci_registry, "ghcr.io": oci_registry_token, "private.registry.io": oci_registry_basic}


async def _harness(kube: Any, plugin: Any) -> tuple[Harness, Kube]:
    client = Kube(Credentials(server=kube.url, insecure=True))
    return make_harness(kube, client, plugin), client


@pytest_asyncio.fixture()
async def documented(kube, documented_registries) -> AsyncIterator[Harness]:
    plugin = LoopbackRegistries({host: r.url for host, r in documented_registries.items()})
    harness, client = await _harness(kube, plugin)
    kube.put_object(pull_secret("private-registry-creds", "private.registry.io", *ALICE))
    yield harness
    await close_clients(harness.plugins)
    await client.aclose()


@pytest.mark.parametrize(("source", "expected"), EXAMPLES, ids=IDS)
async def test_each_documented_source_against_real_registries(documented, api, kube, source, expected):
    name = source["metadata"]["name"]
    await documented.create(api, source)

    await documented.reconcile(name)

    models = documented.models(name)
    assert {m["spec"]["image"] for m in models.values()} == expected
    obj = documented.source(name)
    assert obj["status"]["status"] == "Ready", obj["status"]
    assert (obj["status"]["discoveredModels"], obj["status"]["availableModels"]) == (len(expected), len(expected))

    documented.clock.advance(hours=6)  # every example's interval has passed
    mark = kube.mark()
    await documented.reconcile(name)
    assert kube.count("create", "apply", "update", "delete", since=mark) == 0
    assert kube.count("patch", since=mark) == 1  # lastSyncTime, nothing else
    assert documented.source(name)["status"]["lastSyncTime"] == "2026-03-01T18:00:00Z"


async def test_documented_names_come_out_of_a_real_sync(documented, api):
    await documented.create(api, example("amd-models")[0])

    await documented.reconcile("amd-models")

    assert "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-72f726" in documented.models("amd-models")


# ------------------------------------------------------------------ a large catalog


@pytest_asyncio.fixture()
async def paged(kube, oci_registry_basic, registry_front, unique_repo) -> AsyncIterator[dict[str, Any]]:
    """12 repositories of 300 tags each behind Basic auth and a front that pages tags 100 at a time."""
    front = registry_front(oci_registry_basic, page_size=100)
    base = unique_repo
    repos = {f"{base}-aim-{i:02d}": [f"0.{k}.{j}" for k in range(3) for j in range(100)] for i in range(12)}
    repos[f"{base}-other"] = ["0.2.95"]
    fill(front.registry, repos)
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    client = Kube(Credentials(server=kube.url, insecure=True))
    harness = make_harness(kube, client, _Installed(plugins))
    kube.put_object(front.registry.pull_secret("front-creds", "aim-system"))
    front.clear()
    yield {"harness": harness, "front": front, "base": base}
    await close_clients(harness.plugins)
    await close_clients(plugins)
    await client.aclose()


class _Installed:
    """Plugin: delegates to the installed generic OCI client of another manager."""

    def __init__(self, plugins: Any) -> None:
        self.plugins = plugins

    @hookimpl
    def aim_registry_client(self, registry: str) -> Any:
        return self.plugins.hook.aim_registry_client(registry=registry)


def _wild(front: Any, base: str, **extra: Any) -> dict[str, Any]:
    return source(
        "catalog",
        {
            "filters": [
                {
                    "image": f"{front.host}/{base}-aim-*",
                    "versions": [">=0.2.90", "<0.3.0"],
                    "exclude": [f"{base}-aim-00"],
                }
            ],
            "imagePullSecrets": [{"name": "front-creds"}],
            "maxModels": 500,
            **extra,
        },
    )


async def test_a_wildcard_over_paged_tag_lists_behind_basic_auth_and_a_quiet_second_sync(paged, api, kube):
    harness, front, base = paged["harness"], paged["front"], paged["base"]
    await harness.create(api, _wild(front, base))

    await harness.reconcile("catalog")

    models = harness.models("catalog")
    assert len(models) == 11 * 10  # 11 repositories (one excluded), tags 0.2.90 .. 0.2.99
    assert all(
        m["metadata"]["annotations"]["aim.eai.amd.com/source-repository"].startswith(f"{base}-aim-")
        for m in models.values()
    )
    assert not any(m["spec"]["image"].split("/", 1)[1].startswith(f"{base}-aim-00:") for m in models.values())
    obj = harness.source("catalog")
    assert obj["status"]["status"] == "Ready"
    pages = front.requests(r"/tags/list")
    assert len([p for p in pages if p.answered == 200]) == 11 * 3  # 300 tags in pages of 100
    assert all(p.authorization in ("basic", "bearer") for p in pages if p.answered == 200)
    first = len(front.log)

    harness.clock.advance(hours=1)
    front.clear()
    mark = kube.mark()
    await harness.reconcile("catalog")

    assert kube.count("create", "apply", "update", "delete", since=mark) == 0
    assert kube.count("patch", since=mark) == 1
    assert len(front.log) <= first  # the same listing again, nothing more


async def test_a_tag_list_failing_mid_listing_degrades_the_filter_and_heals_later(paged, api, kube):
    harness, front, base = paged["harness"], paged["front"], paged["base"]
    front.fail(rf"/v2/{base}-aim-05/tags/list\?.*last=", 503, times=1000)  # its second page never comes
    await harness.create(api, _wild(front, base))

    requeue = await harness.reconcile("catalog")

    obj = harness.source("catalog")
    assert obj["status"]["status"] == "Degraded"
    message = condition(obj, "FiltersReady")["message"]
    assert "synced only partly" in message and f"{base}-aim-05" in message and "RegistryUnavailable" in message
    assert len(harness.models("catalog")) == 10 * 10
    assert 0 < requeue <= 30

    front.clear()
    harness.clock.advance(seconds=requeue)
    await harness.reconcile("catalog")

    assert harness.source("catalog")["status"]["status"] == "Ready"
    assert len(harness.models("catalog")) == 11 * 10


async def test_wrong_credentials_fail_with_the_registry_named_and_no_secret_in_status(paged, api, kube):
    harness, front, base = paged["harness"], paged["front"], paged["base"]
    kube.put_object(pull_secret("front-creds", front.host, "alice", "not-alices-password"))
    await harness.create(api, _wild(front, base))

    requeue = await harness.reconcile("catalog")

    obj = harness.source("catalog")
    assert obj["status"]["status"] == "Failed"
    message = condition(obj, "FiltersReady")["message"]
    assert "RegistryAuthFailed" in message and front.host in message
    assert "not-alices-password" not in str(obj)
    assert requeue == pytest.approx(600)
    assert harness.models("catalog") == {}


async def test_bearer_token_auth_from_a_pull_secret(kube, api, oci_registry_token, unique_repo):
    repo = f"private/{unique_repo}"
    fill(oci_registry_token, {repo: ["1.0.0", "1.1.0", "2.0.0"]})
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    client = Kube(Credentials(server=kube.url, insecure=True))
    harness = make_harness(kube, client, _Installed(plugins))
    kube.put_object(oci_registry_token.pull_secret("token-creds", "aim-system"))
    await harness.create(
        api,
        source(
            "tokens",
            {
                "images": [f"{oci_registry_token.host}/{repo}"],
                "versions": ["^1.0.0"],
                "imagePullSecrets": [{"name": "token-creds"}],
            },
        ),
    )

    await harness.reconcile("tokens")

    assert {m["spec"]["image"] for m in harness.models("tokens").values()} == {
        f"{oci_registry_token.host}/{repo}:1.0.0",
        f"{oci_registry_token.host}/{repo}:1.1.0",
    }
    await close_clients(harness.plugins)
    await close_clients(plugins)
    await client.aclose()


async def test_an_unresolvable_registry_host_is_named_as_such(kube, api, fast_registry_retries):
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    client = Kube(Credentials(server=kube.url, insecure=True))
    harness = make_harness(kube, client, _Installed(plugins))
    await harness.create(api, source("nowhere", {"registry": "registry.invalid", "images": ["org/model"]}))

    requeue = await harness.reconcile("nowhere")

    obj = harness.source("nowhere")
    assert obj["status"]["status"] == "Failed"
    message = condition(obj, "FiltersReady")["message"]
    assert "RegistryHostNotFound" in message and "registry.invalid" in message
    assert requeue == pytest.approx(600)  # a typo needs the user; not a hot loop
    await close_clients(plugins)
    await client.aclose()
