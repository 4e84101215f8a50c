"""Repository globs: ``org/aim-*`` where ``*`` is any run of characters (``/`` included), anchored.

Pure: importable by plan code.
"""

from __future__ import annotations

import functools
import re

__all__ = ["literal_prefix", "repository_matches"]


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)))


def repository_matches(pattern: str, repository: str) -> bool:
    """Whether ``repository`` matches the glob ``pattern`` as a whole."""
    return _compiled(pattern).fullmatch(repository) is not None


def literal_prefix(pattern: str) -> str:
    """The part of ``pattern`` before its first ``*`` (``org/aim-*`` -> ``org/aim-``)."""
    return pattern.split("*", 1)[0]
