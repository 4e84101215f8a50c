"""Failure patterns (spec 2.12): an image pull message or a failed container's log to a category and reason. Pure."""

from __future__ import annotations

import re

from aim_core.reconcile.health import Category

LOG_TAIL_LINES = 50  # lines of a failed container's log that are scanned
_MAX_EXCERPT = 500


# ---------------------------------------------------------------------------
# Failure patterns (spec 2.12)
# ---------------------------------------------------------------------------

_PULL_AUTH = re.compile(r"unauthori[sz]ed|authenticat|forbidden|denied|credentials|\b401\b|\b403\b", re.I)
_PULL_NOT_FOUND = re.compile(r"not found|\b404\b|manifest unknown|name unknown|no such", re.I)

# (category, reason, patterns); ``None`` marks the infrastructure group, whose
# hit ends the scan and leaves the pod to be judged by its termination reason.
_LOG_GROUPS: tuple[tuple[Category | None, str, re.Pattern[str]], ...] = (
    (
        None,
        "",
        re.compile(
            r"rbac.*not found|clusterrole.*not found|forbidden.*cannot.*resource|serviceaccount.*cannot",
            re.I,
        ),
    ),
    (
        Category.INVALID_SPEC,
        "SourceNotFound",
        re.compile(
            r"repository not found|RepositoryNotFoundError|\b404\b.*not found|NoSuchKey|NoSuchBucket"
            r"|model.*not found|file.*not found|s3.*\b404\b",
            re.I,
        ),
    ),
    (
        Category.AUTH,
        "AuthError",
        re.compile(
            r"access ?denied|s3.*\b403\b|\b403\b.*s3|InvalidAccessKeyId|SignatureDoesNotMatch|unauthori[sz]ed"
            r"|credentials not found|unable to locate credentials|NoCredentialProviders"
            r"|access to model .* is restricted|cannot access gated repo"
            r"|invalid (?:hf |hugging ?face |user )?(?:access )?token"
            r"|(?:hf|hugging ?face).*auth\w* failed|\b40[13]\b.*hf\.co|hf\.co.*\b40[13]\b",
            re.I,
        ),
    ),
    (
        Category.RESOURCE_EXHAUSTION,
        "StorageFull",
        re.compile(r"no space left on device|disk.*full|ENOSPC|quota.*exceeded|storage.*full", re.I),
    ),
)


def classify_pull_error(message: str) -> Category:
    """The category of an image-pull failure message: Auth, MissingUpstream or Infrastructure."""
    if _PULL_AUTH.search(message):
        return Category.AUTH
    if _PULL_NOT_FOUND.search(message):
        return Category.MISSING_UPSTREAM
    return Category.INFRASTRUCTURE


def classify_log(log: str) -> tuple[Category, str, str] | None:
    """``(category, reason, matching line)`` for the last lines of a failed container's log.

    Groups are tried in order (infrastructure, not found, auth, storage) and
    the first hit wins. ``None`` when nothing matched or the infrastructure
    group matched, so the caller falls back to the termination reason.
    """
    lines = [line.strip() for line in log.splitlines() if line.strip()][-LOG_TAIL_LINES:]
    for category, reason, pattern in _LOG_GROUPS:
        for line in lines:
            if pattern.search(line):
                return None if category is None else (category, reason, clip_line(line))
    return None


def clip_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_EXCERPT else text[: _MAX_EXCERPT - 3] + "..."
