"""When model sources sync, and running those syncs off the reconcile path.

A reconcile of a source is cheap and frequent (its models change, the
operator restarts); a registry sync is slow and rate-limited. So syncs are
decided here and run as background tasks, one per source at a time:

* a sync starts when the source has none for its current ``generation``
  (created, or its spec changed), when a pull secret it names appeared,
  changed or went away since the last sync, or when the previous one is due again
  (``syncInterval`` after it ended, sooner after failures: see
  :mod:`aim_core.modelsource.intervals`);
* the reconcile that started it waits a few seconds for it; a sync that takes
  longer finishes in the background and wakes the source through the engine,
  while reconciles in between plan from the last completed sync;
* every other reconcile plans from the last completed sync without a single
  registry request, so a model's status change never hits a registry.

The time until the next sync is the plan's requeue hint, not a timer per
object. State is in memory: after a restart each source syncs once.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.modelsource.intervals import sync_interval
from aim_core.modelsource.observed import Failure, Observed, SecretProblem, SelectorResult, Sync
from aim_core.modelsource.plan import next_sync_delay
from aim_core.modelsource.secrets import SecretLookup, check_pull_secrets, fingerprint
from aim_core.modelsource.selectors import Selector, parse_selectors
from aim_core.modelsource.sync import SYNC_ERROR, Catalog, CountingCatalog, OfflineCatalog, sync_selectors
from aim_core.modelsource.view import SourceView
from aim_core.plugin.providers import RegistryCredentials
from aim_core.registry import InvalidPullSecret, credentials_for
from aim_core.registry import list_repositories as _list_repositories
from aim_core.registry import list_tags as _list_tags

__all__ = ["RegistryCatalog", "SyncRunner"]

log = logging.getLogger("aim_engine.modelsource")

SYNC_WAIT = 5.0  # seconds a reconcile waits for the sync it started


class RegistryCatalog:
    """The registry layer's façade: one client per host, chosen by the ``aim_registry_client`` hook."""

    def __init__(self, plugins: Any) -> None:
        self.plugins = plugins

    async def list_tags(self, registry: str, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        return await _list_tags(self.plugins, registry, repository, credentials)

    async def list_repositories(
        self, registry: str, pattern: str, credentials: RegistryCredentials | None
    ) -> list[str]:
        return await _list_repositories(self.plugins, registry, pattern, credentials)


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@attrs.define
class _State:
    uid: str | None
    latest: Sync | None = None
    secret_problems: tuple[SecretProblem, ...] = ()
    task: asyncio.Task[tuple[Sync, tuple[SecretProblem, ...]]] | None = None
    task_generation: int | None = None
    secrets_used: tuple[Any, ...] | None = None  # fingerprint of the pull secrets the latest sync started with
    task_secrets: tuple[Any, ...] | None = None
    waiting: int = 0


class SyncRunner:
    """Per-source sync state and background sync tasks (one runner per controller)."""

    def __init__(
        self,
        catalog: Callable[[Any], Catalog] | None = None,
        *,
        wait: float = SYNC_WAIT,
        clock: Callable[[], datetime.datetime] = utcnow,
    ) -> None:
        self._catalog = catalog or RegistryCatalog
        self.wait = wait
        self.clock = clock
        self._states: dict[str, _State] = {}

    def forget_missing(self, exists: Callable[[str], bool]) -> None:
        """Drop the state of sources that are gone, cancelling their syncs."""
        for name in [n for n in self._states if not exists(n)]:
            state = self._states.pop(name)
            if state.task is not None:
                state.task.cancel()

    async def observe(
        self,
        ctx: Any,
        obj: Mapping[str, Any],
        models: Sequence[Mapping[str, Any]],
        model_named: Callable[[str], Mapping[str, Any] | None],
        wake: Callable[[], None] | None = None,
        secret_named: SecretLookup = lambda _name: None,
    ) -> Observed:
        """What the plan needs, starting (and briefly awaiting) a sync when one is due.

        ``secret_named`` finds a pull secret in the operator namespace (from the store).
        """
        source = SourceView.of(obj)
        name, generation = source.name, source.generation
        selectors = tuple(parse_selectors(source.selectors_spec))
        if ctx.extras.get("offline"):  # aim-engine render: explicit images only, no registry, no secrets
            results = await sync_selectors(selectors, OfflineCatalog(), lambda _registry: None)
            sync = Sync(generation, tuple(results), self.clock(), 0, None)
            return Observed(
                now=self.clock(),
                selectors=selectors,
                sync=sync,
                syncing=False,
                models=tuple(models),
                model_named=model_named,
            )
        state = self._states.get(name)
        if state is None or state.uid != source.uid:
            if state is not None and state.task is not None:
                state.task.cancel()
            state = self._states[name] = _State(source.uid)
        now = self.clock()
        latest = state.latest if state.latest is not None and state.latest.generation == generation else None
        if state.task is not None and state.task_generation != generation:
            state.task.cancel()  # the spec changed under a running sync: start over
            state.task = None
        secrets_now = fingerprint(secret_named, source.secret_names)
        credentials_changed = (
            latest is not None and state.secrets_used is not None and secrets_now != state.secrets_used
        )
        if state.task is None and (_due(latest, source, now) or credentials_changed):
            if credentials_changed:
                log.info("model source %s: its pull secrets changed, syncing now", name)
            state.task = asyncio.create_task(
                self._sync(ctx, source.secret_names, selectors, generation, state.latest, secret_named),
                name=f"model-source-sync-{name}",
            )
            state.task_generation, state.task_secrets = generation, secrets_now
            state.task.add_done_callback(lambda task: self._finished(name, state, task, wake))
        if state.task is not None and self.wait > 0:
            state.waiting += 1
            try:
                await asyncio.wait({state.task}, timeout=self.wait)
            finally:
                state.waiting -= 1
            if state.task is not None and state.task.done():
                self._take(state, state.task)
        latest = state.latest if state.latest is not None and state.latest.generation == generation else None
        return Observed(
            now=self.clock(),
            selectors=selectors,
            sync=latest,
            syncing=state.task is not None,
            models=tuple(models),
            model_named=model_named,
            secret_problems=state.secret_problems if latest is not None else (),
        )

    def _take(self, state: _State, task: asyncio.Task[Any]) -> None:
        if state.task is task:
            state.task = None
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:  # _sync catches everything; this is a bug, keep the old result
            log.error("model source sync crashed", exc_info=exc)
            return
        state.latest, state.secret_problems = task.result()
        state.secrets_used = state.task_secrets

    def _finished(self, name: str, state: _State, task: asyncio.Task[Any], wake: Callable[[], None] | None) -> None:
        if self._states.get(name) is not state:
            return
        awaited = state.waiting > 0
        if state.task is task:
            self._take(state, task)
        if not awaited and not task.cancelled() and wake is not None:
            wake()

    async def _sync(
        self,
        ctx: Any,
        secret_names: Sequence[str],
        selectors: Sequence[Selector],
        generation: int | None,
        previous: Sync | None,
        secret_named: SecretLookup,
    ) -> tuple[Sync, tuple[SecretProblem, ...]]:
        counting = CountingCatalog(self._catalog(ctx.plugins))
        try:
            secrets, problems = check_pull_secrets(secret_named, ctx.operator_namespace, secret_names)
            credentials = _credentials(secrets)
            results = await sync_selectors(selectors, counting, credentials)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the source from reporting
            log.exception("model source sync failed")
            failure = Failure(SYNC_ERROR, f"sync failed: {type(exc).__name__}: {exc}", transient=True)
            problems, results = [], [SelectorResult(failures=(failure,), listed=False) for _ in selectors]
        finished = self.clock()
        failed = any(not r.ok for r in results)
        same = previous is not None and previous.generation == generation
        attempt = ((previous.attempt if same and previous else 0) + 1) if failed else 0
        succeeded = any(r.listed for r in results) or not results
        last_success = finished if succeeded else (previous.last_success if previous else None)
        sync = Sync(generation, tuple(results), finished, attempt, last_success, counting.requests)
        log.info(
            "synced model source: %d selectors, %d matches, %d failed, %d registry requests",
            len(results),
            sum(len(r.matches) for r in results),
            sum(1 for r in results if not r.ok),
            counting.requests,
        )
        return sync, tuple(problems)


def _due(latest: Sync | None, source: SourceView, now: datetime.datetime) -> bool:
    if latest is None:
        return True
    delay = next_sync_delay(latest, sync_interval(source.sync_interval))
    return now >= latest.finished_at + datetime.timedelta(seconds=delay)


def _credentials(secrets: Sequence[Mapping[str, Any]]) -> Callable[[str], RegistryCredentials | None]:
    cache: dict[str, RegistryCredentials | None | InvalidPullSecret] = {}

    def lookup(registry: str) -> RegistryCredentials | None:
        if registry not in cache:
            try:
                cache[registry] = credentials_for(registry, secrets)
            except InvalidPullSecret as exc:
                cache[registry] = exc
        found = cache[registry]
        if isinstance(found, InvalidPullSecret):
            raise found
        return found

    return lookup
