"""How often a model source syncs, and when it looks again after a failure (F77).

``spec.syncInterval`` is a Go-style duration (``15m``, ``1h``, ``2h30m``).
Garbage falls back to the default hour and an absurdly short interval is
raised to :data:`MIN_INTERVAL`; both are reported, never a hot loop.

After a failed sync the source looks again sooner than the interval when the
failure may pass by itself (registry down, timeout, rate limit: exponential
from 30 s, honouring ``Retry-After``), and after at most ten minutes when the
user has to act (credentials, missing repository or secret), never later than
the interval. Pure.
"""

from __future__ import annotations

import attrs

from aim_core.reconcile.durations import parse_duration

__all__ = [
    "DEFAULT_INTERVAL",
    "MIN_INTERVAL",
    "Interval",
    "retry_delay",
    "sync_interval",
]

DEFAULT_INTERVAL = 3600.0
MIN_INTERVAL = 60.0
RECOMMENDED_INTERVAL = 900.0
TRANSIENT_RETRY = 30.0
PERMANENT_RETRY = 600.0

INVALID_SYNC_INTERVAL = "InvalidSyncInterval"
SYNC_INTERVAL_TOO_SHORT = "SyncIntervalTooShort"


@attrs.frozen
class Interval:
    seconds: float
    reason: str | None = None  #: set when the written value was not used as is
    message: str = ""


def describe(seconds: float) -> str:
    """``3600`` → ``1h``, ``5400`` → ``1h30m``, ``90`` → ``1m30s``."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return text or "0s"


def sync_interval(value: object) -> Interval:
    """The interval to use for ``spec.syncInterval`` (``None`` means the default hour)."""
    if value is None or value == "":
        return Interval(DEFAULT_INTERVAL)
    try:
        seconds = parse_duration(str(value)) / 1e9
    except ValueError:
        return Interval(
            DEFAULT_INTERVAL,
            INVALID_SYNC_INTERVAL,
            f"spec.syncInterval {value!r} is not a duration; write e.g. 15m, 1h or 2h30m. "
            f"Syncing every {describe(DEFAULT_INTERVAL)} (the default) until it is fixed",
        )
    if seconds < MIN_INTERVAL:
        return Interval(
            MIN_INTERVAL,
            SYNC_INTERVAL_TOO_SHORT,
            f"spec.syncInterval {value} is shorter than the {describe(MIN_INTERVAL)} minimum; syncing every "
            f"{describe(MIN_INTERVAL)} instead ({describe(RECOMMENDED_INTERVAL)} or more keeps clear of registry "
            "rate limits)",
        )
    return Interval(seconds)


def retry_delay(
    interval: float, *, transient: bool, permanent: bool, attempt: int, retry_after: float | None = None
) -> float:
    """Seconds from the end of a sync to the next one.

    :param transient: some failure may pass by itself (backoff from 30 s, doubling per failed attempt).
    :param permanent: some failure needs the user (retry after at most ten minutes).
    :param attempt: how many syncs in a row had failures (1 for the first).
    :param retry_after: the largest ``Retry-After`` a registry asked for.
    """
    delay = interval
    if permanent:
        delay = min(delay, PERMANENT_RETRY)
    if transient:
        delay = min(delay, TRANSIENT_RETRY * 2 ** max(attempt - 1, 0))
    if retry_after:
        delay = max(delay, min(retry_after, interval))
    return delay
