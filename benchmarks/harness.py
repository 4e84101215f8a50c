"""The pieces the benchmark drives: a timing emulator, the operator in a thread, call accounting."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import Counter
from collections.abc import Iterable
from typing import Any

import aiohttp.test_utils
import attrs
import kopf

from aim_core.operator.run import operate
from aim_core.operator.settings import Settings
from aim_core.reconcile.resources import SERVICES
from aim_testing.emulator import READ_VERBS, ApiCall, Emulator

OPERATOR_AGENT = "aim-engine"  # the User-Agent of aim_core.kube.Kube
KOPF_AGENT = "kopf"
QUIET = 0.3  # seconds without any request before the operator counts as settled


@attrs.define(kw_only=True)
class TimingEmulator(Emulator):
    """The API emulator, noting when objects are first stored, with a request log of its own.

    * ``first_stored``: for the resources in ``timed``, when each object was first
      stored, taken inside the write handler, the moment the object becomes
      visible to every client (``time.perf_counter``: one clock for all threads).
    * ``log``: every request, classified on arrival (:class:`ApiCall`).

    kmock decides which reaction serves a request by checking, per reaction,
    whether the request is in the reaction's filtered view of *all requests
    served so far*, which makes every request O(requests served) and a long
    run quadratic (with 10k requests the emulator, not the operator, was the
    bottleneck). So kmock's own request list is cut to the request being
    dispatched (the check is synchronous), and :attr:`log` replaces it. kmock's
    request-history views (``emulator[...]``, ``calls``, ``count``) therefore
    see nothing here; use :meth:`calls_since`.

    Likewise every list (and the Events list the service controller sends)
    scanned every object of every resource through kmock's history views
    (~10 us per object); the live objects are indexed here by resource and
    namespace, as the API server's watch cache does.
    """

    timed: frozenset[str] = frozenset()  # resource plurals to time, e.g. {"aimservices"}
    first_stored: dict[tuple[str, str | None, str], float] = attrs.field(factory=dict, init=False)
    log: list[ApiCall] = attrs.field(factory=list, init=False)
    _index: dict[tuple[Any, str | None], dict[tuple[Any, ...], dict[str, Any]]] = attrs.field(factory=dict, init=False)

    async def _handle(self, request: Any) -> Any:
        self.log.append(self._call_of(request))
        self._requests[:] = [request]
        return await super()._handle(request)

    def _publish(self, res: Any, kind: str, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if kind == "ADDED" and res.plural in self.timed:
            meta = obj["metadata"]
            self.first_stored.setdefault((res.plural, meta.get("namespace"), meta["name"]), time.perf_counter())
        super()._publish(res, kind, obj, old)

    def _store(self, key: tuple[Any, ...], obj: dict[str, Any]) -> None:
        super()._store(key, obj)
        for scope in ((key[0], key[1]), (key[0], None)):
            self._index.setdefault(scope, {})[key] = obj

    def _erase(self, res: Any, key: tuple[Any, ...], last: dict[str, Any]) -> dict[str, Any]:
        for scope in ((key[0], key[1]), (key[0], None)):
            self._index.get(scope, {}).pop(key, None)
        return super()._erase(res, key, last)

    def _live_objects(self, res: Any, namespace: str | None) -> list[dict[str, Any]]:
        found = self._index.get((res, namespace), {})
        return [found[key] for key in sorted(found, key=lambda k: (k[1] or "", k[2]))]

    @property
    def served(self) -> int:
        """How many requests were served so far (a position for :meth:`calls_since`)."""
        return len(self.log)

    def calls_since(self, position: int) -> list[ApiCall]:
        return self.log[position:]


class QuickServer(aiohttp.test_utils.RawTestServer):
    """aiohttp's test server waiting only briefly for open requests when stopping.

    kopf's watch requests stay open after the operator stopped; aiohttp's
    default 60 s shutdown grace would make every run wait that long at the end.
    (The same as the ``kube`` test fixture does.)
    """

    async def _make_runner(self, **kwargs: Any) -> Any:
        runner = await super()._make_runner(**kwargs)
        runner._shutdown_timeout = 0.5  # noqa: SLF001 - no public knob
        return runner


class OperatorThread:
    """The real operator (kopf + engine) in a thread with its own event loop, as tests/wire runs it."""

    def __init__(self, server: str, workers: int = 4) -> None:
        self.server = server
        self.settings = Settings(operator_namespace="aim-system", workers=workers)
        self.stop_flag = threading.Event()
        self.ready_flag = threading.Event()
        self.runtime: Any = None
        self.seen: dict[tuple[str | None, str], float] = {}  # service first in the operator's store
        self.started: dict[tuple[str | None, str], float] = {}  # its first reconcile began
        self.loop: asyncio.AbstractEventLoop | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, name="aim-operator", daemon=True)

    def _main(self) -> None:
        login = lambda **_: kopf.ConnectionInfo(server=self.server, insecure=True)  # noqa: E731
        try:
            asyncio.run(
                operate(
                    self.settings,
                    login_override=login,
                    stop_flag=self.stop_flag,
                    ready_flag=self.ready_flag,
                    on_runtime=self._keep,
                )
            )
        except BaseException as exc:  # noqa: BLE001 - reported to the caller
            self.error = exc

    def _keep(self, runtime: Any) -> None:
        """Hold the runtime; time when a service reaches the store and when its reconcile starts."""
        self.runtime = runtime
        self.loop = asyncio.get_running_loop()
        runtime.store.subscribe(self._on_store)
        handle = runtime.engine.handle

        async def timed_handle(key: Any) -> None:
            if key[0] == "service":
                self.started.setdefault((key[1], key[2]), time.perf_counter())
            await handle(key)

        runtime.engine.handle = timed_handle  # read by Engine.run, which starts after this

    def _on_store(self, ref: Any, event: str, obj: dict[str, Any], old: Any) -> None:
        if ref == SERVICES and event == "ADDED":
            meta = obj["metadata"]
            self.seen.setdefault((meta.get("namespace"), meta["name"]), time.perf_counter())

    def _check(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"the operator crashed: {self.error!r}") from self.error

    async def start(self, timeout: float = 30.0) -> None:
        """Start and wait until kopf is ready and the engine's store is filled."""
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not (self.ready_flag.is_set() and self.runtime is not None and self.runtime.ready.is_set()):
            self._check()
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not start")
            await asyncio.sleep(0.02)

    async def stop(self) -> Any:
        """Stop and return the runtime (its store and controllers stay usable)."""
        self.stop_flag.set()
        while self.thread.is_alive():
            await asyncio.sleep(0.05)
        self._check()
        return self.runtime

    def enqueue_all(self) -> None:
        """Make the engine reconcile every object it knows again, from its own thread."""
        assert self.loop is not None
        self.loop.call_soon_threadsafe(self.runtime.engine.enqueue_all)

    async def idle(self, timeout: float) -> None:
        """Wait until the engine's queue has nothing queued or running, and its Events are sent."""
        assert self.loop is not None
        self._check()
        future = asyncio.run_coroutine_threadsafe(self.runtime.engine.idle(timeout=timeout), self.loop)
        await asyncio.wrap_future(future)

    async def settle(self, emulator: TimingEmulator, *, quiet: float = QUIET, timeout: float = 600.0) -> None:
        """Wait until the queue is idle and the operator wrote nothing for ``quiet`` seconds.

        Reads may go on: services whose InferenceService is not Ready look at its
        Events again now and then (with a growing interval), which is not work
        caused by the phase being measured.
        """
        deadline = time.monotonic() + timeout
        while True:
            await self.idle(max(1.0, deadline - time.monotonic()))
            before = emulator.served
            await asyncio.sleep(quiet)
            writes = [c for c in emulator.calls_since(before) if c.verb not in READ_VERBS and c.verb != "discovery"]
            if not writes and not self._busy():
                return
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not settle")

    def _busy(self) -> bool:
        engine = self.runtime.engine
        queue = engine.queue
        return bool(queue._queued or queue._active or engine.events.pending())  # noqa: SLF001 - read-only peek


