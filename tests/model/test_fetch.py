"""ImageFetcher: one registry call per image, remembered failures with backoff, no hot loop."""

from __future__ import annotations

import asyncio

from aim_core.model.fetch import ImageFetcher
from aim_core.plugin.providers import RegistryCredentials
from aim_core.registry import ImageInfo, ImageReference, RegistryError

REF = ImageReference.parse("ghcr.io/org/img:1.0")
PINNED = ImageReference.parse("ghcr.io/org/img@sha256:" + "0" * 64)


class FakeRegistry:
    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls: list[tuple[str, object]] = []

    async def __call__(self, plugins, image, credentials):
        self.calls.append((str(image), credentials))
        await asyncio.sleep(0)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def error(kind, retry_after=None):
    return RegistryError(kind, f"{kind}!", registry="ghcr.io", image=str(REF), retry_after=retry_after)


async def test_an_image_is_fetched_once_even_by_concurrent_reconciles():
    registry = FakeRegistry(ImageInfo(digest="sha256:1"))
    fetcher = ImageFetcher(registry)
    results = await asyncio.gather(*(fetcher.lookup(None, REF, None) for _ in range(5)))
    assert len(registry.calls) == 1 and fetcher.calls == 1
    assert {r.info.digest for r in results} == {"sha256:1"}
    assert (await fetcher.lookup(None, REF, None)).fetched is False


async def test_credentials_are_part_of_the_key_so_nobody_borrows_another_secret():
    registry = FakeRegistry(ImageInfo(digest="sha256:1"))
    fetcher = ImageFetcher(registry)
    await fetcher.lookup(None, REF, RegistryCredentials(username="a", password="x"))
    await fetcher.lookup(None, REF, None)
    assert len(registry.calls) == 2


async def test_tag_answers_expire_and_digest_answers_do_not():
    clock = Clock()
    registry = FakeRegistry(ImageInfo(digest="sha256:1"))
    fetcher = ImageFetcher(registry, clock=clock, tag_ttl=600)
    await fetcher.lookup(None, REF, None)
    await fetcher.lookup(None, PINNED, None)
    clock.now += 601
    await fetcher.lookup(None, PINNED, None)
    assert len(registry.calls) == 2
    await fetcher.lookup(None, REF, None)
    assert len(registry.calls) == 3


async def test_a_permanent_failure_is_not_retried_until_its_backoff_ends_then_doubles():
    clock = Clock()
    registry = FakeRegistry(error("not_found"))
    fetcher = ImageFetcher(registry, clock=clock)
    first = await fetcher.lookup(None, REF, None)
    assert first.error.kind == "not_found" and first.retry_in == 60.0
    for _ in range(10):  # whatever re-triggers the model meanwhile
        again = await fetcher.lookup(None, REF, None)
        assert again.error is first.error and not again.fetched and again.backoff == 60.0
    assert len(registry.calls) == 1
    clock.now += 61
    second = await fetcher.lookup(None, REF, None)
    assert second.fetched and second.retry_in == 120.0 and len(registry.calls) == 2


async def test_transient_failures_honour_retry_after_and_recover():
    clock = Clock()
    registry = FakeRegistry(error("rate_limited", retry_after=30), ImageInfo(digest="sha256:2"))
    fetcher = ImageFetcher(registry, clock=clock)
    assert (await fetcher.lookup(None, REF, None)).retry_in == 30.0
    clock.now += 31
    ok = await fetcher.lookup(None, REF, None)
    assert ok.info.digest == "sha256:2" and ok.error is None
    assert (await fetcher.lookup(None, REF, None)).info.digest == "sha256:2" and len(registry.calls) == 2


async def test_new_credentials_start_afresh_after_an_auth_failure():
    registry = FakeRegistry(error("auth"), ImageInfo(digest="sha256:3"))
    fetcher = ImageFetcher(registry)
    assert (await fetcher.lookup(None, REF, None)).error.kind == "auth"
    fixed = await fetcher.lookup(None, REF, RegistryCredentials(username="u", password="p"))
    assert fixed.info.digest == "sha256:3"
