"""The model-source plan beyond the happy path: failures, retry timing, append-only,
restarts, secrets and sync intervals (F77-F80, Q15)."""

from __future__ import annotations

import datetime

import pytest

from aim_core.modelsource.observed import SecretProblem
from aim_core.modelsource.plan import plan_source
from aim_core.plugin.providers import RegistryCredentials
from tests.modelsource.docexamples import DEEPSEEK, QWEN, FakeRegistryError, MemoryCatalog, example, source
from tests.modelsource.helpers import NOW, as_live, condition, created, images, observed, status_of, synced

MULTI = "multi-registry-models"  # docker.io qwen + ghcr.io deepseek, both listed


async def plan_with(src, catalog=None, models=(), **kw):
    sync = await synced(src, catalog, **{k: v for k, v in kw.items() if k in ("credentials", "previous")})
    plan = plan_source(
        src, observed(src, sync, models, **{k: v for k, v in kw.items() if k in ("secret_problems", "now", "others")})
    )
    return plan, status_of(src, plan), sync


async def test_one_registry_refusing_credentials_degrades_and_the_other_still_syncs():
    src, _ = example(MULTI)
    catalog = MemoryCatalog(fail={"ghcr.io": FakeRegistryError("auth", "registry ghcr.io answered 401 Unauthorized")})
    secret = RegistryCredentials(username="bot", password="hunter2-very-secret")

    plan, status, _ = await plan_with(src, catalog, credentials=lambda registry: secret)

    assert images(plan) == {f"{QWEN}:{t}" for t in ("0.7.0", "0.8.4", "0.8.5", "0.9.0-rc1", "1.0.0", "latest", "dev")}
    assert status["status"] == "Degraded"
    filters = condition(status, "FiltersReady")
    assert (filters["status"], filters["reason"]) == ("False", "SomeFiltersFailed")
    assert "spec.filters[1]" in filters["message"] and "ghcr.io" in filters["message"]
    assert "RegistryAuthFailed" in filters["message"]
    assert "hunter2" not in str(status) and "bot" not in filters["message"]
    ready = condition(status, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "SomeFiltersFailed")
    assert status["lastSyncTime"] == "2026-03-01T12:00:00Z"  # something synced


async def test_every_selector_failing_is_failed_and_keeps_the_last_successful_sync_time():
    src, _ = example(MULTI)
    src["status"] = {"lastSyncTime": "2026-02-28T09:00:00Z"}
    catalog = MemoryCatalog(
        fail={
            "docker.io": FakeRegistryError("unavailable", "docker.io answered 503"),
            "ghcr.io": FakeRegistryError("timeout", "ghcr.io did not answer within 20s"),
        }
    )

    plan, status, _ = await plan_with(src, catalog)

    assert plan.apply == []
    assert status["status"] == "Failed"
    filters = condition(status, "FiltersReady")
    assert filters["reason"] == "AllFiltersFailed"
    assert "RegistryUnavailable" in filters["message"] and "RegistryTimeout" in filters["message"]
    assert status["lastSyncTime"] == "2026-02-28T09:00:00Z"  # Q15: last *successful* sync


@pytest.mark.parametrize(
    ("error", "reason", "retry"),
    [
        (FakeRegistryError("auth", "401"), "RegistryAuthFailed", 600.0),
        (FakeRegistryError("not_found", "404"), "RepositoryNotFound", 600.0),
        (FakeRegistryError("unavailable", "502"), "RegistryUnavailable", 30.0),
        (FakeRegistryError("timeout", "slow"), "RegistryTimeout", 30.0),
        (FakeRegistryError("rate_limited", "429", retry_after=120.0), "RegistryRateLimited", 120.0),
        (FakeRegistryError("invalid", "not json"), "RegistryInvalidResponse", 600.0),
        (RuntimeError("boom"), "SyncError", 30.0),
    ],
)
async def test_failures_name_a_reason_and_come_back_neither_hot_nor_an_hour_late(error, reason, retry):
    src = source("one", {"images": [QWEN], "syncInterval": "1h"})

    plan, status, _ = await plan_with(src, MemoryCatalog(fail={"docker.io": error}))

    assert reason in condition(status, "FiltersReady")["message"]
    assert plan.requeue_after == pytest.approx(retry)


