"""What an artifact asks for, checked before anything is built from it. Pure.

The CRD schema catches the shape (a ``hf://`` or ``s3://`` URI, a quantity
pattern, list types); the checks here catch what a pattern cannot, so that no
Job or PVC the API server (or the downloader) would refuse is ever sent:

* ``sourceUri``: empty path segments, ``.`` and ``..`` segments, backslashes
  and control characters; a Hugging Face id is ``org/name`` or ``name``; an
  S3 URI names a bucket;
* ``size``: not a quantity, negative, beyond int64 bytes (``0`` means
  "unknown": the size check runs, as upstream);
* download filters (D35): empty patterns, unclosed ``[`` classes, absolute
  patterns and patterns with ``..`` segments (they could only match files
  outside the repository), more than 100 patterns or patterns over 512
  characters;
* what would make the API server refuse the Job or the PVC: environment
  variable names, storage class and pull-secret names that are not DNS
  subdomains, an image reference with spaces.

Each finding is a sentence naming the field and what to do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aim_core.artifact.quantities import QuantityError, parse_bytes

SCHEMES = ("hf", "s3")
MAX_PATTERNS = 100
MAX_PATTERN_LENGTH = 512

#: The filter used when neither the artifact nor its runtime config sets one
#: (D35): files in subdirectories are skipped. ``*`` crosses ``/`` in fnmatch,
#: so ``*/*`` matches every path that has a directory part.
DEFAULT_FILTER: dict[str, list[str]] = {"exclude": ["*/*"]}

_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")
_HF_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def source_problems(uri: str) -> list[str]:
    """What is wrong with ``spec.sourceUri`` (empty when it is usable)."""
    if not uri:
        return ["spec.sourceUri is empty: set it to hf://<org>/<model> or s3://<bucket>/<path>"]
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in SCHEMES:
        return [f"spec.sourceUri {uri!r} must start with hf:// or s3://"]
    if _CONTROL.search(uri) or any(c.isspace() for c in uri):
        return [f"spec.sourceUri {uri!r} contains spaces, control characters or backslashes"]
    path = rest.split("?", 1)[0].rstrip("/")
    segments = path.split("/")
    if any(s in (".", "..") for s in segments):
        return [f"spec.sourceUri {uri!r} has '.' or '..' path segments; name the repository or object directly"]
    if any(s == "" for s in segments):
        return [f"spec.sourceUri {uri!r} has an empty path segment"]
    if scheme == "hf":
        repo = path.split("@", 1)[0]
        parts = repo.split("/")
        if len(parts) > 2 or not all(_HF_PART.match(p) for p in parts):
            return [f"spec.sourceUri {uri!r} is not a Hugging Face repository id: use hf://<org>/<model>"]
    if scheme == "s3" and not _BUCKET.match(segments[0]):
        return [f"spec.sourceUri {uri!r} does not name a valid S3 bucket: use s3://<bucket>/<path>"]
    return []


def spec_size(spec: Mapping[str, Any]) -> tuple[int | None, str | None]:
    """``(bytes, problem)`` for ``spec.size``: ``(None, None)`` when unset or 0 (to be discovered)."""
    raw = spec.get("size")
    if raw is None or raw == "":
        return None, None
    try:
        size = parse_bytes(raw)
    except QuantityError as exc:
        return None, f"spec.size {exc}; use a positive quantity such as 20Gi, or leave it out to measure the source"
    return (size or None), None


def _pattern_problem(pattern: Any) -> str | None:
    if not isinstance(pattern, str) or not pattern.strip():
        return "an empty pattern matches nothing; remove it"
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"a pattern is longer than {MAX_PATTERN_LENGTH} characters"
    if _CONTROL.search(pattern.replace("\\", "")):
        return f"{pattern!r} contains control characters"
    if pattern.startswith("/") or any(s == ".." for s in pattern.split("/")):
        return f"{pattern!r} points outside the repository; patterns are relative file paths such as '*.json'"
    i = 0
    while i < len(pattern):
        if pattern[i] == "[":
            j = i + 1
            if pattern[j : j + 1] == "!":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1  # a ']' right after '[' or '[!' is a literal member
            end = pattern.find("]", j)
            if end < 0:
                return f"{pattern!r} has an unclosed '['"
            i = end
        i += 1
    return None


def filter_problems(value: Any, where: str) -> list[str]:
    """What is wrong with a download filter at ``where`` (e.g. ``spec.downloadFilter``)."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [f"{where} must be an object with include and exclude lists"]
    problems = []
    for key in ("include", "exclude"):
        patterns = value.get(key)
        if patterns is None:
            continue
        if not isinstance(patterns, list):
            problems.append(f"{where}.{key} must be a list of glob patterns")
            continue
        if len(patterns) > MAX_PATTERNS:
            problems.append(f"{where}.{key} has more than {MAX_PATTERNS} patterns")
        for pattern in patterns:
            problem = _pattern_problem(pattern)
            if problem is not None:
                problems.append(f"{where}.{key}: {problem}")
    return problems


def effective_filter(spec: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[dict[str, list[str]], str]:
    """The filter the size check and the download both apply, and where it came from.

    The artifact's ``spec.downloadFilter`` wins, then the runtime config's
    ``storage.downloadFilter``, then :data:`DEFAULT_FILTER`. ``{}`` is a
    filter (everything), not an absence.
    """
    for value, where in (
        (spec.get("downloadFilter"), "spec.downloadFilter"),
        ((config.get("storage") or {}).get("downloadFilter"), "runtime config storage.downloadFilter"),
    ):
        if isinstance(value, Mapping):
            return {k: list(value[k]) for k in ("include", "exclude") if value.get(k) is not None}, where
    return dict(DEFAULT_FILTER), "default"


def filter_json(flt: Mapping[str, Any]) -> str:
    """The filter as the downloader reads it from ``AIM_DOWNLOAD_FILTER``: compact JSON."""
    return json.dumps({k: flt[k] for k in ("include", "exclude") if k in flt}, separators=(",", ":"))


_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def env_problems(env: Any, where: str) -> list[str]:
    """Environment variable names the API server would refuse in a container."""
    problems = []
    for entry in env or ():
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            problems.append(
                f"{where}: {name!r} is not a valid environment variable name (letters, digits, '_', "
                "'-' and '.', not starting with a digit)"
            )
    return problems


def object_problems(spec: Mapping[str, Any], config: Mapping[str, Any], config_name: str) -> list[str]:
    """Names and values the API server would refuse in the artifact's Jobs and PVC."""
    problems = env_problems(spec.get("env"), "spec.env")
    problems += env_problems(config.get("env"), f"runtime config {config_name!r} env")
    for value, where in (
        (spec.get("storageClassName"), "spec.storageClassName"),
        (
            (config.get("storage") or {}).get("defaultStorageClassName"),
            f"runtime config {config_name!r} storage.defaultStorageClassName",
        ),
    ):
        if value and (len(value) > 253 or not _SUBDOMAIN.match(value)):
            problems.append(f"{where} {value!r} is not a valid storage class name (lower-case DNS subdomain)")
    for secret in spec.get("imagePullSecrets") or ():
        name = secret.get("name") if isinstance(secret, Mapping) else None
        if name and (len(name) > 253 or not _SUBDOMAIN.match(name)):
            problems.append(f"spec.imagePullSecrets: {name!r} is not a valid Secret name (lower-case DNS subdomain)")
    image = spec.get("modelDownloadImage")
    if isinstance(image, str) and image and (image != image.strip() or any(c.isspace() for c in image)):
        problems.append(f"spec.modelDownloadImage {image!r} contains spaces")
    return problems
