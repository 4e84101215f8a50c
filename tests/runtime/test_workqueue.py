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


async def test_triggers_in_a_row_are_gathered_into_one_run_once_quiet():
    queue = WorkQueue(quiet=0.1, most=1.0)
    seen = []

    async def handle(key):
        seen.append((key, asyncio.get_running_loop().time()))

    task = await _run(queue, handle)
    start = asyncio.get_running_loop().time()
    for _ in range(4):  # a pod Ready, its InferenceService Ready, Events about them: 40 ms apart
        queue.add_soon("svc")
        assert queue.busy()  # gathering counts as work: idle() waits for it
        await asyncio.sleep(0.04)
    await queue.idle()
    task.cancel()
    assert [k for k, _ in seen] == ["svc"]
    assert seen[0][1] - start >= 0.12 + 0.1 - 0.02  # after the last trigger had been quiet for `quiet`


async def test_gathering_is_cut_short_by_most_and_by_a_plain_add():
    queue = WorkQueue(quiet=0.1, most=0.25)
    seen = []

    async def handle(key):
        seen.append((key, asyncio.get_running_loop().time()))

    task = await _run(queue, handle)
    start = asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - start < 0.5:  # never quiet
        queue.add_soon("busy")
        await asyncio.sleep(0.03)
    queue.add_soon("new")
    queue.add("new")  # e.g. the object itself changed: now, and the gathered trigger with it
    await queue.idle()
    task.cancel()
    busy = [t - start for k, t in seen if k == "busy"]
    assert busy and 0.2 <= busy[0] <= 0.45  # at most `most` after its first trigger
    new = [t - start for k, t in seen if k == "new"]
    assert len(new) == 1 and new[0] < 0.55


async def test_a_trigger_for_a_key_being_processed_runs_it_again_after_gathering():
    queue = WorkQueue(quiet=0.05, most=1.0)
    runs = []
    release = asyncio.Event()

    async def handle(key):
        runs.append(key)
        if len(runs) == 1:
            await release.wait()

    queue.add("k")
    task = await _run(queue, handle)
    await asyncio.sleep(0.02)
    queue.add_soon("k")  # the running reconcile may have read the state before this change
    release.set()
    await queue.idle()
    task.cancel()
    assert runs == ["k", "k"]
