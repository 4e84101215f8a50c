"""Benchmark: AIMModels reading their image metadata from a real registry on loopback.

    python benchmarks/bench_models.py [--models 200] [--images 20] [--namespaces 4]

Starts Debian's ``docker-registry`` (anonymous, on 127.0.0.1) behind a logging
front, pushes ``--images`` AIM images (labels with two recommended
deployments), starts the operator against the API emulator and creates
``--models`` AIMModels spread over the images and namespaces. Measures:

* registry requests per image while every model is read cold (target: at most 3),
* registry requests during a full reconcile pass once settled (target: 0),
* registry requests of a restarted operator (target: 0: status is the cache),
* time until every model has its metadata and templates, and API writes per model.

Figures go to benchmarks/README.md ("Models").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import kmock  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_testing.emulator import READ_VERBS, declare_resources  # noqa: E402
from aim_testing.registry import Registry, RegistryFront, RegistryServer  # noqa: E402
from benchmarks import seed  # noqa: E402
from benchmarks.harness import OperatorThread, QuickServer, TimingEmulator  # noqa: E402

MODELS_PATH = "/apis/aim.eai.amd.com/v1alpha1/namespaces/{ns}/aimmodels"
LABELS = {
    "com.amd.aim.model.canonicalName": "org/bench",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp8"},
            {"gpuModel": "MI300X", "gpuCount": 8, "metric": "throughput", "precision": "fp16"},
        ]
    ),
}


def _writes(calls: list[Any]) -> int:
    return sum(
        1 for c in calls if c.verb not in READ_VERBS and c.verb != "discovery" and c.user_agent.startswith("aim-engine")
    )


async def run(models: int, images: int, namespaces: int, say: Any = print) -> dict[str, Any]:
    server = RegistryServer().start()
    front = RegistryFront(server.url).start()
    registry = Registry(front.url, storage=server.storage)
    results: dict[str, Any] = {"models": models, "images": images, "namespaces": namespaces}
    try:
        refs = [registry.push_image(f"bench/aim-{i:03d}", "1.0", labels=LABELS).reference for i in range(images)]
        em = declare_resources(TimingEmulator(), crds=generate_crds())
        names = seed.namespace_names(namespaces)
        for ns in names:
            em.put_object(seed.namespace(ns))
        async with em, kmock.Server(em, server_cls=QuickServer):
            url = str(em.url).rstrip("/")
            op = OperatorThread(url)
            await op.start()
            try:
                await _measure(em, op, front, url, refs, names, models, results, say)
            finally:
                await op.stop()
    finally:
        front.stop()
        server.stop()
    return results


async def _measure(
    em: TimingEmulator,
    op: OperatorThread,
    front: RegistryFront,
    url: str,
    refs: list[str],
    names: list[str],
    models: int,
    results: dict[str, Any],
    say: Any,
) -> None:
    images, namespaces = len(refs), len(names)
    await op.settle(em)
    say(f"creating {models} models over {images} images")
    before_requests, before_calls = len(front.requests()), em.served
    start = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for i in range(models):
            ns = names[i % namespaces]
            body = {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMModel",
                "metadata": {"name": f"m-{i:04d}", "namespace": ns},
                "spec": {"image": refs[i % images]},
            }
            (await client.post(MODELS_PATH.format(ns=ns), json=body)).raise_for_status()
    wanted = {(names[i % namespaces], f"m-{i:04d}") for i in range(models)}
    while wanted:
        wanted = {
            k for k in wanted if not ((em.get_object("aimmodels", *k) or {}).get("status") or {}).get("imageMetadata")
        }
        await asyncio.sleep(0.05)
    metadata_s = time.perf_counter() - start
    await op.settle(em)
    cold = front.requests()[before_requests:]
    templates = len(em.list_objects("aimservicetemplates"))
    results["cold"] = {
        "seconds_to_metadata": round(metadata_s, 2),
        "seconds_settled": round(time.perf_counter() - start, 2),
        "registry_requests": len(cold),
        "per_image": round(len(cold) / images, 2),
        "templates": templates,
        "api_writes_per_model": round(_writes(em.calls_since(before_calls)) / models, 2),
    }
    say(f"cold: {results['cold']}")
    before_requests, before_calls = len(front.requests()), em.served
    op.enqueue_all()
    await op.settle(em)
    results["warm_pass"] = {
        "registry_requests": len(front.requests()) - before_requests,
        "api_writes": _writes(em.calls_since(before_calls)),
    }
    say(f"warm pass: {results['warm_pass']}")
    await op.stop()
    before_requests, before_calls = len(front.requests()), em.served
    again = OperatorThread(url)
    await again.start()
    try:
        await again.settle(em)
    finally:
        await again.stop()
    results["restart"] = {
        "registry_requests": len(front.requests()) - before_requests,
        "api_writes": _writes(em.calls_since(before_calls)),
    }
    say(f"restart: {results['restart']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument("--namespaces", type=int, default=4)
    args = parser.parse_args(argv)
    results = asyncio.run(run(args.models, args.images, args.namespaces))
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