# --------------------------------------------------------------------------- accounting


class LogCounter(logging.Handler):
    """Counts warnings and errors by logger, keeping the first few messages (reconcile failures show here)."""

    def __init__(self, keep: int = 5) -> None:
        super().__init__(level=logging.WARNING)
        self.counts: Counter[str] = Counter()
        self.samples: list[str] = []
        self.keep = keep

    def emit(self, record: logging.LogRecord) -> None:
        self.counts[f"{record.levelname} {record.name}"] += 1
        if len(self.samples) < self.keep:
            self.samples.append(f"{record.levelname} {record.name}: {record.getMessage()[:300]}")


WATCH_OR_DISCOVERY = frozenset({"watch", "discovery"})


def operator_calls(calls: Iterable[ApiCall]) -> list[ApiCall]:
    """Requests the operator made, without kopf's watch streams and API discovery."""
    return [
        c for c in calls if c.user_agent.startswith((OPERATOR_AGENT, KOPF_AGENT)) and c.verb not in WATCH_OR_DISCOVERY
    ]


def is_event(call: ApiCall) -> bool:
    return (call.resource or "").rsplit("/", 1)[-1] == "events"


def breakdown(calls: list[ApiCall]) -> dict[str, Any]:
    """Counts of operator requests: reads and writes, Event posts apart, by verb and by resource."""
    reads = [c for c in calls if c.verb in READ_VERBS]
    writes = [c for c in calls if c.verb not in READ_VERBS]
    posts = sum(1 for c in writes if is_event(c))

    def label(c: ApiCall) -> str:
        sub = f"/{c.subresource}" if c.subresource else ""
        return f"{c.verb} {(c.resource or '?').rsplit('/', 1)[-1]}{sub}"

    return {
        "total": len(calls),
        "reads": len(reads),
        "writes": len(writes),
        "event_posts": posts,
        "writes_without_event_posts": len(writes) - posts,
        "event_reads": sum(1 for c in reads if is_event(c)),
        "kopf_non_watch": sum(1 for c in calls if c.user_agent.startswith(KOPF_AGENT)),
        "by_request": dict(sorted(Counter(label(c) for c in calls).items(), key=lambda kv: -kv[1])),
    }


