"""Benchmark: the real operator (kopf + engine) reconciling many AIMServices against the API emulator.

    python benchmarks/bench_services.py [--services 1000] [--namespaces 10] [--quick]

Seeds a cluster whose dependencies are all Ready (nodes, model, template, a
Shared template cache per namespace), starts the operator in a thread, creates
the services, and measures: time from each AIMService to its InferenceService,
API requests per service on the first reconcile, requests during steady-state
passes (every service reconciled again, nothing changed), and the CPU time of
observe/plan per service. See benchmarks/README.md for what the numbers mean.
Exits non-zero only when something crashes; missed targets are reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import kmock  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_testing.emulator import declare_resources  # noqa: E402
from benchmarks import seed  # noqa: E402
from benchmarks.harness import (  # noqa: E402
    QUIET,
    LogCounter,
    OperatorInfoLines,
    OperatorThread,
    QuickServer,
    TimingEmulator,
    breakdown,
    operator_calls,
    thread_cpu,
)
from benchmarks.plantime import time_reconciles  # noqa: E402
from benchmarks.report import check_targets, render, summary  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"
SERVICES_PATH = "/apis/aim.eai.amd.com/v1alpha1/namespaces/{ns}/aimservices"


@attrs.frozen
class Config:
    services: int = 1000
    namespaces: int = 10
    nodes: int = 4
    workers: int = 64  # the operator's default
    routing: bool = False  # HTTPRoute per service (cluster runtime config routing.enabled)
    runtime_config: bool = True  # seed an AIMClusterRuntimeConfig "default"
    rate: float = 0.0  # services created per second; 0: as fast as possible (a burst)
    concurrency: int = 32  # creates in flight
    ready_phase: bool = True  # mark InferenceServices Ready, then a second steady-state pass
    plan_rounds: int = 3
    timeout: float = 600.0


def _phase(
    calls: list[Any], services: int | None = None, reconciles: int | None = None, cpu: tuple[float, float] | None = None
) -> dict[str, Any]:
    """The operator's requests of one phase, per service too, and the CPU both sides used."""
    ops = breakdown(operator_calls(calls))
    result: dict[str, Any] = {"operator": ops, "reconciles": reconciles}
    if cpu is not None:
        result["cpu_s"] = {"emulator_and_driver": cpu[0], "operator": cpu[1]}
    if services:
        per = {k: ops[k] / services for k in ("total", "reads", "writes", "event_posts", "writes_without_event_posts")}
        per["total_without_event_posts"] = (ops["total"] - ops["event_posts"]) / services
        per["reconciles"] = (reconciles or 0) / services
        if cpu is not None:
            per["operator_cpu_ms"] = cpu[1] * 1e3 / services
        result["per_service"] = per
    return result


class Mark:
    """Where a phase starts: request log position, reconciles processed, CPU used."""

    def __init__(self, em: TimingEmulator, op: OperatorThread) -> None:
        self.em, self.op = em, op
        self.position, self.processed, self.cpu = em.served, op.runtime.engine.queue.processed, thread_cpu()

    def phase(self, services: int | None = None) -> dict[str, Any]:
        now = thread_cpu()
        cpu = (now[0] - self.cpu[0], now[1] - self.cpu[1]) if now and self.cpu else None
        return _phase(
            self.em.calls_since(self.position), services, self.op.runtime.engine.queue.processed - self.processed, cpu
        )


