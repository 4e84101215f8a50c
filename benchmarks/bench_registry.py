"""Benchmark: registry round trips and time for image metadata and tag listing.

    python benchmarks/bench_registry.py [--quick] [--images 50] [--tags 5000]

Starts Debian's docker-registry on loopback (plain, and with the bearer-token
flow), puts a counting front before it, pushes test images, and reads them
through the operator's own facade (``aim_core.registry``), as the model and
model-source controllers do. Reports, per scenario, the HTTP requests the
registry saw, the requests the token service saw, and wall time. See
benchmarks/README.md ("Registry") for the figures. Exits non-zero only when
something crashes or a request-count target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aim_core.plugin.manager import get_plugin_manager  # noqa: E402
from aim_core.plugin.providers import RegistryCredentials  # noqa: E402
from aim_core.registry import ImageReference, close_clients, fetch_image_info, list_tags  # noqa: E402
from aim_core.registry.oci import OciRegistryClient  # noqa: E402
from aim_core.registry.transport import Challenge  # noqa: E402
from aim_testing.registry import Registry, RegistryFront, RegistryServer, TokenServer  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "registry.json"
LABELS = {
    "com.amd.aim.model.canonicalName": "Qwen/Qwen3-32B",
    "com.amd.aim.model.recommendedDeployments": '[{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]',
}
TARGETS = {"cold_index": 3, "cold_single": 3, "warm_tag": 1, "warm_digest": 0}


class Bench:
    def __init__(self, front: RegistryFront, tokens: TokenServer | None = None) -> None:
        self.front, self.tokens = front, tokens

    async def measure(self, name: str, call) -> dict[str, Any]:
        self.front.clear()
        if self.tokens is not None:
            self.tokens.requests.clear()
        start = time.perf_counter()
        await call()
        elapsed = time.perf_counter() - start
        row = {
            "scenario": name,
            "registry_requests": len(self.front.log),
            "token_requests": len(self.tokens.requests) if self.tokens is not None else 0,
            "ms": round(elapsed * 1000, 2),
            "requests": [f"{r.method} {r.path.split('?')[0]} {r.answered}" for r in self.front.log],
        }
        return row


async def metadata_scenarios(
    front: RegistryFront,
    registry: Registry,
    tokens: TokenServer | None,
    credentials: RegistryCredentials | None,
    label: str,
) -> list[dict[str, Any]]:
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    bench = Bench(front, tokens)
    slug = "".join(c if c.isalnum() else "-" for c in label.lower())
    single = registry.push_image(f"bench/{slug}-single", "1.0", labels=LABELS)
    index = registry.push_index(f"bench/{slug}-multi", "1.0", {"linux/amd64": LABELS, "linux/arm64": LABELS})
    rows = [
        await bench.measure(
            f"{label}: cold, single image (host never seen)",
            lambda: fetch_image_info(plugins, ImageReference.parse(single.reference), credentials),
        ),
        await bench.measure(
            f"{label}: cold, multi-arch index",
            lambda: fetch_image_info(plugins, ImageReference.parse(index.reference), credentials),
        ),
        await bench.measure(
            f"{label}: warm, same tag again",
            lambda: fetch_image_info(plugins, ImageReference.parse(index.reference), credentials),
        ),
        await bench.measure(
            f"{label}: warm, by digest",
            lambda: fetch_image_info(
                plugins, ImageReference.parse(index.reference).with_digest(index.digest), credentials
            ),
        ),
    ]
    await close_clients(plugins)
    return rows


async def known_challenge_scenario(front: RegistryFront, registry: Registry, tokens: TokenServer) -> dict[str, Any]:
    """As the Docker Hub and GHCR plugins do: the token service is known, no 401 round trip."""
    registry.push_index("bench/known-multi", "1.0", {"linux/amd64": LABELS, "linux/arm64": LABELS})
    client = OciRegistryClient(
        "bench.example",
        base_url=front.url,
        challenge=Challenge("bearer", {"realm": tokens.realm, "service": tokens.service}),
    )
    bench = Bench(front, tokens)
    image = ImageReference.parse("bench.example/bench/known-multi:1.0")
    row = await bench.measure(
        "token flow, token service known (Docker Hub / GHCR plugins): cold index",
        lambda: client.image_info(image, None),
    )
    await client.aclose()
    return row


async def throughput(registry: Registry, images: int) -> dict[str, Any]:
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    refs = [
        ImageReference.parse(registry.push_image(f"bench/many-{i}", "1.0", labels={"i": str(i)}).reference)
        for i in range(images)
    ]
    times = []
    for ref in refs:
        start = time.perf_counter()
        await fetch_image_info(plugins, ref, None)
        times.append((time.perf_counter() - start) * 1000)
    await close_clients(plugins)
    return {
        "scenario": f"cold metadata of {images} different images, one after another",
        "ms_median": round(statistics.median(times), 2),
        "ms_p95": round(sorted(times)[int(len(times) * 0.95) - 1], 2),
    }


async def listing(front: RegistryFront, registry: Registry, tags: int) -> list[dict[str, Any]]:
    plugins = get_plugin_manager(only=["registry_oci"], disabled=())
    pushed = registry.push_image("bench/tags", "latest")
    registry.add_tags("bench/tags", pushed.digest, [f"{i // 1000}.{(i // 10) % 100}.{i % 10}" for i in range(tags)])
    bench = Bench(front)
    rows = []
    for page in (100, 1000):
        front.page_size = page
        row = await bench.measure(
            f"list {tags + 1} tags, registry pages {page} at a time (Link)",
            lambda: list_tags(plugins, front.host, "bench/tags", None),
        )
        row.pop("requests")
        rows.append(row)
    await close_clients(plugins)
    return rows


async def run(args: argparse.Namespace) -> dict[str, Any]:
    servers: list[Any] = []
    try:
        plain = RegistryServer().start()
        servers.append(plain)
        tokens = TokenServer({"alice": "alice-pw"}).start()
        servers.append(tokens)
        secured = RegistryServer(auth="token", token_server=tokens).start()
        servers.append(secured)
        plain_front = RegistryFront(plain.url, page_size=100).start()
        token_front = RegistryFront(secured.url, page_size=100).start()
        servers += [plain_front, token_front]
        plain_reg = Registry(plain_front.url, storage=plain.storage)
        token_reg = Registry(token_front.url, storage=secured.storage, admin=("alice", "alice-pw"))
        alice = RegistryCredentials(username="alice", password="alice-pw")
        rows = await metadata_scenarios(plain_front, plain_reg, None, None, "anonymous registry")
        rows += await metadata_scenarios(token_front, token_reg, tokens, alice, "token flow from the 401 challenge")
        rows.append(await known_challenge_scenario(token_front, token_reg, tokens))
        lists = await listing(plain_front, plain_reg, args.tags)
        speed = await throughput(plain_reg, args.images)
        return {"metadata": rows, "listing": lists, "throughput": speed}
    finally:
        for server in reversed(servers):
            server.stop()


def render(results: dict[str, Any]) -> str:
    out = ["| scenario | registry requests | token requests | ms |", "|---|---|---|---|"]
    for row in results["metadata"] + results["listing"]:
        out.append(f"| {row['scenario']} | {row['registry_requests']} | {row['token_requests']} | {row['ms']} |")
    speed = results["throughput"]
    out.append(f"\n{speed['scenario']}: median {speed['ms_median']} ms, p95 {speed['ms_p95']} ms")
    return "\n".join(out)


def check(results: dict[str, Any]) -> list[str]:
    missed = []
    rows = {r["scenario"]: r for r in results["metadata"]}
    for name, row in rows.items():
        if name.startswith("anonymous") and "cold" in name and row["registry_requests"] > TARGETS["cold_index"]:
            missed.append(f"{name}: {row['registry_requests']} requests > {TARGETS['cold_index']}")
        if "warm, same tag" in name and row["registry_requests"] > TARGETS["warm_tag"]:
            missed.append(f"{name}: {row['registry_requests']} requests > {TARGETS['warm_tag']}")
        if "by digest" in name and row["registry_requests"] + row["token_requests"] > TARGETS["warm_digest"]:
            missed.append(f"{name}: {row['registry_requests']} requests > 0")
        if "token service known" in name and row["registry_requests"] > TARGETS["cold_index"]:
            missed.append(f"{name}: {row['registry_requests']} requests > {TARGETS['cold_index']}")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 images, 1000 tags")
    parser.add_argument("--images", type=int, default=50)
    parser.add_argument("--tags", type=int, default=5000)
    parser.add_argument("--no-output", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.images, args.tags = 10, 1000
    results = asyncio.run(run(args))
    results["missed"] = check(results)
    print(render(results))
    for line in results["missed"]:
        print(f"MISSED: {line}")
    if not args.no_output:
        RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    return 1 if results["missed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
