"""Benchmark: many service templates on the real operator, and the cost of one template reconcile.

    python benchmarks/bench_templates.py [--templates 500] [--nodes 8] [--rounds 3] [--quick]

1. **Seed** a namespace, ``--nodes`` 8-GPU MI300X nodes (AMD GPU operator
   labels, ``amd.com/gpu`` allocatable), a Ready AIMModel (paused: no registry
   here) and ``--templates`` AIMServiceTemplates with inline model sources,
   half of them asking for an MI300X, a quarter for ``minVram``, a quarter for
   a GPU model the cluster lacks (NotAvailable).
2. **Start** the operator (kopf + engine, as ``aim-engine run``) against the
   in-process API emulator and wait until every template has a status and the
   operator is quiet. Count its requests.
3. **Steady state**: every template reconciled again with the node set
   unchanged: requests by resource (target: no Node request, no write).
4. **A node changes a label no GPU vendor watches**: templates re-queued
   (target: none).
5. **A node's GPU labels change**: the GPU templates are re-queued through the
   index and re-evaluated; still no Node request (the inventory is rebuilt from
   the watch cache once).
6. **CPU without I/O**: after the operator stopped, over the store it filled,
   time ``observe``, ``plan`` and the whole no-op ``engine.reconcile`` per
   template with the API adapter replaced by a stub.

Results are printed and written to ``benchmarks/results/templates.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import attrs  # noqa: E402
import kmock  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_core.reconcile.resources import TEMPLATES  # noqa: E402
from aim_testing.emulator import declare_resources  # noqa: E402
from benchmarks.harness import OperatorThread, QuickServer, TimingEmulator, breakdown, operator_calls, thread_cpu  # noqa: E402
from benchmarks.plantime import NoIOKube  # noqa: E402
from benchmarks.report import summary  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "templates.json"
NS = "bench-templates"
IMAGE = "ghcr.io/silogen/aim-dummy:0.1.8"
PAUSED = {"aim.eai.amd.com/reconciliation-paused": "true"}


def node(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"gpu-{i:03d}",
            "labels": {
                "kubernetes.io/hostname": f"gpu-{i:03d}",
                "amd.com/gpu.device-id": "74a1",
                "amd.com/gpu.family": "AI",
                "amd.com/gpu.vram": "192G",
            },
        },
        "status": {"capacity": {"amd.com/gpu": "8", "cpu": "128"}, "allocatable": {"amd.com/gpu": "8", "cpu": "127"}},
    }


def template(i: int) -> dict[str, Any]:
    kind = i % 4
    gpu: dict[str, Any] = {"requests": 1 + i % 8}
    if kind in (0, 1):
        gpu["model"] = "MI300X"
    elif kind == 2:
        gpu["minVram"] = "128Gi"
    else:
        gpu["model"] = "MI355X"  # not in the cluster: NotAvailable
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {"name": f"tpl-{i:04d}", "namespace": NS},
        "spec": {
            "modelName": "m",
            "metric": "latency" if i % 2 else "throughput",
            "precision": "fp8",
            "hardware": {"gpu": gpu},
            "modelSources": [
                {"modelId": f"org/model-{i % 50}", "sourceUri": f"hf://org/model-{i % 50}", "size": "16Gi"}
            ],
        },
    }


@attrs.frozen
class Config:
    templates: int = 500
    nodes: int = 8
    rounds: int = 3
    timeout: float = 600.0


def _requests(em: TimingEmulator, position: int) -> dict[str, Any]:
    calls = operator_calls(em.calls_since(position))
    out = breakdown(calls)
    out["node_requests"] = sum(1 for c in calls if (c.resource or "").rsplit("/", 1)[-1] == "nodes")
    return out


async def _all_have_status(em: TimingEmulator, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = [t for t in em.list_objects("aimservicetemplates", NS) if (t.get("status") or {}).get("status")]
        if len(done) == count:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(done)} of {count} templates got a status")
        await asyncio.sleep(0.2)


async def _phase(em: TimingEmulator, op: OperatorThread, action: Any, timeout: float) -> dict[str, Any]:
    position, processed, cpu = em.served, op.runtime.engine.queue.processed, thread_cpu()
    action()
    await asyncio.sleep(0.1)
    await op.settle(em, timeout=timeout)
    after = thread_cpu()
    result = _requests(em, position)
    result["reconciles"] = op.runtime.engine.queue.processed - processed
    if cpu and after:
        result["operator_cpu_s"] = round(after[1] - cpu[1], 3)
    return result


async def time_reconciles(runtime: Any, rounds: int) -> dict[str, Any]:
    """observe, plan and the engine's whole reconcile per template, no I/O (one warm-up round)."""
    engine = runtime.engine
    controller = engine.controllers["service-template"]
    kube = NoIOKube()
    runtime.ctx.kube = kube
    ctx = attrs.evolve(runtime.ctx, kube=kube)
    templates = list(runtime.store.list(TEMPLATES))
    observe_us: list[float] = []
    plan_us: list[float] = []
    reconcile_us: list[float] = []
    clock = time.perf_counter
    calls: dict[str, int] = {}
    for round_ in range(rounds + 1):
        gc.collect()
        kube.calls.clear()
        for obj in templates:
            t0 = clock()
            observed = await controller.observe(ctx, obj)
            t1 = clock()
            controller.plan(obj, observed)
            t2 = clock()
            meta = obj["metadata"]
            await engine.reconcile(controller, meta["namespace"], meta["name"])
            t3 = clock()
            if round_:
                observe_us.append((t1 - t0) * 1e6)
                plan_us.append((t2 - t1) * 1e6)
                reconcile_us.append((t3 - t2) * 1e6)
        calls = dict(kube.calls)
    return {
        "templates": len(templates),
        "rounds": rounds,
        "observe_us": summary(observe_us),
        "plan_us": summary(plan_us),
        "reconcile_us": summary(reconcile_us),
        "requests_per_pass": calls,
    }