async def test_transient_failures_back_off_and_never_beyond_the_interval():
    src = source("one", {"images": [QWEN], "syncInterval": "5m"})
    catalog = MemoryCatalog(fail={"docker.io": FakeRegistryError("unavailable", "502")})
    delays, previous = [], None
    for _ in range(6):
        previous = await synced(src, catalog, previous=previous)
        delays.append(plan_source(src, observed(src, previous)).requeue_after)

    assert delays == [30.0, 60.0, 120.0, 240.0, 300.0, 300.0]


async def test_a_healthy_source_looks_again_after_its_interval_only():
    src, _ = example("dockerhub-models")  # 2h
    sync = await synced(src)

    plan = plan_source(src, observed(src, sync, now=NOW + datetime.timedelta(minutes=30)))

    assert plan.requeue_after == pytest.approx(90 * 60)


async def test_a_wildcard_whose_some_tag_lists_fail_creates_what_it_found_and_says_which_failed():
    src = source("wild", {"filters": [{"image": "amdenterpriseai/aim-*"}]})
    catalog = MemoryCatalog(fail={f"docker.io/{DEEPSEEK}": FakeRegistryError("unavailable", "500")})

    plan, status, _ = await plan_with(src, catalog)

    assert f"{QWEN}:0.8.5" in images(plan)
    assert not any(DEEPSEEK in i for i in images(plan))
    filters = condition(status, "FiltersReady")
    assert filters["reason"] == "SomeFiltersFailed"
    assert "synced only partly" in filters["message"] and DEEPSEEK in filters["message"]


async def test_repositories_listed_but_without_tags_are_skipped_quietly():
    src = source("wild", {"filters": [{"image": "amdenterpriseai/aim-*"}]})
    catalog = MemoryCatalog(fail={f"docker.io/{DEEPSEEK}": FakeRegistryError("not_found", "no tags")})

    _, status, _ = await plan_with(src, catalog)

    assert status["status"] == "Ready"


async def test_bad_constraints_fail_their_selector_with_a_specific_reason_and_the_rest_syncs():
    src = source("bad", {"filters": [{"image": QWEN, "versions": [">= zero"]}, {"image": f"{DEEPSEEK}:0.8.5"}]})

    plan, status, _ = await plan_with(src)

    assert images(plan) == {f"{DEEPSEEK}:0.8.5"}
    message = condition(status, "FiltersReady")["message"]
    assert "InvalidVersionConstraint" in message and "spec.filters[0].versions" in message
    assert status["status"] == "Failed"  # a spec to fix, as for every kind; the rest still synced (above)
    assert condition(status, "SpecReady")["reason"] == "InvalidSpec"


async def test_append_only_models_stay_when_the_registry_or_the_filters_no_longer_match():
    src, _ = example("amd-models")
    plan, _, _ = await plan_with(src)
    models = [as_live(o) for o in created(plan)]
    src["spec"]["images"] = [f"{QWEN}:0.8.4"]

    again, status, _ = await plan_with(src, models=models)

    assert again.delete == []
    assert images(again) == {f"{QWEN}:0.8.4"}
    assert status["discoveredModels"] == 3  # the two earlier models still count


@pytest.mark.parametrize(
    ("interval", "reason", "seconds"),
    [
        ("every hour", "InvalidSyncInterval", 3600.0),
        ("-5m", "InvalidSyncInterval", 3600.0),
        ("5s", "SyncIntervalTooShort", 60.0),
        ("0", "SyncIntervalTooShort", 60.0),
    ],
)
async def test_unusable_sync_intervals_are_replaced_and_reported(interval, reason, seconds):
    src = source("iv", {"images": [f"{QWEN}:0.8.5"], "syncInterval": interval})

    plan, status, _ = await plan_with(src)

    cond = condition(status, "SyncIntervalValid")
    assert (cond["status"], cond["reason"]) == ("False", reason)
    assert plan.requeue_after == pytest.approx(seconds)
    assert images(plan) == {f"{QWEN}:0.8.5"}  # the source still works


async def test_a_fine_interval_has_no_interval_condition():
    src = source("iv", {"images": [f"{QWEN}:0.8.5"], "syncInterval": "2h30m"})

    plan, status, _ = await plan_with(src)

    assert not any(c["type"] == "SyncIntervalValid" for c in status["conditions"])
    assert plan.requeue_after == pytest.approx(9000.0)


