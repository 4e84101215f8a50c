"""AIMClusterModelSource end to end: the real controller and engine over HTTP against the API
emulator, registries answered by a throwaway ``aim_registry_client`` plugin (F77-F80)."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from aim_core.kube import Credentials, Kube
from aim_core.modelsource.runner import RegistryCatalog
from aim_core.reconcile.resources import CLUSTER_MODELS
from aim_core.registry import RegistryError
from tests.modelsource.docexamples import EXAMPLES, QWEN, example
from tests.modelsource.harness import START, Harness, MemoryRegistries, make_harness, pull_secret

IDS = [s["metadata"]["name"] for s, _ in EXAMPLES]
SECRET_PASSWORD = "s3cr3t-Pa55word"


def condition(obj, type_):
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


@pytest.fixture()
def registries() -> MemoryRegistries:
    return MemoryRegistries()


@pytest_asyncio.fixture()
async def harness(kube, registries) -> AsyncIterator[Harness]:
    client = Kube(Credentials(server=kube.url, insecure=True))
    kube.put_object(pull_secret("private-registry-creds", "private.registry.io", "robot", SECRET_PASSWORD))
    yield make_harness(kube, client, registries)
    await client.aclose()


@pytest.mark.parametrize(("source", "expected"), EXAMPLES, ids=IDS)
async def test_each_documented_source_creates_its_models_and_a_second_sync_writes_nothing_new(
    harness, api, kube, registries, source, expected
):
    name = source["metadata"]["name"]
    created = await harness.create(api, source)

    requeue = await harness.reconcile(name)

    models = harness.models(name)
    assert {m["spec"]["image"] for m in models.values()} == expected
    for model in models.values():
        assert model["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMClusterModelSource",
                "name": name,
                "uid": created["metadata"]["uid"],
                "controller": True,
            }
        ]
        assert model["metadata"]["labels"]["aim.eai.amd.com/origin"] == "auto-generated"
        assert model["metadata"]["labels"]["aim.eai.amd.com/cluster-model-source.name"] == name
    obj = harness.source(name)
    assert obj["status"]["status"] == "Ready"
    assert obj["status"]["discoveredModels"] == len(expected)
    assert obj["status"]["availableModels"] == len(expected)
    assert obj["status"]["modelsLimitReached"] is False
    assert obj["status"]["lastSyncTime"] == "2026-03-01T12:00:00Z"
    assert condition(obj, "FiltersReady")["reason"] == "AllFiltersSucceeded"
    interval = {"2h": 7200, "6h": 21600}.get(source["spec"].get("syncInterval"), 3600)
    assert requeue == pytest.approx(interval)

    # Reconciles before the interval (a model changed, a resync) ask no registry and write nothing.
    asked, mark = len(registries.requests), kube.mark()
    await harness.reconcile(name)
    assert len(registries.requests) == asked
    assert kube.writes(since=mark) == 0, [c for c in kube.calls[mark:] if c.verb not in ("get", "list", "watch")]

    # The next sync of an unchanged registry creates nothing; the only write is lastSyncTime.
    harness.clock.advance(seconds=interval)
    before, mark = harness.source(name)["status"], kube.mark()
    await harness.reconcile(name)
    after = harness.source(name)["status"]
    assert kube.count("create", "apply", "update", "delete", since=mark) == 0
    assert kube.count("patch", since=mark) == 1
    assert after["lastSyncTime"] == (START + datetime.timedelta(seconds=interval)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert {k: v for k, v in after.items() if k != "lastSyncTime"} == {
        k: v for k, v in before.items() if k != "lastSyncTime"
    }


async def test_private_registry_credentials_come_from_the_secret_in_the_operator_namespace(harness, api, registries):
    source, _ = example("private-models")
    await harness.create(api, source)

    await harness.reconcile("private-models")

    creds = {c for kind, host, _, c in registries.requests if host == "private.registry.io"}
    assert len(creds) == 1
    [cred] = creds
    assert (cred.username, cred.password) == ("robot", SECRET_PASSWORD)
    assert condition(harness.source("private-models"), "PullSecretsReady")["status"] == "True"


async def test_a_missing_pull_secret_is_reported_and_public_entries_still_sync(harness, api, kube):
    source, _ = example("amd-models")
    source["spec"]["imagePullSecrets"] = [{"name": "nope"}]
    await harness.create(api, source)

    await harness.reconcile("amd-models")

    obj = harness.source("amd-models")
    cond = condition(obj, "PullSecretsReady")
    assert (cond["status"], cond["reason"]) == ("False", "SecretNotFound")
    assert "aim-system" in cond["message"]
    assert obj["status"]["status"] == "Failed"  # a missing reference, as for every kind
    assert len(harness.models("amd-models")) == 2
    # the error taxonomy of every kind (F10, F11, issue 18), beside the source's own condition
    config = condition(obj, "ConfigValid")
    assert (config["status"], config["reason"]) == ("False", "ReferenceNotFound") and "nope" in config["message"]


async def test_a_garbage_sync_interval_is_config_valid_false_invalid_spec(harness, api, kube):
    source, _ = example("amd-models")
    source["spec"]["syncInterval"] = "every so often"
    await harness.create(api, source)

    await harness.reconcile("amd-models")

    obj = harness.source("amd-models")
    config = condition(obj, "ConfigValid")
    assert (config["status"], config["reason"]) == ("False", "InvalidSpec"), config
    assert "every so often" in config["message"]
    assert obj["status"]["status"] == "Failed"  # a spec to fix, as for every kind
    assert condition(obj, "SyncIntervalValid")["status"] == "False"
    assert len(harness.models("amd-models")) == 2  # the rest still syncs


async def test_registry_refusing_access_fails_that_selector_without_leaking_credentials(harness, api, kube, registries):
    registries.failures["private.registry.io"] = RegistryError(
        "auth",
        "registry private.registry.io answered 401 Unauthorized for myorg/model-a",
        registry="private.registry.io",
    )
    source, _ = example("private-models")
    source["spec"]["images"].append("docker.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5")
    await harness.create(api, source)

    requeue = await harness.reconcile("private-models")

    obj = harness.source("private-models")
    assert obj["status"]["status"] == "Degraded"
    filters = condition(obj, "FiltersReady")
    assert filters["reason"] == "SomeFiltersFailed"
    assert "private.registry.io" in filters["message"] and "RegistryAuthFailed" in filters["message"]
    assert SECRET_PASSWORD not in str(obj) and "robot" not in str(obj)
    assert set(m["spec"]["image"] for m in harness.models("private-models").values()) == {f"{QWEN}:0.8.5"}
    assert requeue == pytest.approx(600)  # the user has to act: looked at again in 10 minutes, not hot
    events = kube.events_for("private-models")
    assert all(SECRET_PASSWORD not in e.get("message", "") for e in events)


async def test_all_selectors_failing_is_failed_and_a_recovered_registry_heals_it(harness, api, registries):
    registries.failures["ghcr.io"] = RegistryError("unavailable", "registry ghcr.io answered 503", registry="ghcr.io")
    source, _ = example("ghcr-stable-models")
    await harness.create(api, source)

    requeue = await harness.reconcile("ghcr-stable-models")

    obj = harness.source("ghcr-stable-models")
    assert obj["status"]["status"] == "Failed"
    assert condition(obj, "FiltersReady")["reason"] == "AllFiltersFailed"
    assert "lastSyncTime" not in obj["status"]  # never synced successfully
    assert requeue == pytest.approx(30)

    del registries.failures["ghcr.io"]
    harness.clock.advance(seconds=30)
    await harness.reconcile("ghcr-stable-models")

    obj = harness.source("ghcr-stable-models")
    assert obj["status"]["status"] == "Ready"
    assert len(harness.models("ghcr-stable-models")) == 8


async def test_a_spec_change_syncs_at_once_and_old_models_stay(harness, api, kube, registries):
    source, _ = example("amd-models")
    await harness.create(api, source)
    await harness.reconcile("amd-models")

    response = await api.patch(
        kube.path("aimclustermodelsources", None, "amd-models"),
        json={"spec": {"images": [f"{QWEN}:0.8.4"]}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    await harness.reconcile("amd-models")

    images = {m["spec"]["image"] for m in harness.models("amd-models").values()}
    assert images == {f"{QWEN}:0.8.5", "amdenterpriseai/aim-deepseek-deepseek-r1:0.8.5", f"{QWEN}:0.8.4"}
    assert harness.source("amd-models")["status"]["discoveredModels"] == 3


async def test_a_model_deleted_by_hand_comes_back_without_asking_the_registry(harness, api, kube, registries):
    source, _ = example("ghcr-stable-models")
    await harness.create(api, source)
    await harness.reconcile("ghcr-stable-models")
    victim = sorted(harness.models("ghcr-stable-models"))[0]
    asked = len(registries.requests)

    await api.delete(kube.path("aimclustermodels", None, victim))
    await harness.reconcile("ghcr-stable-models")

    assert victim in harness.models("ghcr-stable-models")
    assert len(registries.requests) == asked


async def test_max_models_stops_creation_and_says_so(harness, api):
    source, _ = example("multi-registry-models")  # 14 images
    source["spec"]["maxModels"] = 4
    await harness.create(api, source)

    await harness.reconcile("multi-registry-models")

    obj = harness.source("multi-registry-models")
    assert len(harness.models("multi-registry-models")) == 4
    assert obj["status"]["modelsLimitReached"] is True
    assert (obj["status"]["discoveredModels"], obj["status"]["availableModels"]) == (4, 14)
    limit = condition(obj, "MaxModelsLimitReached")
    assert (limit["status"], limit["reason"]) == ("True", "LimitReached")


class SlowCatalog:
    """A catalog that holds every listing until released: a sync longer than the reconcile waits."""

    def __init__(self, inner) -> None:
        self.inner, self.release = inner, asyncio.Event()

    async def list_tags(self, registry, repository, credentials):
        await self.release.wait()
        return await self.inner.list_tags(registry, repository, credentials)

    async def list_repositories(self, registry, pattern, credentials):
        await self.release.wait()
        return await self.inner.list_repositories(registry, pattern, credentials)


async def test_a_long_sync_runs_in_the_background_and_wakes_the_source(kube, api, registries):
    client = Kube(Credentials(server=kube.url, insecure=True))
    slow: list[SlowCatalog] = []

    def catalog(plugins):
        slow.append(SlowCatalog(RegistryCatalog(plugins)))
        return slow[-1]

    harness = make_harness(kube, client, registries, catalog=catalog)
    harness.controller.runner.wait = 0.05
    woken, wake = [], harness.engine.ctx.wake
    harness.engine.ctx.wake = lambda *key: (woken.append(key), wake(*key))
    source, expected = example("ghcr-stable-models")
    await harness.create(api, source)

    await harness.reconcile("ghcr-stable-models")  # returns while the sync is still listing

    obj = harness.source("ghcr-stable-models")
    assert obj["status"]["status"] == "Progressing"
    assert condition(obj, "FiltersReady")["reason"] == "Syncing"
    assert woken == []

    slow[0].release.set()
    for _ in range(200):
        if woken:
            break
        await asyncio.sleep(0.01)
    assert woken == [("cluster-model-source", None, "ghcr-stable-models")]  # the finished sync woke the source

    await harness.reconcile("ghcr-stable-models")

    assert {m["spec"]["image"] for m in harness.models("ghcr-stable-models").values()} == expected
    assert harness.source("ghcr-stable-models")["status"]["status"] == "Ready"
    await client.aclose()


async def test_a_pull_secret_created_or_rotated_later_is_used_at_once_not_after_the_interval(
    harness, api, kube, registries
):
    source, _ = example("private-models")
    source["spec"]["imagePullSecrets"] = [{"name": "late-creds"}]
    await harness.create(api, source)
    await harness.reconcile("private-models")
    assert condition(harness.source("private-models"), "PullSecretsReady")["reason"] == "SecretNotFound"
    assert {c for _, host, _, c in registries.requests if host == "private.registry.io"} == {None}

    # The secret appears: the watch re-triggers the source, which syncs now with it (the clock has not moved).
    secret = kube.put_object(pull_secret("late-creds", "private.registry.io", "robot", "first-password"))
    [watch] = [w for w in harness.controller.watches() if w.resource.kind == "Secret"]
    assert watch.mapper(secret) == [(None, "private-models")]
    asked = len(registries.requests)
    await harness.reconcile("private-models")
    new = registries.requests[asked:]
    assert new and {(c.username, c.password) for _, host, _, c in new if host == "private.registry.io"} == {
        ("robot", "first-password")
    }
    assert condition(harness.source("private-models"), "PullSecretsReady")["status"] == "True"

    # Nothing changed: no registry request.
    asked = len(registries.requests)
    await harness.reconcile("private-models")
    assert len(registries.requests) == asked

    # Rotated: the next reconcile syncs with the new password.
    kube.put_object(pull_secret("late-creds", "private.registry.io", "robot", "rotated-password"))
    await harness.reconcile("private-models")
    assert {
        (c.username, c.password) for _, host, _, c in registries.requests[asked:] if host == "private.registry.io"
    } == {("robot", "rotated-password")}

    # Secrets nobody names, or named but in another namespace, re-trigger nothing and use no registry.
    stranger = kube.put_object(pull_secret("unrelated", "private.registry.io", "x", "y"))
    assert watch.mapper(stranger) == []
    asked = len(registries.requests)
    kube.put_object(pull_secret("late-creds", "private.registry.io", "other", "ns", namespace="default"))
    await harness.reconcile("private-models")
    assert len(registries.requests) == asked


async def test_a_source_that_has_not_seen_another_s_models_yet_does_not_take_them_over(harness, api, kube):
    # Two sources with the same filters, the second reconciled before the first one's models reached its
    # store (as when both are created at once): its creations are refused by the server, not forced over
    # the first's label and owner reference; its next look counts them as the first's.
    first, expected = example("amd-models")
    await harness.create(api, first)
    await harness.reconcile("amd-models")
    theirs = harness.models("amd-models")
    assert {m["spec"]["image"] for m in theirs.values()} == expected
    second = {**first, "metadata": {"name": "second"}}
    await harness.create(api, second)

    await harness.refresh()
    harness.store.replace_all(CLUSTER_MODELS, [])  # the first's models not seen yet
    await harness.engine.reconcile(harness.controller, None, "second")
    await harness.refresh()

    now = harness.models()
    assert set(now) == set(theirs)
    for name, model in now.items():
        assert model["metadata"]["labels"]["aim.eai.amd.com/model-source"] == "amd-models"
        assert [r["name"] for r in model["metadata"]["ownerReferences"]] == ["amd-models"]
        assert model["metadata"]["resourceVersion"] == theirs[name]["metadata"]["resourceVersion"]

    await harness.reconcile("second")
    status = harness.source("second")["status"]
    assert status["discoveredModels"] == len(expected)
    assert status["status"] == "Ready"
    assert "source amd-models" in condition(harness.source("second"), "ExistingModelsReady")["message"]
