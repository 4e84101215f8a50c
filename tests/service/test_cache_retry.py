"""A Failed template cache is retried by its service with backoff (issue 20), counting status.cache.retryAttempts."""

from __future__ import annotations

import datetime

import attrs

from aim_core.service.cache_retry import backoff_seconds
from aim_core.service.plan import plan_service
from tests.service.builders import (
    NOW,
    QWEN,
    cache,
    cache_for,
    condition,
    observed,
    qwen_model,
    qwen_template,
    service,
    status_of,
)


def failed_cache(svc, tpl, *, minutes_ago: float):
    c = cache_for(svc, tpl).status("Failed")
    when = (NOW - datetime.timedelta(minutes=minutes_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    c["status"]["conditions"] = [
        {
            "type": "Ready",
            "status": "False",
            "reason": "DownloadFailed",
            "message": "artifact download failed",
            "lastTransitionTime": when,
        }
    ]
    return c


def plan_at(svc, *objects, now=NOW):
    plan = plan_service(dict(svc), attrs.evolve(observed(svc, *objects), now=now))
    return plan, status_of(svc, plan)


def deleted(plan) -> list[str]:
    return [d.name for d in plan.delete if d.resource.kind == "AIMTemplateCache"]


def test_backoff_doubles_from_a_minute_up_to_an_hour() -> None:
    assert [backoff_seconds(n) for n in (0, 1, 2, 6, 7, 20)] == [60, 120, 240, 3600, 3600, 3600]


def test_a_failed_cache_is_deleted_once_the_backoff_has_passed_and_the_attempt_is_counted() -> None:
    svc = service("chat").model_name(QWEN)
    tpl = qwen_template()
    early, _ = plan_at(svc, qwen_model(), tpl, failed_cache(svc, tpl, minutes_ago=0.5))
    assert deleted(early) == []
    assert early.requeue_after is not None and 25 <= early.requeue_after <= 35
    plan, status = plan_at(svc, qwen_model(), tpl, failed_cache(svc, tpl, minutes_ago=2))
    assert deleted(plan) == [cache_for(svc, tpl)["metadata"]["name"]]
    assert status["cache"] == {"retryAttempts": 1}
    assert "deleting it to retry (attempt 1)" in condition(status, "CacheReady")["message"]


def test_later_attempts_wait_longer() -> None:
    svc = service("chat").model_name(QWEN)
    svc["status"] = {"cache": {"retryAttempts": 2}}
    tpl = qwen_template()
    plan, status = plan_at(svc, qwen_model(), tpl, failed_cache(svc, tpl, minutes_ago=3))
    assert deleted(plan) == []  # the third retry waits 240 s
    assert status["cache"] == {"retryAttempts": 2}
    assert "retry 3 at 2026-03-01T12:01:00Z" in condition(status, "CacheReady")["message"]
    plan, status = plan_at(svc, qwen_model(), tpl, failed_cache(svc, tpl, minutes_ago=5))
    assert deleted(plan) and status["cache"] == {"retryAttempts": 3}


def test_while_the_new_cache_is_made_the_count_stays_and_a_ready_cache_clears_it() -> None:
    svc = service("chat").model_name(QWEN)
    svc["status"] = {"cache": {"retryAttempts": 1}}
    tpl = qwen_template()
    _, status = plan_at(svc, qwen_model(), tpl)  # the failed one is gone: a new cache is planned
    assert status["cache"] == {"retryAttempts": 1}
    _, status = plan_at(svc, qwen_model(), tpl, cache_for(svc, tpl).ready())
    assert "retryAttempts" not in status["cache"] and status["cache"]["templateCacheRef"]["name"]


def test_a_hand_written_cache_is_not_deleted() -> None:
    svc = service("chat").model_name(QWEN)
    tpl = qwen_template()
    mine = cache("team-cache", tpl.name).status("Failed")
    plan, status = plan_at(svc, qwen_model(), tpl, mine)
    assert deleted(plan) == []
    assert "not created by a service, so it is not retried" in condition(status, "CacheReady")["message"]
