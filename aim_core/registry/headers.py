"""What registries say in HTTP headers: auth challenges, paging links, retry delays. Pure.

``WWW-Authenticate`` (:func:`parse_challenge`), the RFC 8288 ``Link`` header's
``rel="next"`` (:func:`parse_link_next`) and ``Retry-After`` in either of its forms
(:func:`retry_after_seconds`).
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping

import attrs

__all__ = ["Challenge", "parse_challenge", "parse_link_next", "retry_after_seconds"]


@attrs.frozen
class Challenge:
    """A parsed ``WWW-Authenticate`` header."""

    scheme: str  #: ``basic`` or ``bearer`` (lower case)
    params: Mapping[str, str] = attrs.field(factory=dict)


_PARAM = re.compile(r'\s*([A-Za-z0-9_\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?')


def parse_challenge(header: str) -> Challenge | None:
    """``Bearer realm="...",service="...",scope="..."`` -> Challenge; ``None`` when unreadable."""
    header = header.strip()
    if not header:
        return None
    scheme, _, rest = header.partition(" ")
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest):
        value = match.group(2) if match.group(2) is not None else match.group(3)
        params[match.group(1).lower()] = re.sub(r"\\(.)", r"\1", value or "")
    return Challenge(scheme.lower(), params)


def parse_link_next(header: str | None) -> str | None:
    """The ``rel="next"`` target of an RFC 8288 ``Link`` header, as given (possibly relative)."""
    if not header:
        return None
    for part in re.finditer(r"<([^>]*)>\s*((?:;\s*[^;,]+)*)", header):
        params = part.group(2).lower().replace(" ", "")
        if 'rel="next"' in params or "rel=next" in params:
            return part.group(1)
    return None


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
