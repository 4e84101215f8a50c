"""The API emulator as a process of its own, for the separate-process benchmark (``bench_process.py``).

    python -m benchmarks.emulator_process --ready-file PATH [--tls-dir DIR]

Serves the same emulator the wire tests use (``aim_testing.emulator``,
with the :class:`~benchmarks.harness.TimingEmulator` speedups) on
``127.0.0.1``, over TLS with a throwaway private CA when ``--tls-dir`` is
given (a real API server speaks TLS only). A second, plain-HTTP port serves a
small control API for the driver, so the driver's bookkeeping never shows in
the API request log:

* ``GET /calls?since=N`` -- the request log from position N: verb, resource,
  namespace, name, subresource, User-Agent and arrival time of each request;
* ``GET /stored?plural=P`` -- when each object of ``P`` was first stored
  (``aimservices``, ``inferenceservices``);
* ``GET /object?resource=R&namespace=NS&name=N`` -- one object as stored;
* ``POST /put`` -- store a JSON list of objects as they are (status included);
* ``GET /backlog`` -- watch events stored but not yet sent to a watcher.

Times are ``time.perf_counter()``, which is ``CLOCK_MONOTONIC`` on Linux: one
clock for every process on the machine, so the driver can compare them with
its own. When ready, the process writes ``{"url", "control", "pid", "ca"}`` to
the ready file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import attrs

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kmock  # noqa: E402
from aiohttp import web  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_core.operator import collection  # noqa: E402
from aim_testing.emulator import declare_resources  # noqa: E402
from benchmarks.harness import QuickServer, TimingEmulator  # noqa: E402

TIMED = frozenset({"aimservices", "inferenceservices"})


@attrs.define(kw_only=True)
class LoggingEmulator(TimingEmulator):
    """The timing emulator, noting the arrival time of every request next to its log entry."""

    arrivals: list[float] = attrs.field(factory=list, init=False)
    write_latency: float = 0.0  # seconds every write waits before it is served (etcd's commit, no CPU)

    async def _handle(self, request: Any) -> Any:
        self.arrivals.append(time.perf_counter())
        if self.write_latency and request.method.value in ("POST", "PUT", "PATCH", "DELETE"):
            await asyncio.sleep(self.write_latency)
        return await super()._handle(request)


def control_app(em: LoggingEmulator) -> web.Application:
    async def calls(request: web.Request) -> web.Response:
        since = int(request.query.get("since", "0"))
        rows = [
            [c.verb, c.resource, c.namespace, c.name, c.subresource, c.user_agent, t]
            for c, t in zip(em.log[since:], em.arrivals[since:])
        ]
        return web.json_response({"since": since, "served": since + len(rows), "calls": rows})

    async def stored(request: web.Request) -> web.Response:
        plural = request.query["plural"]
        rows = [[ns, name, t] for (p, ns, name), t in em.first_stored.items() if p == plural]
        return web.json_response(rows)

    async def get_object(request: web.Request) -> web.Response:
        q = request.query
        return web.json_response(em.get_object(q["resource"], q.get("namespace") or None, q["name"]))

    async def put(request: web.Request) -> web.Response:
        objects = await request.json()
        for obj in objects:
            em.put_object(obj)
        return web.json_response({"stored": len(objects)})

    async def backlog(_: web.Request) -> web.Response:
        return web.json_response(sum(queue.qsize() for queue in em._watchers))  # noqa: SLF001

    app = web.Application(client_max_size=1 << 30)
    app.add_routes(
        [
            web.get("/calls", calls),
            web.get("/stored", stored),
            web.get("/object", get_object),
            web.post("/put", put),
            web.get("/backlog", backlog),
        ]
    )
    return app


async def serve(ready_file: Path, tls_dir: Path | None, *, write_latency: float = 0.0) -> None:
    em = declare_resources(LoggingEmulator(timed=TIMED, write_latency=write_latency), crds=generate_crds())
    server_cls: type[QuickServer] = QuickServer
    ca = None
    if tls_dir is not None:
        from aim_testing.tlsfiles import make_tls_files

        files = make_tls_files(tls_dir, name="aim-bench")
        context, ca = files.server_context(), str(files.ca_file)

        class TlsServer(QuickServer):
            async def start_server(self, **kwargs: Any) -> None:
                await super().start_server(ssl=context, **kwargs)

        server_cls = TlsServer
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with em, kmock.Server(em, host="127.0.0.1", server_cls=server_cls) as server:
        runner = web.AppRunner(control_app(em), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001
        url = str(server.url).rstrip("/")
        if tls_dir is not None:
            url = url.replace("http://", "https://", 1)
        tmp = ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"url": url, "control": f"http://127.0.0.1:{port}", "pid": os.getpid(), "ca": ca}))
        tmp.rename(ready_file)
        await stop.wait()
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ready-file", type=Path, required=True, help="where to write the URLs once serving")
    parser.add_argument("--tls-dir", type=Path, default=None, help="serve TLS with a private CA written here")
    parser.add_argument(
        "--write-latency-ms",
        type=float,
        default=0.0,
        help="make every write wait this long before it is served, as a real API server waits for etcd (costs no CPU)",
    )
    args = parser.parse_args(argv)
    # The operator's garbage collection policy (aim_core/operator/collection.py): the emulator keeps every
    # object and request, and CPython's full collections over that growing heap cost it about 1.3 s of a
    # 1000-service burst. The same for the bare client's emulator, so the comparison stays fair.
    collection.configure()
    asyncio.run(serve(args.ready_file, args.tls_dir, write_latency=args.write_latency_ms / 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
