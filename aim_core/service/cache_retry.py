"""A Failed template cache is retried by its service (issue 20). Pure.

Upstream leaves a Failed cache for a person to delete, and never writes
``status.cache.retryAttempts``. Here the service deletes a Failed cache that a
service created (its ``aim.eai.amd.com/service`` label, or owned by this
service) once a backoff has passed since it failed, and counts the attempt in
``status.cache.retryAttempts``. Deleting the cache removes its artifacts that
are not Ready (its finalizer, F69), so the next pass creates a new cache and
new artifacts, and the downloads run again.

* **Backoff**: 60 s after the failure for the first retry, doubling per
  attempt, at most an hour (as discovery retries).
* **When it failed**: the cache's ``Ready`` condition ``lastTransitionTime``,
  else its creation time.
* **The count** is kept while the cache is not Ready and dropped once a cache
  is Ready again, so the next failure starts from a short wait.
* **Hand-written caches** (no service label, no owner) are not deleted: the
  ``CacheFailed`` message says to fix or delete them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.health import Health, State
from aim_core.reconcile.labels import SERVICE_LABEL
from aim_core.service.view import ServiceView
from aim_core.templatecache import CacheView

BASE_SECONDS = 60.0
MAX_SECONDS = 3600.0

Obj = Mapping[str, Any]


@attrs.frozen
class RetryDecision:
    """What to do about the service's Failed cache."""

    health: Health  # the Cache component, with when the next retry comes
    attempts: int  # status.cache.retryAttempts to write
    delete: bool = False  # delete the cache now
    requeue: float | None = None  # look again after this many seconds


def backoff_seconds(attempts: int) -> float:
    """Wait before retry number ``attempts + 1``: 60 s, 120 s, 240 s, ... at most 3600 s."""
    return min(BASE_SECONDS * 2 ** max(attempts, 0), MAX_SECONDS)


def recorded_attempts(service: Obj | ServiceView) -> int:
    value = ServiceView.of(service).cache_status.get("retryAttempts")
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError):
        return 0


def _parse(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    try:
        return datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def failed_since(cache: Obj) -> datetime.datetime | None:
    """When the cache failed: its Ready condition's last transition, else its creation."""
    view = CacheView.of(cache)
    for c in view.conditions:
        if c.get("type") == "Ready" and c.get("status") == "False":
            found = _parse(c.get("lastTransitionTime"))
            if found is not None:
                return found
    return _parse(view.created or None)


def made_for_a_service(cache: Obj, service: Obj) -> bool:
    """Whether a service created ``cache`` (so a service may delete it to retry)."""
    view = CacheView.of(cache)
    if view.labels.get(SERVICE_LABEL):
        return True
    uid = ServiceView.of(service).uid
    return bool(uid) and uid in view.owner_uids


def decide(service: Obj, cache: Obj, health: Health, now: datetime.datetime | None) -> RetryDecision | None:
    """The retry decision for a Failed ``cache``; ``None`` when it is not Failed.

    :param health: the ``CacheFailed`` component as :func:`aim_core.service.caching.cache_health` gave it.
    :param now: the reconcile's clock; ``None`` (no clock) never deletes.
    """
    if health.state is not State.FAILED:
        return None
    attempts = recorded_attempts(service)
    if not made_for_a_service(cache, service):
        message = f"{health.message}; it was not created by a service, so it is not retried: fix or delete it"
        return RetryDecision(attrs.evolve(health, message=message), attempts)
    wait = backoff_seconds(attempts)
    since = failed_since(cache)
    if now is None or since is None:
        return RetryDecision(health, attempts, requeue=wait)
    left = wait - (now - since).total_seconds()
    if left <= 0:
        message = f"{health.message}; deleting it to retry (attempt {attempts + 1})"
        return RetryDecision(attrs.evolve(health, message=message), attempts + 1, delete=True, requeue=1.0)
    at = (since + datetime.timedelta(seconds=wait)).astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    message = f"{health.message}; retry {attempts + 1} at {at} ({int(wait)} s after it failed)"
    return RetryDecision(attrs.evolve(health, message=message), attempts, requeue=left)
