"""Listing a source's selectors against registries (F77): the only step that talks to the network.

For each selector, one of the strategies of F77:

1. ``explicit``: ``repo:tag`` without ``*`` is that image, no request at all;
2. ``tags``: list the tags of the one repository and keep those the selector allows;
3. ``repositories``: list repositories matching the ``*`` pattern (Docker Hub's
   and GitHub's APIs or ``/v2/_catalog``, decided by the registry plugin), then
   the tags of each, ten at a time across the whole sync.

Registries are reached through a :class:`Catalog`; in the operator that is
:class:`RegistryCatalog`, the registry layer's façade behind the
``aim_registry_client`` hook. A failure fails the selector it belongs to
(``Failure`` with a reason, a message naming the registry, and whether it may
pass by itself); the other selectors still sync. Filtering happens here, right
after each listing, so only matches are kept, never whole catalogs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from aim_core.modelsource.observed import Failure, SelectorResult
from aim_core.modelsource.selectors import Match, Selector
from aim_core.plugin.providers import RegistryCredentials
from aim_core.reconcile.errors import classify

__all__ = [
    "CONCURRENCY",
    "Catalog",
    "CountingCatalog",
    "OfflineCatalog",
    "failure_from",
    "sync_selectors",
]

log = logging.getLogger("aim_engine.modelsource")

CONCURRENCY = 10  # registry listings in flight per sync (upstream fetches GHCR tags 10 at a time)

Credentials = Callable[[str], RegistryCredentials | None]

# Per-selector failure reasons.
AUTH_FAILED = "RegistryAuthFailed"
NOT_FOUND = "RepositoryNotFound"
RATE_LIMITED = "RegistryRateLimited"
TIMEOUT = "RegistryTimeout"
UNAVAILABLE = "RegistryUnavailable"
HOST_NOT_FOUND = "RegistryHostNotFound"
INVALID_RESPONSE = "RegistryInvalidResponse"
SYNC_ERROR = "SyncError"
INVALID_PULL_SECRET = "InvalidPullSecret"
NOT_LISTED_OFFLINE = "NotListedOffline"


class Catalog(Protocol):
    """Lists what a registry holds; raises the registry layer's ``RegistryError`` on failure."""

    async def list_tags(self, registry: str, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        """All tags of ``repository`` on ``registry``."""

    async def list_repositories(
        self, registry: str, pattern: str, credentials: RegistryCredentials | None
    ) -> list[str]:
        """Repositories on ``registry`` that may match the ``*`` pattern (the caller re-checks)."""


class OfflineListing(Exception):
    """Raised by :class:`OfflineCatalog`: no registry is asked in ``aim-engine render``."""


class OfflineCatalog:
    """A catalog that lists nothing: explicit ``repo:tag`` entries still yield their image."""

    async def list_tags(self, registry: str, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        raise OfflineListing(f"tags of {repository} on {registry}")

    async def list_repositories(
        self, registry: str, pattern: str, credentials: RegistryCredentials | None
    ) -> list[str]:
        raise OfflineListing(f"repositories matching {pattern} on {registry}")


class CountingCatalog:
    """Wraps a catalog and counts the listings asked of it."""

    def __init__(self, inner: Catalog) -> None:
        self.inner = inner
        self.requests = 0

    async def list_tags(self, registry: str, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        self.requests += 1
        return await self.inner.list_tags(registry, repository, credentials)

    async def list_repositories(
        self, registry: str, pattern: str, credentials: RegistryCredentials | None
    ) -> list[str]:
        self.requests += 1
        return await self.inner.list_repositories(registry, pattern, credentials)


def _who(credentials: RegistryCredentials | None) -> str:
    if credentials is None:
        return "without credentials (no pull secret in spec.imagePullSecrets has an entry for it)"
    return "with the credentials from spec.imagePullSecrets"


def failure_from(exc: BaseException, registry: str, what: str, credentials: RegistryCredentials | None) -> Failure:
    """A :class:`Failure` for an error met while listing ``what`` on ``registry``.

    The message names the registry and the reason, never the credentials:
    the registry layer's errors are free of them, and we add only whether any
    were sent.
    """
    if isinstance(exc, OfflineListing):
        return Failure(
            NOT_LISTED_OFFLINE,
            f"{what} on {registry} not listed: rendering offline asks no registry "
            "(aim-engine tags lists what an entry matches)",
        )
    kind = getattr(exc, "kind", None)
    detail = str(exc) or type(exc).__name__
    retry_after = getattr(exc, "retry_after", None)
    _, classified = classify(exc)
    if classified == "DNSFailure" or getattr(exc, "reason", None) == "DNSFailure":
        return Failure(
            HOST_NOT_FOUND,
            f"registry host {registry} cannot be resolved (check the registry name): {detail}",
            transient=False,
        )
    if kind == "auth":
        return Failure(AUTH_FAILED, f"{registry} refused to list {what} {_who(credentials)}: {detail}")
    if kind == "not_found":
        return Failure(
            NOT_FOUND, f"{what} does not exist on {registry} (or is private and needs a pull secret): {detail}"
        )
    if kind == "rate_limited":
        return Failure(
            RATE_LIMITED,
            f"{registry} is rate-limiting listing {what}: {detail}",
            transient=True,
            retry_after=retry_after,
        )
    if kind == "timeout":
        return Failure(
            TIMEOUT,
            f"{registry} did not answer in time listing {what}: {detail}",
            transient=True,
            retry_after=retry_after,
        )
    if kind == "unavailable":
        return Failure(
            UNAVAILABLE, f"{registry} is unavailable listing {what}: {detail}", transient=True, retry_after=retry_after
        )
    if kind == "invalid":
        return Failure(INVALID_RESPONSE, f"{registry} answered listing {what} with something unusable: {detail}")
    if classified in ("ConnectionRefused", "NetworkTimeout", "ConnectionReset", "NetworkError"):
        return Failure(UNAVAILABLE, f"{registry} is unreachable listing {what}: {classified}: {detail}", transient=True)
    log.warning("listing %s on %s failed unexpectedly", what, registry, exc_info=exc)
    return Failure(SYNC_ERROR, f"listing {what} on {registry} failed: {type(exc).__name__}: {detail}", transient=True)


async def _tags(
    catalog: Catalog,
    selector: Selector,
    repository: str,
    credentials: RegistryCredentials | None,
    limit: asyncio.Semaphore,
) -> list[Match]:
    async with limit:
        tags = await catalog.list_tags(selector.registry, repository, credentials)
    return selector.select_tags(repository, tags)


async def _sync_one(
    catalog: Catalog, selector: Selector, credentials: Credentials, limit: asyncio.Semaphore
) -> SelectorResult:
    if selector.problem is not None:
        return SelectorResult(failures=(Failure(selector.problem.reason, selector.problem.message),), listed=False)
    if selector.strategy == "explicit":
        match = selector.explicit_match()
        return SelectorResult(matches=(match,) if match else ())
    try:
        creds = credentials(selector.registry)
    except ValueError as exc:  # InvalidPullSecret: the entry for this registry is unusable
        return SelectorResult(failures=(Failure(INVALID_PULL_SECRET, str(exc)),), listed=False)
    if selector.strategy == "tags":
        if not selector.matches_repository(selector.repository):
            return SelectorResult()  # excluded: nothing to list
        try:
            matches = await _tags(catalog, selector, selector.repository, creds, limit)
        except Exception as exc:  # noqa: BLE001 - becomes this selector's failure
            what = f"tags of {selector.repository}"
            return SelectorResult(failures=(failure_from(exc, selector.registry, what, creds),), listed=False)
        return SelectorResult(matches=tuple(matches), repositories=1)

    try:
        async with limit:
            found = await catalog.list_repositories(selector.registry, selector.repository, creds)
    except Exception as exc:  # noqa: BLE001
        what = f"repositories matching {selector.repository}"
        return SelectorResult(failures=(failure_from(exc, selector.registry, what, creds),), listed=False)
    repositories = sorted({r for r in found if selector.matches_repository(r)})
    outcomes = await asyncio.gather(
        *(_tags(catalog, selector, r, creds, limit) for r in repositories), return_exceptions=True
    )
    matches: list[Match] = []
    failures: list[Failure] = []
    listed_any = False
    for repository, outcome in zip(repositories, outcomes):
        if isinstance(outcome, BaseException):
            if getattr(outcome, "kind", None) == "not_found":
                continue  # listed but holds no tags (or vanished since): nothing to match
            if not isinstance(outcome, Exception):
                raise outcome
            failures.append(failure_from(outcome, selector.registry, f"tags of {repository}", creds))
        else:
            listed_any = True
            matches += outcome
    listed = listed_any or not failures
    return SelectorResult(
        matches=tuple(matches), failures=tuple(failures), listed=listed, repositories=len(repositories)
    )


async def sync_selectors(
    selectors: Sequence[Selector], catalog: Catalog, credentials: Credentials, *, concurrency: int = CONCURRENCY
) -> list[SelectorResult]:
    """A result per selector, in order; listings run at most ``concurrency`` at a time."""
    limit = asyncio.Semaphore(concurrency)
    return list(await asyncio.gather(*(_sync_one(catalog, s, credentials, limit) for s in selectors)))


def describe_results(selectors: Sequence[Selector], results: Sequence[SelectorResult]) -> list[dict[str, Any]]:
    """A plain summary per selector (for logs and the ``tags`` command)."""
    return [
        {
            "selector": s.label,
            "registry": s.registry,
            "strategy": s.strategy,
            "matches": [m.image for m in r.matches],
            "failures": [f"{f.reason}: {f.message}" for f in r.failures],
        }
        for s, r in zip(selectors, results)
    ]
