"""The ``downloadFilter`` of an artifact: which files of a source are sized and downloaded.

Globs are fnmatch-style and match the whole relative path (``*`` also matches ``/``),
as ``huggingface_hub``'s ``allow_patterns``/``ignore_patterns`` do; a pattern ending in
``/`` matches everything below that folder. Include first (when given, a file must
match one include pattern), then exclude (a file matching any exclude pattern is
dropped). With no filter at all, files in subfolders are skipped (``exclude: ["*/*"]``);
an empty filter ``{}`` keeps everything. The same :func:`select` serves the size check
and the download, so the volume is sized for exactly what gets downloaded.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from fnmatch import fnmatchcase

import attrs

DEFAULT_EXCLUDE = ("*/*",)


class FilterError(ValueError):
    """The filter given in the environment is not usable; the message says how to fix it."""


@attrs.frozen
class DownloadFilter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def default(cls) -> DownloadFilter:
        return cls(exclude=DEFAULT_EXCLUDE)

    @classmethod
    def from_json(cls, text: str | None) -> DownloadFilter:
        """Parse ``AIM_DOWNLOAD_FILTER``: unset or blank -> the default; ``{}`` -> everything."""
        if text is None or not text.strip():
            return cls.default()
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FilterError(
                f"AIM_DOWNLOAD_FILTER is not JSON ({exc.msg}); expected e.g. "
                '{"include": ["*.safetensors"], "exclude": ["original/*"]}'
            ) from None
        if not isinstance(value, dict):
            raise FilterError("AIM_DOWNLOAD_FILTER must be a JSON object with 'include' and/or 'exclude' lists")
        unknown = sorted(set(value) - {"include", "exclude"})
        if unknown:
            raise FilterError(f"AIM_DOWNLOAD_FILTER has unknown keys {unknown}; only 'include' and 'exclude' exist")
        return cls(include=_patterns(value, "include"), exclude=_patterns(value, "exclude"))

    def keeps(self, path: str) -> bool:
        if self.include and not any(fnmatchcase(path, p) for p in _expanded(self.include)):
            return False
        return not any(fnmatchcase(path, p) for p in _expanded(self.exclude))

    def describe(self) -> str:
        parts = []
        if self.include:
            parts.append("include " + ", ".join(self.include))
        if self.exclude:
            parts.append("exclude " + ", ".join(self.exclude))
        return "; ".join(parts) or "all files"


def select(paths: Iterable[str], flt: DownloadFilter) -> list[str]:
    """The paths the filter keeps, in their given order."""
    return [p for p in paths if flt.keeps(p)]


def _patterns(value: dict[str, object], key: str) -> tuple[str, ...]:
    raw = value.get(key)
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise FilterError(f"AIM_DOWNLOAD_FILTER.{key} must be a list of glob strings")
    for pattern in raw:
        if not pattern.strip():
            raise FilterError(f"AIM_DOWNLOAD_FILTER.{key} contains an empty pattern")
    return tuple(raw)


def _expanded(patterns: Sequence[str]) -> list[str]:
    return [p + "*" if p.endswith("/") else p for p in patterns]