async def test_missing_pull_secret_is_a_condition_and_fails_the_source():
    src, _ = example("private-single")
    problem = SecretProblem(
        "private-registry-creds",
        "SecretNotFound",
        "pull secret private-registry-creds not found in the operator namespace aim-system",
    )

    _, status, _ = await plan_with(src, secret_problems=(problem,))

    cond = condition(status, "PullSecretsReady")
    assert (cond["status"], cond["reason"]) == ("False", "SecretNotFound")
    # a missing reference fails every kind (the error taxonomy), a model source too
    assert status["status"] == "Failed"
    ready = condition(status, "Ready")
    assert ready["reason"] == "ReferenceNotFound" and "private-registry-creds" in ready["message"]
    assert condition(status, "ConfigValid")["reason"] == "ReferenceNotFound"


async def test_present_pull_secrets_are_reported_ready():
    src, _ = example("private-single")

    _, status, _ = await plan_with(src)

    assert condition(status, "PullSecretsReady")["status"] == "True"


def test_while_the_first_sync_runs_the_source_is_progressing():
    src, _ = example("amd-models")

    plan = plan_source(src, observed(src, None, syncing=True))
    status = status_of(src, plan)

    assert plan.apply == []
    assert status["status"] == "Progressing"
    assert condition(status, "FiltersReady")["reason"] == "Syncing"
    assert status["discoveredModels"] == 0


def test_after_a_restart_the_previous_verdict_is_kept_until_the_sync_ends():
    src, _ = example("amd-models")
    src["status"] = {
        "status": "Ready",
        "discoveredModels": 2,
        "availableModels": 2,
        "modelsLimitReached": False,
        "lastSyncTime": "2026-03-01T11:00:00Z",
        "conditions": [
            {
                "type": "FiltersReady",
                "status": "True",
                "reason": "AllFiltersSucceeded",
                "message": "2 of 2 selectors synced; 2 images match",
                "lastTransitionTime": "2026-03-01T11:00:00Z",
            }
        ],
    }
    models = [{"metadata": {"name": f"m{i}"}, "spec": {"image": f"x:{i}"}} for i in range(2)]

    plan = plan_source(src, observed(src, None, models, syncing=True))
    status = status_of(src, plan)

    assert status["status"] == "Ready"
    assert {k: status[k] for k in ("discoveredModels", "availableModels", "modelsLimitReached", "lastSyncTime")} == {
        "discoveredModels": 2,
        "availableModels": 2,
        "modelsLimitReached": False,
        "lastSyncTime": "2026-03-01T11:00:00Z",
    }


async def test_the_failure_message_stays_bounded_with_a_hundred_failing_selectors():
    src = source("many", {"filters": [{"image": f"org/repo-{i}"} for i in range(100)]})
    catalog = MemoryCatalog(
        fail={"docker.io": FakeRegistryError("unavailable", "registry docker.io answered 503 " * 5)}
    )

    _, status, _ = await plan_with(src, catalog)

    message = condition(status, "FiltersReady")["message"]
    assert message.startswith("all 100 selectors failed")
    assert "and 90 more selectors" in message
    assert len(message) < 5000


@pytest.mark.parametrize(
    ("spec", "secret", "reason", "words"),
    [
        (
            {"filters": [{"image": QWEN, "versions": [">= zero"]}, {"image": f"{DEEPSEEK}:0.8.5"}]},
            None,
            "InvalidSpec",
            "spec.filters[0].versions",
        ),
        ({"images": [f"{QWEN}:0.8.5"], "syncInterval": "every hour"}, None, "InvalidSpec", "every hour"),
        (
            {"images": [f"{QWEN}:0.8.5"], "imagePullSecrets": [{"name": "gone"}]},
            SecretProblem("gone", "SecretNotFound", "pull secret gone not found in the operator namespace aim-system"),
            "ReferenceNotFound",
            "gone",
        ),
    ],
)
async def test_a_spec_to_fix_is_config_valid_false_beside_the_source_s_own_conditions(spec, secret, reason, words):
    # the error taxonomy every kind follows (F10, F11, issue 18); the source still syncs what it can
    src = source("taxonomy", spec)
    plan, status, _ = await plan_with(src, secret_problems=(secret,) if secret else ())
    cond = condition(status, "ConfigValid")
    assert (cond["status"], cond["reason"]) == ("False", reason) and words in cond["message"], cond
    ready = condition(status, "Ready")
    assert status["status"] == "Failed" and (ready["reason"], words in ready["message"]) == (reason, True), status
    assert images(plan)  # nothing blocked: the rest syncs
    fine = source("fine", {"images": [f"{QWEN}:0.8.5"]})
    _, status, _ = await plan_with(fine)
    assert not any(c["type"] == "ConfigValid" for c in status["conditions"])