class Benchmark:
    def __init__(self, cfg: Config, say: Any = print) -> None:
        self.cfg = cfg
        self.say = say
        self.namespaces = seed.namespace_names(cfg.namespaces)
        self.wanted = seed.services(cfg.services, self.namespaces)
        self.emulator = declare_resources(
            TimingEmulator(timed=frozenset({"aimservices", "inferenceservices"})), crds=generate_crds()
        )
        self.op: OperatorThread | None = None

    async def run(self) -> dict[str, Any]:
        logs, lines = LogCounter(), OperatorInfoLines()
        root = logging.getLogger()
        level = root.level
        root.setLevel(min(level or logging.WARNING, logging.INFO))  # count INFO lines even when not shown
        root.addHandler(logs)
        root.addHandler(lines)
        try:
            results = await self._run()
        finally:
            root.removeHandler(logs)
            root.removeHandler(lines)
            root.setLevel(level)
        results["log"] = {
            "counts": dict(logs.counts),
            "first": logs.samples,
            "operator_info_lines": lines.total,
            "operator_info_lines_per_service": lines.total / self.cfg.services,
            "operator_info_lines_by_logger": dict(lines.by_logger),
            "operator_info_first": lines.samples,
        }
        return results

    async def _run(self) -> dict[str, Any]:
        cfg, em = self.cfg, self.emulator
        for obj in seed.cluster(
            self.namespaces, nodes=cfg.nodes, runtime_config=cfg.runtime_config, routing=cfg.routing
        ):
            em.put_object(obj)
        results: dict[str, Any] = {"config": attrs.asdict(cfg), "environment": _environment()}
        async with em, kmock.Server(em, server_cls=QuickServer):
            url = str(em.url).rstrip("/")
            self.op = OperatorThread(url, cfg.workers)
            try:
                position = em.served
                await self.op.start()
                await self.op.settle(em, timeout=cfg.timeout)
                results["startup"] = _phase(em.calls_since(position), reconciles=self.op.runtime.engine.queue.processed)
                self.say(f"operator ready; seeded {len(self.namespaces)} namespaces; creating {cfg.services} services")
                async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                    results["latency"], results["first_reconcile"] = await self._create_all(client)
                results["steady_state"] = [await self._steady("steady state (InferenceServices pending)")]
                if cfg.ready_phase:
                    results["runtime_ready"] = await self._runtime_ready()
                    results["steady_state"].append(await self._steady("steady state (InferenceServices Ready)"))
            finally:
                runtime = await self.op.stop()
        self.say("timing observe/plan without I/O")
        timing = await time_reconciles(runtime, cfg.plan_rounds)
        results["plan_time"] = {k: summary(v) if k.endswith("_us") else v for k, v in timing.items()}
        results["targets"] = check_targets(results)
        return results

    async def _create_all(self, client: httpx.AsyncClient) -> tuple[dict[str, Any], dict[str, Any]]:
        cfg, em, op = self.cfg, self.emulator, self.op
        assert op is not None
        gate = asyncio.Semaphore(cfg.concurrency)
        loop = asyncio.get_running_loop()
        begin = loop.time()

        async def create(i: int, ns: str, name: str) -> None:
            if cfg.rate:
                await asyncio.sleep(max(0.0, begin + i / cfg.rate - loop.time()))
            async with gate:
                response = await client.post(SERVICES_PATH.format(ns=ns), json=seed.service(name, ns))
                response.raise_for_status()

        mark = Mark(em, op)
        start = time.perf_counter()
        await asyncio.gather(*(create(i, ns, name) for i, (ns, name, _) in enumerate(self.wanted)))
        self.say(
            f"created {len(self.wanted)} services in {time.perf_counter() - start:.2f} s; waiting for "
            "their InferenceServices"
        )
        pending = {("inferenceservices", ns, isvc) for ns, _, isvc in self.wanted}
        deadline = time.monotonic() + cfg.timeout
        while pending and time.monotonic() < deadline:
            pending -= em.first_stored.keys()
            await asyncio.sleep(0.02)
        await op.settle(em, timeout=cfg.timeout)
        settled = time.perf_counter()
        if pending:
            self.say(f"WARNING: {len(pending)} InferenceServices never appeared, e.g. {sorted(pending)[:3]}")

        latency = _latencies(em, op, self.wanted)
        latency["settled_s"] = settled - start
        phase = mark.phase(len(self.wanted))
        phase["seconds"] = settled - start - QUIET
        return latency, phase

    async def _steady(self, name: str) -> dict[str, Any]:
        em, op = self.emulator, self.op
        assert op is not None
        self.say(f"{name}: reconciling everything again")
        mark = Mark(em, op)
        start = time.perf_counter()
        op.enqueue_all()
        await op.settle(em, timeout=self.cfg.timeout)
        phase = mark.phase(len(self.wanted))
        phase.update(name=name, seconds=time.perf_counter() - start - QUIET)  # without the final quiet period
        return phase

    async def _runtime_ready(self) -> dict[str, Any]:
        """Play KServe: every InferenceService reports Ready; the services take it in (status + Events)."""
        em, op = self.emulator, self.op
        assert op is not None
        self.say("marking every InferenceService Ready")
        mark, start = Mark(em, op), time.perf_counter()
        for ns, _, isvc in self.wanted:
            obj = em.get_object("inferenceservices", ns, isvc)
            if obj is not None:
                obj["status"] = {
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": seed.T0}],
                    "url": f"http://{isvc}.{ns}",
                }
                em.put_object(obj)
        await op.settle(em, timeout=self.cfg.timeout)
        phase = mark.phase(len(self.wanted))
        phase["seconds"] = time.perf_counter() - start - QUIET
        return phase


