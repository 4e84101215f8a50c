"""The separate-process benchmark against a real API server (issue 19): a burst and the bare client.

    KUBEBUILDER_ASSETS=$(../shared/envtest/unpack) python benchmarks/bench_apiserver.py [--services 1000]

The emulator mode (``bench_process.py``) stamps latency inside the emulator and counts
requests in its log. Here the cluster is etcd + kube-apiserver + kube-controller-manager
(``aim_testing.apiserver.ControlPlane``, 1.24 from envtest) and the operator runs as its own
process (``aim-engine run -A``, as ``bench_process.py`` starts it) through the recording proxy
(``RecordingProxy``, plain HTTP on loopback, in this driver's process), which counts its
requests. The driver:

1. seeds the Ready dependencies as the emulator mode does (``seed.cluster``), starts the
   operator and waits for a warm-up service's InferenceService;
2. **burst**: creates N AIMServices from 8 client threads at once and waits for every
   InferenceService and for the operator to go quiet. Latency per service: from the create's
   answer to its InferenceService's ADDED event on a watch the driver holds (straight to the
   server); wall time from the first create's answer to the last InferenceService seen;
   operator CPU from ``/proc``; requests per service from the proxy;
3. **bare client**: the operator stopped, in fresh namespaces of the same server, 8 threads send
   the same three writes per service (create the service, apply its InferenceService, write its
   status), through the same proxy, timed the same way.

See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import signal
import ssl
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import yaml  # noqa: E402

from aim_core.reconcile.naming import artifact_pvc_name, inference_service_name  # noqa: E402
from aim_testing import apiserver as envtest  # noqa: E402
from aim_testing.emulator import READ_VERBS  # noqa: E402
from benchmarks import seed  # noqa: E402
from benchmarks.bench_process import ISVC, SERVICES, bare_templates  # noqa: E402
from benchmarks.bench_services import _environment  # noqa: E402
from benchmarks.processes import OperatorProcess, Profiler, by_request, loadavg, operator_calls  # noqa: E402
from benchmarks.report import summary  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "apiserver.json"
AGENT = "bench-driver"
WALL_VS_BARE = 1.3  # issue 19's targets
BURST_P99_MS = 2000.0


@attrs.frozen
class Config:
    services: int = 1000
    namespaces: int = 10
    nodes: int = 4
    workers: int = 16  # the operator's default
    threads: int = 8
    settle_quiet: float = 1.0
    timeout: float = 900.0
    bare: bool = True
    profile: bool = False


class ApiServerOperator(OperatorProcess):
    """The operator process with a kubeconfig naming the recording proxy (the admin token, plain HTTP)."""

    def __init__(self, workdir: Path, plane: envtest.ControlPlane, proxy: envtest.RecordingProxy, **kw: Any) -> None:
        super().__init__(workdir, None, **kw)  # type: ignore[arg-type]
        self.plane, self.proxy = plane, proxy

    def kubeconfig(self) -> Path:
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(self.plane.kubeconfig_dict(envtest.ADMIN_TOKEN, server=self.proxy.url)))
        return path


class Watcher:
    """Every InferenceService ADDED on a watch straight to the server: (namespace, name) -> when seen."""

    def __init__(self, plane: envtest.ControlPlane) -> None:
        self.plane = plane
        self.seen: dict[tuple[str, str], float] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> Watcher:
        self._thread.start()
        if not self._ready.wait(30):
            raise TimeoutError("the InferenceService watch did not start")
        return self

    def _run(self) -> None:
        path = "/apis/serving.kserve.io/v1beta1/inferenceservices"
        client = httpx.Client(
            base_url=self.plane.url,
            verify=ssl.create_default_context(cafile=str(self.plane.ca_file)),
            timeout=httpx.Timeout(30, read=None),
            headers={"Authorization": f"Bearer {envtest.ADMIN_TOKEN}", "User-Agent": AGENT},
        )
        try:
            rv = client.get(path).json()["metadata"]["resourceVersion"]
            while not self._stop.is_set():
                params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "300"}
                with client.stream("GET", path, params=params) as stream:
                    self._ready.set()
                    for line in stream.iter_lines():
                        if self._stop.is_set():
                            return
                        if not line:
                            continue
                        event = json.loads(line)
                        meta = event["object"].get("metadata", {})
                        rv = meta.get("resourceVersion", rv)
                        if event["type"] == "ADDED":
                            self.seen.setdefault((meta["namespace"], meta["name"]), time.perf_counter())
        except BaseException as exc:  # noqa: BLE001 - reported by check()
            if not self._stop.is_set():
                self.error = exc
            self._ready.set()
        finally:
            client.close()

    def check(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"the InferenceService watch failed: {self.error!r}")

    def stop(self) -> None:
        self._stop.set()  # the daemon thread ends with its stream (or with the process)


class Driver:
    def __init__(self, cfg: Config, workdir: Path, say: Any = print) -> None:
        self.cfg, self.workdir, self.say = cfg, workdir, say
        self.namespaces = seed.namespace_names(cfg.namespaces)
        self.local = threading.local()
        self.created: dict[tuple[str, str], float] = {}  # (namespace, service) -> when its create was answered
        self.results: dict[str, Any] = {}

    def client(self) -> httpx.Client:
        """One keep-alive client per thread, through the recording proxy (as the operator's requests go)."""
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = httpx.Client(
                base_url=self.proxy.url, timeout=60, headers={"User-Agent": AGENT}
            )
        return client

    def create(self, ns: str, name: str) -> httpx.Response:
        r = self.client().post(SERVICES.format(ns=ns), json=seed.service(name, ns))
        r.raise_for_status()
        self.created[ns, name] = time.perf_counter()
        return r

    def run(self) -> dict[str, Any]:
        cfg, results = self.cfg, self.results
        results.update(config=attrs.asdict(cfg), environment=_environment())
        results["environment"]["loadavg_start"] = round(loadavg(), 1)
        folder = envtest.assets()
        if folder is None:
            raise RuntimeError(envtest.HOW_TO_ENABLE)
        self.plane = envtest.ControlPlane(folder).start()
        try:
            self.proxy = envtest.RecordingProxy(self.plane).start()
            self.kube = envtest.ApiServerKube(self.plane, self.proxy)
            self.watch = Watcher(self.plane).start()
            self.op = ApiServerOperator(self.workdir, self.plane, self.proxy, workers=cfg.workers)
            try:
                self.seed()
                results["environment"]["kube_apiserver"] = self.plane.client.get("/version").json().get("gitVersion")
                self.op.start()
                results["startup"] = self.startup()
                results["environment"]["operator_pid"] = self.op.pid
                wanted = seed.services(cfg.services, self.namespaces)
                results["burst"] = self.burst(wanted)
                templates = self.templates(wanted)
            finally:
                results["operator_log"] = self.op.log_counts()
                self.op.stop()
            if cfg.bare:
                results["bare"] = self.bare(wanted, templates)
                results["burst"]["vs_bare"] = (
                    results["burst"]["wall_s"] / results["bare"]["wall_s"] if results["bare"]["wall_s"] else None
                )
        finally:
            if hasattr(self, "watch"):
                self.watch.stop()
            if hasattr(self, "proxy"):
                self.proxy.stop()
            self.plane.stop()
        results["environment"]["loadavg_end"] = round(loadavg(), 1)
        results["targets"] = check_targets(results)
        return results

    def seed(self) -> None:
        """``seed.cluster`` on the server: the artifacts' PVC names follow the uid the server gave them."""
        for obj in seed.cluster(self.namespaces, nodes=self.cfg.nodes):
            if obj["kind"] in ("AIMArtifact", "PersistentVolumeClaim", "AIMTemplateCache"):
                continue  # below, once the artifact's uid is known
            if obj["kind"] != "CustomResourceDefinition":  # the control plane installed them
                self.kube.put_object(obj)
        for ns in self.namespaces:
            art = seed.artifact(ns)
            uid = self.kube.put_object(art)["metadata"]["uid"]
            art["metadata"]["uid"] = uid
            art["status"]["persistentVolumeClaim"] = artifact_pvc_name(art["metadata"]["name"], uid)
            self.kube.put_object(art)
            self.kube.put_object(seed.volume(art))
            self.kube.put_object(seed.shared_cache(ns, art))

    # ------------------------------------------------------------------ waiting and counting

    def settle(self, mark: int, keys: set[tuple[str, str]]) -> float:
        """Wait until every InferenceService in ``keys`` was seen and the operator wrote nothing for a while."""
        deadline = time.monotonic() + self.cfg.timeout
        while True:
            self.op.check()
            self.watch.check()
            now = time.monotonic()
            last_write = 0.0
            calls, requests = self.proxy.calls, self.proxy.requests
            # the proxy appends to calls, then to requests: read no further than both hold
            for i in range(min(len(calls), len(requests)) - 1, mark - 1, -1):
                call = calls[i]
                if call.user_agent.startswith(("aim-engine", "kopf")) and call.verb not in READ_VERBS:
                    if call.verb not in ("watch", "discovery"):
                        last_write = requests[i]["at"]
                        break
            if keys <= self.watch.seen.keys() and now - last_write >= self.cfg.settle_quiet:
                return time.perf_counter()
            if now > deadline:
                missing = len(keys - self.watch.seen.keys())
                raise TimeoutError(f"the operator did not settle ({missing} InferenceServices not seen)")
            time.sleep(0.1)

    def counts(self, mark: int, services: int) -> dict[str, Any]:
        calls = operator_calls(self.proxy.calls[mark:])
        writes = [c for c in calls if c.verb not in READ_VERBS]
        per = max(services, 1)
        return {
            "requests": len(calls),
            "writes": len(writes),
            "requests_per_service": len(calls) / per,
            "writes_per_service": len(writes) / per,
            "by_request_per_service": {k: v / per for k, v in by_request(calls).items()},
        }

    def latencies(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
        samples, first, last = [], float("inf"), 0.0
        for ns, name, isvc in wanted:
            t0, t1 = self.created.get((ns, name)), self.watch.seen.get((ns, isvc))
            if t0 is None or t1 is None:
                continue
            samples.append(max(t1 - t0, 0.0) * 1e3)
            first, last = min(first, t0), max(last, t1)
        return {"latency_ms": summary(samples), "wall_s": last - first if samples else 0.0, "applied": len(samples)}

    # ------------------------------------------------------------------ phases

    def startup(self) -> dict[str, Any]:
        start, mark = time.perf_counter(), len(self.proxy.calls)
        ns, name = self.namespaces[0], "warm-up"
        self.create(ns, name)
        self.settle(mark, {(ns, inference_service_name(name, ns))})
        out = {"seconds": time.perf_counter() - start, "memory_mb": self.op.memory(), **self.counts(mark, 1)}
        self.say(f"operator started and settled in {out['seconds']:.1f} s")
        return out

    def burst(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
        cfg = self.cfg
        self.say(f"burst: {len(wanted)} services from {cfg.threads} threads")
        mark, cpu0, t0 = len(self.proxy.calls), self.op.cpu(), time.perf_counter()
        profiler = Profiler(self.op.pid, self.workdir / "burst.pyspy") if cfg.profile else None
        profiling = profiler.start() if profiler else False
        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(lambda item: self.create(item[0], item[1]), wanted))
        end = self.settle(mark, {(ns, isvc) for ns, _, isvc in wanted})
        profile = profiler.stop() if profiler and profiling else None
        cpu = self.op.cpu() - cpu0
        out = {
            "services": len(wanted),
            "seconds": end - t0,
            "loadavg": round(loadavg(), 1),
            "operator_cpu_s": cpu,
            "operator_cpu_ms_per_service": cpu * 1e3 / max(len(wanted), 1),
            "memory_mb": self.op.memory(),
            **self.counts(mark, len(wanted)),
            **self.latencies(wanted),
        }
        if profile is not None:
            out["profile"] = profile
        lat = out["latency_ms"]
        self.say(
            f"burst: wall {out['wall_s']:.1f} s, median {lat.get('median', 0):.0f} ms, p99 {lat.get('p99', 0):.0f} ms, "
            f"{out['requests_per_service']:.2f} requests and {out['operator_cpu_ms_per_service']:.1f} ms CPU per service"
        )
        return out

    def templates(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any] | None:
        """What the operator wrote for one service: the bare client sends the same bodies."""
        return bare_templates(self.kube.get, wanted)

    def bare(self, wanted: list[tuple[str, str, str]], templates: dict[str, Any] | None) -> dict[str, Any]:
        """The same three writes per service, from 8 threads, in fresh namespaces (the operator stopped)."""
        if templates is None:
            raise RuntimeError("no InferenceService to copy for the bare client")
        cfg = self.cfg
        spaces = {ns: f"bare-{ns}" for ns in self.namespaces}
        for ns in spaces.values():
            self.kube.ensure_namespace(ns)
        moved = [(spaces[ns], name, inference_service_name(name, spaces[ns])) for ns, name, _ in wanted]
        self.say(f"bare client: the same three writes for {len(moved)} services from {cfg.threads} threads")

        def three(item: tuple[str, str, str]) -> None:
            ns, name, isvc = item
            client = self.client()
            uid = self.create(ns, name).json()["metadata"]["uid"]
            body = (
                templates["isvc_body"]
                .replace(templates["isvc"], isvc)
                .replace(templates["uid"], uid)
                .replace(f'"{templates["name"]}"', f'"{name}"')
                .replace(f'"{templates["namespace"]}"', f'"{ns}"')
            )
            r = client.patch(
                ISVC.format(ns=ns, name=isvc),
                content=body.encode(),
                params={"fieldManager": "aim-engine", "force": "true"},
                headers={"Content-Type": "application/apply-patch+yaml"},
            )
            if r.status_code >= 400:
                raise RuntimeError(f"apply {ns}/{isvc}: {r.status_code} {r.text[:300]}")
            client.patch(
                f"{SERVICES.format(ns=ns)}/{name}/status",
                content=templates["status"].encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            ).raise_for_status()

        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(three, moved))
        deadline = time.monotonic() + 60
        while not {(ns, isvc) for ns, _, isvc in moved} <= self.watch.seen.keys():
            self.watch.check()
            if time.monotonic() > deadline:
                raise TimeoutError("the bare client's InferenceServices were not all seen")
            time.sleep(0.05)
        out = {**self.latencies(moved), "loadavg": round(loadavg(), 1)}
        self.say(f"bare client: {out['wall_s']:.1f} s")
        return out


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    burst = results["burst"]
    targets = [
        {
            "target": "burst p99 latency (ms)",
            "limit": BURST_P99_MS,
            "measured": burst["latency_ms"].get("p99"),
            "met": (burst["latency_ms"].get("p99") or 0) < BURST_P99_MS,
        }
    ]
    if burst.get("vs_bare") is not None:
        targets.append(
            {
                "target": "burst wall time / bare client's",
                "limit": WALL_VS_BARE,
                "measured": burst["vs_bare"],
                "met": burst["vs_bare"] <= WALL_VS_BARE,
            }
        )
    return targets


def render(results: dict[str, Any]) -> str:
    burst, env = results["burst"], results["environment"]
    lat = burst["latency_ms"]
    lines = [
        f"# operator vs kube-apiserver {env.get('kube_apiserver', '?')}: {burst['services']} services "
        f"(load average {env.get('loadavg_start')} -> {env.get('loadavg_end')})",
        "",
        "| | burst | bare client |",
        "|---|---|---|",
        f"| wall (s) | {burst['wall_s']:.2f} | {results.get('bare', {}).get('wall_s', 0):.2f} |",
        f"| latency median (ms) | {lat.get('median', 0):.0f} | "
        f"{results.get('bare', {}).get('latency_ms', {}).get('median', 0):.0f} |",
        f"| latency p99 (ms) | {lat.get('p99', 0):.0f} | "
        f"{results.get('bare', {}).get('latency_ms', {}).get('p99', 0):.0f} |",
        f"| operator CPU per service (ms) | {burst['operator_cpu_ms_per_service']:.1f} | |",
        f"| operator requests per service | {burst['requests_per_service']:.2f} | 3 |",
        f"| operator RSS after the burst (MB) | {burst['memory_mb'].get('VmRSS', 0):.0f} | |",
        "",
        "requests per service: " + ", ".join(f"{k} {v:.2f}" for k, v in burst["by_request_per_service"].items()),
        "",
        "Targets:",
    ]
    for t in results["targets"]:
        measured = t["measured"]
        shown = f"{measured:.2f}" if isinstance(measured, float) else str(measured)
        lines.append(f"- {t['target']}: {shown} (limit {t['limit']}) {'met' if t['met'] else 'NOT met'}")
    return "\n".join(lines)


def run_benchmark(cfg: Config, workdir: Path | None = None, say: Any = print) -> dict[str, Any]:
    if workdir is not None:
        return Driver(cfg, workdir, say).run()
    with tempfile.TemporaryDirectory(prefix="aim-bench-api-") as tmp:
        return Driver(cfg, Path(tmp), say).run()


def _stop(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwind, so the child processes are stopped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=1000, help="services in the burst (default 1000)")
    parser.add_argument("--namespaces", type=int, default=10, help="namespaces (default 10)")
    parser.add_argument("--workers", type=int, default=16, help="the operator's --workers (default 16)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating services (default 8)")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare-client comparison")
    parser.add_argument("--profile", action="store_true", help="py-spy the operator during the burst")
    parser.add_argument("--keep", type=Path, default=None, help="keep the operator's log and profile in this folder")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    parser.add_argument("--no-output", action="store_true", help="do not write the JSON results")
    args = parser.parse_args(argv)
    cfg = Config(
        services=args.services,
        namespaces=args.namespaces,
        workers=args.workers,
        threads=args.threads,
        bare=not args.no_bare,
        profile=args.profile,
    )
    signal.signal(signal.SIGTERM, _stop)
    say = lambda msg: print(f"# {msg}", file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="aim-bench-api-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results = Driver(cfg, workdir, say).run()
    print(render(results))
    if not args.no_output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
