"""CPU cost of one service reconcile without I/O: observe, plan, and the engine's whole no-op pass.

Runs after the operator stopped, over the store it filled, with the API adapter
replaced by :class:`NoIOKube` (answers at once, counts what would have been
sent), so the numbers are pure Python time: store reads, planning, the
apply-needed and status diffs.
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from typing import Any

import attrs

from aim_core.reconcile.resources import SERVICES


class NoIOKube:
    """Stands in for :class:`aim_core.kube.Kube`: no network, every call counted by verb."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    async def get(self, *args: Any, **kwargs: Any) -> None:
        self.calls["get"] += 1

    async def list(self, *args: Any, **kwargs: Any) -> list[Any]:
        self.calls["list"] += 1
        return []

    async def read_log(self, *args: Any, **kwargs: Any) -> str:
        self.calls["get"] += 1
        return ""

    async def apply(self, *args: Any, **kwargs: Any) -> None:
        self.calls["apply"] += 1

    async def patch(self, *args: Any, **kwargs: Any) -> None:
        self.calls["patch"] += 1

    async def create(self, *args: Any, **kwargs: Any) -> None:
        self.calls["create"] += 1

    async def replace(self, *args: Any, **kwargs: Any) -> None:
        self.calls["update"] += 1

    async def delete(self, *args: Any, **kwargs: Any) -> None:
        self.calls["delete"] += 1


async def time_reconciles(runtime: Any, rounds: int = 3) -> dict[str, Any]:
    """Time observe, plan and the engine's reconcile for every service in the runtime's store.

    One warm-up round is not counted. Returns samples in microseconds and the
    requests the no-I/O passes would have sent, per pass over all services.
    """
    engine = runtime.engine
    controller = engine.controllers["service"]
    kube = NoIOKube()
    runtime.ctx.kube = kube  # the operator has stopped; its own client is closed
    ctx = attrs.evolve(runtime.ctx, kube=kube)
    services = list(runtime.store.list(SERVICES))
    observe_us: list[float] = []
    plan_us: list[float] = []
    reconcile_us: list[float] = []
    clock = time.perf_counter
    for round_ in range(rounds + 1):
        gc.collect()  # start each round without garbage left by the previous one
        kube.calls.clear()
        for svc in services:
            t0 = clock()
            observed = await controller.observe(ctx, svc)
            t1 = clock()
            controller.plan(svc, observed)
            t2 = clock()
            if round_:
                observe_us.append((t1 - t0) * 1e6)
                plan_us.append((t2 - t1) * 1e6)
        observe_plan_calls = dict(kube.calls)
        kube.calls.clear()
        for svc in services:
            meta = svc["metadata"]
            t0 = clock()
            await engine.reconcile(controller, meta["namespace"], meta["name"])
            if round_:
                reconcile_us.append((clock() - t0) * 1e6)
        reconcile_calls = dict(kube.calls)
    return {
        "services": len(services),
        "rounds": rounds,
        "observe_us": observe_us,
        "plan_us": plan_us,
        "observe_plan_us": [o + p for o, p in zip(observe_us, plan_us, strict=True)],
        "reconcile_us": reconcile_us,
        "observe_requests_per_pass": observe_plan_calls,
        "reconcile_requests_per_pass": reconcile_calls,
    }
