"""Duration strings for Gateway API fields such as ``HTTPRoute`` ``timeouts.request``.

Users write durations the Kubernetes way (Go ``time.ParseDuration`` syntax:
``30s``, ``5m``, ``1h30m``, ``1.5s``, ``250ms``). Gateway API accepts a
narrower form, ``^([0-9]{1,5}(h|m|s|ms)){1,4}$``: integer groups only, no
fractions, no ``us``/``ns``. :func:`to_gateway_duration` reads the former and
writes the latter in Go's canonical spelling (``5m0s``, ``1h0m0s``), adding a
trailing ``ms`` group where Go would print a fraction (``1.5s`` -> ``1s500ms``).
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal, InvalidOperation

__all__ = ["GATEWAY_DURATION_PATTERN", "MAX_DURATION_NS", "parse_duration", "to_gateway_duration"]

GATEWAY_DURATION_PATTERN = re.compile(r"^([0-9]{1,5}(h|m|s|ms)){1,4}$")

_NS_PER_UNIT = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
# Longest units first so that "ms" is not read as "m" followed by "s".
_GROUP = re.compile(r"([0-9]*\.?[0-9]*)(ns|us|µs|μs|ms|h|m|s)")
_NS_PER_MS = 1_000_000
_NS_PER_S = 1_000_000_000
_MAX_GROUP = 99_999
#: The longest duration Go's ``time.Duration`` holds (an int64 of nanoseconds, about 2562047h47m).
MAX_DURATION_NS = 2**63 - 1


def parse_duration(text: str) -> int:
    """Nanoseconds in a Go-style duration string such as ``1h30m`` or ``1.5s``.

    ``"0"`` alone is allowed, as in Go; every other number needs a unit.

    :raises ValueError: the text is not a duration, it is negative, or it is longer than Go's
        ``time.Duration`` can hold (:data:`MAX_DURATION_NS`).
    """
    if not isinstance(text, str):
        raise ValueError(f"duration must be a string, got {type(text).__name__}")
    s = text.strip()
    if s.startswith("+"):
        s = s[1:]
    if s.startswith("-"):
        raise ValueError(f"duration {text!r} is negative; a timeout must be zero or more")
    if s == "0":
        return 0
    if not s:
        raise ValueError("duration is empty; write e.g. '30s', '5m' or '1h30m'")
    total = Decimal(0)
    pos = 0
    while pos < len(s):
        match = _GROUP.match(s, pos)
        if not match or match.group(1) in ("", "."):
            raise ValueError(
                f"invalid duration {text!r}: expected groups of a number and a unit "
                "(h, m, s, ms, us, ns), e.g. '30s', '5m' or '1h30m'"
            )
        try:
            number = Decimal(match.group(1))
        except InvalidOperation:  # pragma: no cover - the regex admits only digits and one dot
            raise ValueError(f"invalid number {match.group(1)!r} in duration {text!r}") from None
        total += number * _NS_PER_UNIT[match.group(2)]
        pos = match.end()
    if total != total.to_integral_value():
        raise ValueError(f"duration {text!r} is finer than a nanosecond")
    if total > MAX_DURATION_NS:
        raise ValueError(f"duration {text!r} is too long: at most 2562047h (the longest duration Kubernetes holds)")
    return int(total)


def to_gateway_duration(value: str | int | float | datetime.timedelta) -> str:
    """A Gateway API duration for ``value``, in Go's spelling with integer groups.

    ``value`` is a Go-style duration string, a number of seconds, or a
    :class:`datetime.timedelta`. Examples: ``"5m"`` -> ``"5m0s"``,
    ``"90s"`` -> ``"1m30s"``, ``"1.5s"`` -> ``"1s500ms"``, ``"250ms"`` ->
    ``"250ms"``, ``3600`` -> ``"1h0m0s"``, ``0`` -> ``"0s"``.

    :raises ValueError: the value is not a duration, is negative, has a part
        smaller than a millisecond (Gateway API cannot express it), or needs
        more than 99999 hours.
    """
    if isinstance(value, bool):
        raise ValueError("duration must be a string, a number of seconds or a timedelta, not a bool")
    if isinstance(value, datetime.timedelta):
        nanos = (value.days * 86_400 + value.seconds) * _NS_PER_S + value.microseconds * 1_000
    elif isinstance(value, int | float):
        seconds = Decimal(str(value))
        if seconds < 0:
            raise ValueError(f"duration {value!r} is negative; a timeout must be zero or more")
        nanos_exact = seconds * _NS_PER_S
        if nanos_exact != nanos_exact.to_integral_value():
            raise ValueError(f"duration of {value!r} seconds is finer than a millisecond")
        nanos = int(nanos_exact)
    else:
        nanos = parse_duration(value)
    if nanos < 0:
        raise ValueError(f"duration {value!r} is negative; a timeout must be zero or more")
    if nanos % _NS_PER_MS:
        raise ValueError(
            f"duration {value!r} has a part smaller than a millisecond; Gateway API durations "
            "have millisecond resolution"
        )
    millis = nanos // _NS_PER_MS
    text = _format_millis(millis)
    if not GATEWAY_DURATION_PATTERN.match(text):
        raise ValueError(f"duration {value!r} is too long for Gateway API (at most {_MAX_GROUP} hours)")
    return text


def _format_millis(millis: int) -> str:
    """Go-style ``XhYmZs`` with an ``ms`` group for the sub-second part."""
    if millis == 0:
        return "0s"
    seconds, ms = divmod(millis, 1000)
    if seconds == 0:
        return f"{ms}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h{minutes}m{secs}s" if hours else f"{minutes}m{secs}s" if minutes else f"{secs}s"
    return text + (f"{ms}ms" if ms else "")
