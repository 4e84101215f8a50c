"""Client CPU per API request: httpx against aiohttp, json against orjson, TLS and plain HTTP.

    python benchmarks/bench_http.py [--requests 400] [--concurrency 4]

Starts the API emulator in a process of its own (``emulator_process.py``) and
sends the requests the operator's adapter sends, with the same headers and
bodies: server-side apply of an InferenceService, a merge patch of a service's
status, an Event POST, a GET and a LIST of 10 objects. Each client runs them
``--concurrency`` at a time (the engine's worker count) over keep-alive
connections; the figure is this process's CPU time (``time.process_time``: the
client side only, the emulator runs elsewhere) divided by the requests sent.

Clients: ``httpx`` and ``aiohttp`` directly, each with the standard library's
``json`` and with ``orjson`` (when installed), and ``aim_core.kube.Kube``, the
adapter as it is now. Results are printed and written to
``benchmarks/results/http.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import ssl
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp  # noqa: E402
import httpx  # noqa: E402

from aim_core.kube import Credentials, Kube  # noqa: E402
from aim_core.plugin.providers import ResourceRef  # noqa: E402
from aim_core.reconcile.resources import EVENTS, SERVICES  # noqa: E402
from benchmarks import seed  # noqa: E402
from benchmarks.processes import EmulatorProcess, loadavg  # noqa: E402

try:
    import orjson
except ImportError:  # pragma: no cover - optional here
    orjson = None

INFERENCE_SERVICES = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")
RESULTS = Path(__file__).resolve().parent / "results" / "http.json"
SAMPLES = Path(__file__).resolve().parent / "samples"
NS = "bench-http"
HEADERS = {"Accept": "application/json", "User-Agent": "aim-engine", "Authorization": "Bearer bench-token"}
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def samples() -> tuple[dict[str, Any], dict[str, Any]]:
    """An InferenceService as the operator applies it and a service status as it writes it."""
    isvc = json.loads((SAMPLES / "inferenceservice.json").read_text())
    status = json.loads((SAMPLES / "aimservice-status.json").read_text())
    isvc["metadata"]["namespace"] = NS
    return isvc, status


def event(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"svc-00000.{uuid.uuid4().hex[:16]}", "namespace": NS},
        "involvedObject": {
            "apiVersion": seed.API,
            "kind": "AIMService",
            "name": "svc-00000",
            "namespace": NS,
            "uid": "00000000-0000-0000-0000-000000000000",
        },
        "reason": "Ready",
        "message": f"service is ready ({i})",
        "type": "Normal",
        "source": {"component": "aim-engine"},
        "reportingComponent": "aim-engine",
        "firstTimestamp": seed.T0,
        "lastTimestamp": seed.T0,
        "count": 1,
    }


class Requests:
    """The five requests, as (method, path, params, body, content type) per kind."""

    def __init__(self) -> None:
        self.isvc, self.status = samples()
        name = self.isvc["metadata"]["name"]
        isvc_base = f"/apis/{INFERENCE_SERVICES.api_version}/namespaces/{NS}/{INFERENCE_SERVICES.plural}"
        svc_base = f"/apis/{SERVICES.api_version}/namespaces/{NS}/{SERVICES.plural}"
        self.kinds: dict[str, Callable[[int], tuple[str, str, dict[str, str] | None, Any, str | None]]] = {
            "apply": lambda i: (
                "PATCH",
                f"{isvc_base}/{name}",
                {"fieldManager": "aim-engine", "force": "true"},
                self.isvc,
                APPLY,
            ),
            "status": lambda i: ("PATCH", f"{svc_base}/svc-{i % 10:05d}/status", None, self.status, MERGE),
            "event": lambda i: ("POST", f"/api/v1/namespaces/{NS}/events", None, event(i), None),
            "get": lambda i: ("GET", f"{isvc_base}/{name}", None, None, None),
            "list": lambda i: ("GET", svc_base, None, None, None),
        }

    def seed_objects(self) -> list[dict[str, Any]]:
        objects: list[dict[str, Any]] = [seed.namespace(NS)]
        for i in range(10):
            svc = seed.service(f"svc-{i:05d}", NS)
            svc["status"] = copy.deepcopy(self.status["status"])
            objects.append(svc)
        return objects


# --------------------------------------------------------------------------- clients


def _ssl(ca: str | None) -> ssl.SSLContext | bool:
    return ssl.create_default_context(cafile=ca) if ca else False


def httpx_client(url: str, ca: str | None, codec: Any, concurrency: int) -> tuple[Any, Callable[..., Awaitable[Any]]]:
    client = httpx.AsyncClient(base_url=url, headers=HEADERS, verify=_ssl(ca), timeout=30)

    async def send(method: str, path: str, params: Any, body: Any, ctype: str | None) -> Any:
        headers = {"Content-Type": ctype or "application/json"} if body is not None else None
        content = codec.dumps(body) if body is not None else None
        if isinstance(content, str):
            content = content.encode()
        r = await client.request(method, path, params=params, content=content, headers=headers)
        r.raise_for_status()
        return codec.loads(r.content)

    return client.aclose, send


def aiohttp_client(url: str, ca: str | None, codec: Any, concurrency: int) -> tuple[Any, Callable[..., Awaitable[Any]]]:
    connector = aiohttp.TCPConnector(ssl=_ssl(ca), limit=concurrency * 2)
    session = aiohttp.ClientSession(
        base_url=url,
        headers=HEADERS,
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=30),
    )

    async def send(method: str, path: str, params: Any, body: Any, ctype: str | None) -> Any:
        headers = {"Content-Type": ctype or "application/json"} if body is not None else None
        data = codec.dumps(body) if body is not None else None
        if isinstance(data, str):
            data = data.encode()
        async with session.request(method, path, params=params, data=data, headers=headers) as r:
            content = await r.read()
            if r.status >= 400:
                raise RuntimeError(f"{method} {path}: {r.status}")
            return codec.loads(content)

    return session.close, send


def adapter_client(url: str, ca: str | None, codec: Any, concurrency: int) -> tuple[Any, Callable[..., Awaitable[Any]]]:
    kube = Kube(Credentials(server=url, token="bench-token", ca_path=ca, insecure=ca is None))
    reqs = Requests()
    name = reqs.isvc["metadata"]["name"]

    async def send(method: str, path: str, params: Any, body: Any, ctype: str | None) -> Any:
        if ctype == APPLY:
            return await kube.apply(INFERENCE_SERVICES, body, field_manager="aim-engine")
        if ctype == MERGE:
            return await kube.patch(SERVICES, NS, path.rsplit("/", 2)[-2], body, subresource="status")
        if method == "POST":
            return await kube.create(EVENTS, body)
        if path.endswith(name):
            return await kube.get(INFERENCE_SERVICES, NS, name)
        return await kube.list(SERVICES, NS)

    return kube.aclose, send


CLIENTS = {"httpx": httpx_client, "aiohttp": aiohttp_client, "adapter": adapter_client}


async def measure(
    make: Any, url: str, ca: str | None, codec: Any, kind: str, reqs: Requests, n: int, concurrency: int
) -> float:
    """Client CPU microseconds per request of one kind (after a warm-up that opens the connections)."""
    close, send = make(url, ca, codec, concurrency)
    build = reqs.kinds[kind]
    try:
        await asyncio.gather(*(send(*build(i)) for i in range(concurrency * 2)))  # connect, handshake
        queue = iter(range(n))

        async def worker() -> None:
            for i in queue:
                await send(*build(i))

        cpu = time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return (time.process_time() - cpu) * 1e6 / n
    finally:
        await close()


async def run(args: argparse.Namespace, say: Any) -> dict[str, Any]:
    reqs = Requests()
    codecs: dict[str, Any] = {"json": json}
    if orjson is not None:
        codecs["orjson"] = orjson
    results: dict[str, Any] = {
        "requests": args.requests,
        "concurrency": args.concurrency,
        "rounds": args.rounds,
        "loadavg_start": round(loadavg(), 1),
        "us_per_request": {},
    }
    with tempfile.TemporaryDirectory(prefix="aim-bench-http-") as tmp:
        for tls in (True, False):
            em = EmulatorProcess(Path(tmp) / ("tls" if tls else "plain"), tls=tls)
            em.start()
            try:
                em.put(reqs.seed_objects())
                em.put([reqs.isvc])
                for client in CLIENTS:
                    for codec in codecs if client != "adapter" else ["json"]:
                        for kind in reqs.kinds:
                            best = min(
                                [
                                    await measure(
                                        CLIENTS[client],
                                        em.url,
                                        em.ca,
                                        codecs[codec],
                                        kind,
                                        reqs,
                                        args.requests,
                                        args.concurrency,
                                    )
                                    for _ in range(args.rounds)
                                ]
                            )
                            key = f"{'tls' if tls else 'plain'} {client}+{codec if client != 'adapter' else 'as is'}"
                            results["us_per_request"].setdefault(key, {})[kind] = best
                            say(f"{key} {kind}: {best:.0f} us")
            finally:
                em.stop()
    results["loadavg_end"] = round(loadavg(), 1)
    return results


def render(results: dict[str, Any]) -> str:
    kinds = list(next(iter(results["us_per_request"].values())))
    lines = [
        f"client CPU per request (us), {results['requests']} requests {results['concurrency']} at a time, "
        f"best of {results['rounds']}; load average {results['loadavg_start']} -> {results['loadavg_end']}",
        f"{'client':<28}" + "".join(f"{k:>9}" for k in kinds) + f"{'mean':>9}",
    ]
    for key, row in results["us_per_request"].items():
        values = [row[k] for k in kinds]
        lines.append(f"{key:<28}" + "".join(f"{v:9.0f}" for v in values) + f"{sum(values) / len(values):9.0f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="requests per kind and client (default 400)")
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4: the workers)")
    parser.add_argument("--rounds", type=int, default=3, help="repeat each measurement, keep the best (default 3)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--no-output", action="store_true")
    args = parser.parse_args(argv)
    results = asyncio.run(run(args, say=lambda msg: print(f"# {msg}", file=sys.stderr, flush=True)))
    print(render(results))
    if not args.no_output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