def _latencies(em: TimingEmulator, op: OperatorThread, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Per service: AIMService stored -> InferenceService stored, and its three parts (ms)."""
    created = applied = 0
    samples: dict[str, list[float]] = {"total": [], "watch": [], "queue": [], "reconcile": []}
    first, last = float("inf"), 0.0
    for ns, name, isvc in wanted:
        t_svc = em.first_stored.get(("aimservices", ns, name))
        t_isvc = em.first_stored.get(("inferenceservices", ns, isvc))
        created += t_svc is not None
        if t_svc is None or t_isvc is None:
            continue
        applied += 1
        first, last = min(first, t_svc), max(last, t_isvc)
        samples["total"].append((t_isvc - t_svc) * 1e3)
        seen, started = op.seen.get((ns, name)), op.started.get((ns, name))
        if seen is not None and started is not None:
            samples["watch"].append((seen - t_svc) * 1e3)
            samples["queue"].append((started - seen) * 1e3)
            samples["reconcile"].append((t_isvc - started) * 1e3)
    wall = (last - first) if applied else 0.0
    return {
        "created": created,
        "applied": applied,
        "ms": summary(samples["total"]),
        "breakdown_ms": {k: summary(v) for k, v in samples.items() if k != "total"},
        "wall_s": wall,
        "throughput_per_s": applied / wall if wall else 0.0,
    }


def _git(*args: str) -> str:
    try:  # read-only: --no-optional-locks keeps status from rewriting the index others commit with
        return subprocess.run(
            ["git", "--no-optional-locks", *args],
            capture_output=True,
            text=True,
            cwd=Path(__file__).parent,
            check=False,
            timeout=30,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def _environment() -> dict[str, Any]:
    commit = _git("rev-parse", "--short", "HEAD")
    if commit and _git("status", "--porcelain", "--untracked-files=no"):
        commit += " (working tree differs)"
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "commit": commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


async def run_benchmark(cfg: Config, say: Any = print) -> dict[str, Any]:
    """Run everything; return the results (the CLI prints and saves them)."""
    return await Benchmark(cfg, say).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=None, help="AIMServices to create (default 1000)")
    parser.add_argument("--namespaces", type=int, default=None, help="namespaces to spread them over (default 10)")
    parser.add_argument("--quick", action="store_true", help="50 services in 5 namespaces, one plan round")
    parser.add_argument("--workers", type=int, default=64, help="engine workers (default 64, as the operator)")
    parser.add_argument("--nodes", type=int, default=4, help="MI300X nodes to seed")
    parser.add_argument("--rate", type=float, default=0.0, help="create N services per second (default: burst)")
    parser.add_argument("--concurrency", type=int, default=32, help="creates in flight")
    parser.add_argument("--routing", action="store_true", help="enable routing: an HTTPRoute per service")
    parser.add_argument("--no-runtime-config", action="store_true", help="seed no AIMClusterRuntimeConfig")
    parser.add_argument("--no-ready-phase", action="store_true", help="skip marking InferenceServices Ready")
    parser.add_argument("--plan-rounds", type=int, default=None, help="timed observe/plan rounds (default 3)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    parser.add_argument("--no-output", action="store_true", help="do not write the JSON results")
    parser.add_argument("-v", "--verbose", action="store_true", help="operator logs at INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:  # INFO lines are counted (OperatorInfoLines), shown only with -v
        handler.setLevel(logging.INFO if args.verbose else logging.WARNING)
    cfg = Config(
        services=args.services or (50 if args.quick else 1000),
        namespaces=args.namespaces or (5 if args.quick else 10),
        nodes=args.nodes,
        workers=args.workers,
        routing=args.routing,
        runtime_config=not args.no_runtime_config,
        rate=args.rate,
        concurrency=args.concurrency,
        ready_phase=not args.no_ready_phase,
        plan_rounds=args.plan_rounds or (1 if args.quick else 3),
    )
    results = asyncio.run(run_benchmark(cfg, say=lambda msg: print(f"# {msg}", file=sys.stderr)))
    print(render(results))
    if not args.no_output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
        print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