def thread_cpu() -> tuple[float, float] | None:
    """CPU seconds used so far by the main thread (emulator and driver) and by all others (the operator).

    Read from /proc (Linux); None elsewhere. Threads that already ended are not counted.
    """
    try:
        tick = os.sysconf("SC_CLK_TCK")
        main_tid = threading.main_thread().native_id
        main = other = 0.0
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            cpu = (int(fields[11]) + int(fields[12])) / tick  # utime + stime (fields 14 and 15)
            if int(task) == main_tid:
                main += cpu
            else:
                other += cpu
        return main, other
    except (OSError, ValueError, AttributeError):
        return None


class OperatorInfoLines(logging.Handler):
    """Counts what the operator logs at INFO and above (records from its thread), by logger.

    Issue 10's target: fewer than 5 lines per service at INFO, none per HTTP request.
    """

    def __init__(self, keep: int = 10) -> None:
        super().__init__(level=logging.INFO)
        self.total = 0
        self.by_logger: Counter[str] = Counter()
        self.samples: list[str] = []
        self.keep = keep

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName != "aim-operator":
            return
        self.total += 1
        self.by_logger[record.name] += 1
        if len(self.samples) < self.keep:
            self.samples.append(f"{record.levelname} {record.name}: {record.getMessage()[:200]}")
