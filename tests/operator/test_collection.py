"""The operator's garbage collection policy: young generations as usual, the oldest one when idle."""

from __future__ import annotations

import asyncio
import gc

import pytest

from aim_core.operator import collection


@pytest.fixture
def thresholds():
    previous = gc.get_threshold()
    yield
    gc.set_threshold(*previous)


@pytest.fixture
def full_collections(monkeypatch):
    calls: list[tuple] = []
    monkeypatch.setattr(collection.gc, "collect", lambda *args: calls.append(args) or 0)
    return calls


def test_configure_leaves_the_oldest_generation_to_collect_old_and_returns_what_was_set(thresholds):
    gc.set_threshold(700, 10, 10)
    assert collection.configure() == (700, 10, 10)
    young, middle, old = gc.get_threshold()
    assert young > 700 and middle == 10 and old == collection.NEVER


async def run_for(seconds: float, **kwargs) -> None:
    task = asyncio.create_task(collection.collect_old(poll=0.01, **kwargs))
    await asyncio.sleep(seconds)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_an_idle_operator_collects_what_was_promoted_once_per_interval(full_collections, monkeypatch):
    monkeypatch.setattr(collection, "old_generation_pending", lambda: True)
    await run_for(0.3, idle=lambda: True, min_interval=0.1, max_interval=10)
    assert 1 <= len(full_collections) <= 3  # not at every poll: at most once per min_interval
    assert full_collections[0] == ()  # a full collection


async def test_nothing_promoted_means_no_collection_however_long_it_waits(full_collections, monkeypatch):
    monkeypatch.setattr(collection, "old_generation_pending", lambda: False)
    await run_for(0.2, idle=lambda: True, min_interval=0, max_interval=0)
    assert full_collections == []


async def test_a_busy_operator_waits_for_idle_until_the_longest_interval(full_collections, monkeypatch):
    monkeypatch.setattr(collection, "old_generation_pending", lambda: True)
    await run_for(0.2, idle=lambda: False, min_interval=0.01, max_interval=10)
    assert full_collections == []  # busy, and the longest interval has not passed
    await run_for(0.3, idle=lambda: False, min_interval=0.01, max_interval=0.1)
    assert full_collections  # under constant load it still collects, after max_interval


def test_pending_follows_promotions_into_the_oldest_generation():
    gc.collect()
    assert not collection.old_generation_pending()
    gc.collect(1)  # a pass over the middle generation promotes its survivors
    assert collection.old_generation_pending()
