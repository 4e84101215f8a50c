"""Reading image metadata from registries, at most once per image (F21).

:class:`ImageFetcher` sits between the model controllers and
:func:`aim_core.registry.fetch_image_info`:

* **Cache.** A successful answer is kept per image reference and credentials
  (so one namespace's secret never reveals an image to another): models sharing
  an image cost one registry round trip. Answers for a reference pinned by
  digest never go stale; answers for a tag are kept for ``tag_ttl`` seconds.
  Across restarts the model's own status is the cache (see
  :mod:`aim_core.model.images`).
* **One call in flight per image.** Concurrent reconciles of models with the
  same image wait for the same request.
* **Backoff after failures.** A failed fetch is remembered; until its retry
  time the remembered error is returned without a registry call, whatever
  re-triggers the model. Permanent errors (``auth``, ``not_found``,
  ``invalid``) wait 1 min, doubling up to 1 h; transient ones 5 s, doubling up to
  5 min, or what the registry's ``Retry-After`` asked for. A change of the
  reference or the credentials starts afresh.

The clock is injectable; nothing here knows about Kubernetes.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from aim_core.model.observed import Lookup
from aim_core.plugin.providers import RegistryCredentials
from aim_core.registry import ImageInfo, ImageReference, RegistryError, fetch_image_info
from aim_core.registry.credentials import credentials_fingerprint

Fetch = Callable[[Any, ImageReference, RegistryCredentials | None], Awaitable[ImageInfo]]

PERMANENT_BACKOFF = (60.0, 3600.0)
TRANSIENT_BACKOFF = (5.0, 300.0)


@attrs.define
class _Failure:
    error: RegistryError
    attempts: int
    retry_at: float
    delay: float


def _delay(error: RegistryError, attempts: int) -> float:
    base, cap = PERMANENT_BACKOFF if error.permanent else TRANSIENT_BACKOFF
    delay = min(base * 2 ** (attempts - 1), cap)
    if error.retry_after is not None and not error.permanent:
        delay = max(delay, min(float(error.retry_after), cap))
    return delay


class ImageFetcher:
    """Cached, de-duplicated, backed-off image metadata lookups (see the module docstring)."""

    def __init__(
        self,
        fetch: Fetch = fetch_image_info,
        *,
        clock: Callable[[], float] = time.monotonic,
        tag_ttl: float = 600.0,
        max_entries: int = 4096,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._tag_ttl = tag_ttl
        self._max = max_entries
        self._ok: OrderedDict[tuple[str, str], tuple[ImageInfo, float]] = OrderedDict()
        self._failed: dict[tuple[str, str], _Failure] = {}
        self._inflight: dict[tuple[str, str], asyncio.Future[Lookup]] = {}
        self.calls = 0  #: registry calls made (for tests and benchmarks)

    async def lookup(self, plugins: Any, image: ImageReference, credentials: RegistryCredentials | None) -> Lookup:
        """Metadata of ``image``, from the cache, a remembered failure or one registry call."""
        key = (str(image), credentials_fingerprint(credentials))
        now = self._clock()
        cached = self._ok.get(key)
        if cached is not None and (image.digest or now - cached[1] < self._tag_ttl):
            self._ok.move_to_end(key)
            return Lookup(info=cached[0])
        failure = self._failed.get(key)
        if failure is not None and now < failure.retry_at:
            return Lookup(error=failure.error, retry_in=failure.retry_at - now, backoff=failure.delay)
        running = self._inflight.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[Lookup] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            result = await self._call(plugins, image, credentials, key)
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it, nobody logs "never retrieved"
            raise
        finally:
            del self._inflight[key]

    async def _call(
        self, plugins: Any, image: ImageReference, credentials: RegistryCredentials | None, key: tuple[str, str]
    ) -> Lookup:
        self.calls += 1
        try:
            info = await self._fetch(plugins, image, credentials)
        except RegistryError as error:
            previous = self._failed.get(key)
            attempts = previous.attempts + 1 if previous is not None and previous.error.kind == error.kind else 1
            delay = _delay(error, attempts)
            self._failed[key] = _Failure(error, attempts, self._clock() + delay, delay)
            return Lookup(error=error, retry_in=delay, backoff=delay, fetched=True)
        self._failed.pop(key, None)
        self._ok[key] = (info, self._clock())
        self._ok.move_to_end(key)
        while len(self._ok) > self._max:
            self._ok.popitem(last=False)
        return Lookup(info=info, fetched=True)

    def forget(self, image: ImageReference | str) -> None:
        """Drop everything remembered about ``image`` (any credentials)."""
        text = str(image)
        for table in (self._ok, self._failed):
            for key in [k for k in table if k[0] == text]:
                del table[key]
