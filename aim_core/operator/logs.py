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
import re
from collections.abc import Sequence

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
