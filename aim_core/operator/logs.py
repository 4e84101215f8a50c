"""Operator logging: routine trouble is one WARNING line, tracebacks are for bugs.

kopf logs every failed attempt of a request it is going to retry at ERROR
("Request attempt #1/6 failed; will retry: GET ... -> ClientConnectorError(...)").
While the API server restarts that is one ERROR line per watched resource and
attempt, for something expected in operation. :class:`RoutineRetries`, put on
the log handlers, turns those into one WARNING line naming the request and
the delay before the next attempt. The last attempt ("escalating") stays an
ERROR: one per failed burst.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

import kopf

_RETRY = re.compile(r"Request attempt #(\d+)(?:/\d+)? failed; will retry: (.*)", re.S)


class RoutineRetries(logging.Filter):
    """Downgrade kopf's per-attempt retry errors to a WARNING that names the retry delay."""

    def __init__(self, backoffs: Sequence[float]) -> None:
        super().__init__()
        self.backoffs = list(backoffs) or [1.0]

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and record.name.startswith("kopf") and not record.exc_info:
            match = _RETRY.fullmatch(record.getMessage())
            if match:
                attempt = int(match[1])
                delay = self.backoffs[min(attempt, len(self.backoffs)) - 1]
                record.msg = "%s; retrying in %ss (attempt %d)"
                record.args = (match[2], delay, attempt)
                record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def install(backoffs: Sequence[float], logger: logging.Logger | None = None) -> RoutineRetries:
    """Put :class:`RoutineRetries` on every handler of ``logger`` (default: the root logger)."""
    routine = RoutineRetries(backoffs)
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RoutineRetries) for f in handler.filters):
            handler.addFilter(routine)
    return routine


# ---------------------------------------------------------------- levels and quiet HTTP clients

ENV_LOG_LEVEL = "AIM_ENGINE_LOG_LEVEL"
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}

# Loggers of HTTP clients and servers that log one line per request: those lines are DEBUG, whatever
# level their library picked (httpx logs every request at INFO).
PER_REQUEST_LOGGERS = (
    "httpx",
    "httpcore",
    "aiohttp.access",
    "aiohttp.client",
    "aiohttp.server",
    "urllib3",
    "kubernetes.client.rest",
)


def resolve_level(flag: str | None, *, verbose: bool = False, env: dict[str, str] | None = None) -> int:
    """``--log-level``, else ``-v`` (debug), else ``AIM_ENGINE_LOG_LEVEL``, else info."""
    if flag:
        text = flag
    elif verbose:
        text = "debug"
    else:
        text = (env if env is not None else os.environ).get(ENV_LOG_LEVEL, "").strip() or "info"
    try:
        return LEVELS[text.lower()]
    except KeyError:
        raise ValueError(f"log level {text!r} is not one of {', '.join(LEVELS)} ({ENV_LOG_LEVEL})") from None


class PerRequestAtDebug(logging.Filter):
    """Turn a record (every one, or those whose message matches ``pattern``) into a DEBUG one; drop it unless
    the operator logs at DEBUG."""

    def __init__(self, pattern: re.Pattern[str] | None = None) -> None:
        super().__init__()
        self.pattern = pattern

    def filter(self, record: logging.LogRecord) -> bool:
        if logging.DEBUG < record.levelno < logging.WARNING and (
            self.pattern is None or self.pattern.match(record.getMessage())
        ):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return record.levelno > logging.DEBUG or logging.getLogger().isEnabledFor(logging.DEBUG)


# kopf says "Handler 'store-aimservices' succeeded." at INFO for every watch event it hands to the store:
# one line per object change, as many as the operator's writes and more. They are DEBUG lines too.
KOPF_PER_EVENT = re.compile(r"Handler '[^']*' succeeded\.$")


def quiet_http_clients() -> None:
    """Put :class:`PerRequestAtDebug` on every per-request logger and on kopf's per-event line (idempotent)."""
    targets = [(name, None) for name in PER_REQUEST_LOGGERS] + [("kopf.objects", KOPF_PER_EVENT)]
    for name, pattern in targets:
        logger = logging.getLogger(name)
        if not any(isinstance(f, PerRequestAtDebug) for f in logger.filters):
            logger.addFilter(PerRequestAtDebug(pattern))


def configure(level: int, log_format: str) -> None:
    """kopf's handler and format (json or plain), the root level, HTTP request lines at DEBUG."""
    kopf.configure(
        debug=level <= logging.DEBUG, log_format=kopf.LogFormat.JSON if log_format == "json" else kopf.LogFormat.PLAIN
    )
    logging.getLogger().setLevel(level)
    quiet_http_clients()