async def run_benchmark(cfg: Config, say: Any = print) -> dict[str, Any]:
    em = declare_resources(TimingEmulator(), crds=generate_crds())
    em.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    for i in range(cfg.nodes):
        em.put_object(node(i))
    em.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMModel",
            "metadata": {"name": "m", "namespace": NS, "annotations": PAUSED},
            "spec": {"image": IMAGE},
            "status": {"status": "Ready"},
        }
    )
    for i in range(cfg.templates):
        em.put_object(template(i))
    results: dict[str, Any] = {"config": attrs.asdict(cfg)}
    async with em, kmock.Server(em, server_cls=QuickServer):
        op = OperatorThread(str(em.url).rstrip("/"))
        position, cpu = em.served, thread_cpu()
        started = time.perf_counter()
        await op.start()
        await _all_have_status(em, cfg.templates, cfg.timeout)
        await op.settle(em, timeout=cfg.timeout)
        after = thread_cpu()
        first = _requests(em, position)
        first["seconds"] = round(time.perf_counter() - started, 2)
        first["reconciles"] = op.runtime.engine.queue.processed
        if cpu and after:
            first["operator_cpu_s"] = round(after[1] - cpu[1], 3)
        states: dict[str, int] = {}
        for t in em.list_objects("aimservicetemplates", NS):
            states[t["status"]["status"]] = states.get(t["status"]["status"], 0) + 1
        first["states"] = states
        results["first_pass"] = first
        say(f"first pass: {first['seconds']} s, states {states}, {first['total']} requests")

        results["steady_state"] = await _phase(em, op, op.enqueue_all, cfg.timeout)
        say(
            f"steady state: {results['steady_state']['total']} requests, "
            f"{results['steady_state']['node_requests']} to nodes"
        )

        def relabel(labels: dict[str, str]) -> Any:
            def change() -> None:
                obj = copy.deepcopy(em.get_object("v1/nodes", None, "gpu-000"))
                obj["metadata"]["labels"].update(labels)
                em.put_object(obj)

            return change

        results["node_change_other_label"] = await _phase(em, op, relabel({"team": "a"}), cfg.timeout)
        results["node_change_gpu_label"] = await _phase(em, op, relabel({"amd.com/gpu.vram": "256G"}), cfg.timeout)
        say(
            f"node label changes: reconciles {results['node_change_other_label']['reconciles']} (other label), "
            f"{results['node_change_gpu_label']['reconciles']} (GPU label)"
        )
        runtime = await op.stop()
    results["cpu_no_io"] = await time_reconciles(runtime, cfg.rounds)
    cpu_ = results["cpu_no_io"]
    say(
        f"per template (us): observe {cpu_['observe_us'].get('median', 0):.0f}, plan {cpu_['plan_us'].get('median', 0):.0f},"
        f" whole reconcile {cpu_['reconcile_us'].get('median', 0):.0f} (median)"
    )
    results["targets"] = [
        {"target": "steady state: Node requests", "limit": 0, "measured": results["steady_state"]["node_requests"]},
        {"target": "steady state: writes", "limit": 0, "measured": results["steady_state"]["writes"]},
        {
            "target": "GPU label change: Node requests",
            "limit": 0,
            "measured": results["node_change_gpu_label"]["node_requests"],
        },
        {
            "target": "non-GPU label change: template reconciles",
            "limit": 0,
            "measured": results["node_change_other_label"]["reconciles"],
        },
    ]
    for target in results["targets"]:
        target["met"] = target["measured"] <= target["limit"]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="50 templates, 1 round")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    cfg = Config(
        templates=50 if args.quick else args.templates, nodes=args.nodes, rounds=1 if args.quick else args.rounds
    )
    results = asyncio.run(run_benchmark(cfg))
    for target in results["targets"]:
        print(
            f"{'met ' if target['met'] else 'MISS'} {target['target']}: {target['measured']} (limit {target['limit']})"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
