import asyncio

from aim_core.runtime.workqueue import WorkQueue


async def _run(queue, handle, workers=2):
    task = asyncio.create_task(queue.run(handle, workers))
    return task


async def test_duplicate_adds_are_processed_once():
    queue = WorkQueue()
    seen = []

    async def handle(key):
        seen.append(key)

    for _ in range(5):
        queue.add("a")
    queue.add("b")
    task = await _run(queue, handle)
    await queue.idle()
    task.cancel()
    assert sorted(seen) == ["a", "b"]


async def test_key_added_while_active_runs_again_after_and_never_concurrently():
    queue = WorkQueue()
    running = set()
    overlaps = []
    runs = []
    release = asyncio.Event()

    async def handle(key):
        if key in running:
            overlaps.append(key)
        running.add(key)
        runs.append(key)
        if len(runs) == 1:
            await release.wait()
        running.discard(key)

    queue.add("k")
    task = await _run(queue, handle, workers=4)
    await asyncio.sleep(0.05)
    for _ in range(5):  # a burst of watch events while the first run is blocked: one follow-up
        queue.add("k")
    release.set()
    await queue.idle()
    task.cancel()
    assert runs == ["k", "k"]
    assert overlaps == []


async def test_add_after_delays_and_earlier_add_wins():
    queue = WorkQueue()
    seen = []

    async def handle(key):
        seen.append((key, asyncio.get_running_loop().time()))

    start = asyncio.get_running_loop().time()
    task = await _run(queue, handle)
    queue.add_after("late", 0.2)
    queue.add_after("soon", 0.2)
    queue.add("soon")
    await asyncio.sleep(0.35)
    task.cancel()
    names = [k for k, _ in seen]
    assert names.count("soon") == 1 and names.count("late") == 1
    late_at = dict(seen)["late"]
    assert late_at - start >= 0.19


def test_backoff_doubles_and_caps():
    queue = WorkQueue(base_delay=1, max_delay=5)
    delays = []
    loop = asyncio.new_event_loop()
    try:

        async def collect():
            for _ in range(5):
                delays.append(queue.backoff("x"))

        loop.run_until_complete(collect())
    finally:
        loop.close()
    assert delays == [1, 2, 4, 5, 5]
    queue.forget("x")
    assert queue._failures == {}
