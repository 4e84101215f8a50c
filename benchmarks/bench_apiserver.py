"""The separate-process benchmark against a real API server (issue 19), with no proxy in the path.

    KUBEBUILDER_ASSETS=$(../shared/envtest/unpack) python benchmarks/bench_apiserver.py [--services 1000]

The cluster is etcd + kube-apiserver + kube-controller-manager (``aim_testing.apiserver.ControlPlane``,
1.24 from envtest). The operator runs as its own process (``aim-engine run -A``, as
``bench_process.py`` starts it) with a kubeconfig naming the server's HTTPS URL and CA, as in a
cluster; it authenticates with a token of its own (``AUDITED_TOKEN``, in ``system:masters`` as the
admin is) and the server writes an audit log (level Metadata) of that user's requests only, which the
driver reads back to count them (``AuditLog``; ``--no-audit`` turns it off, to see what it costs).
The driver talks to the server directly over TLS too. It:

1. seeds the Ready dependencies as the emulator mode does (``seed.cluster``), starts the operator
   and waits for a warm-up service's InferenceService;
2. **paced**: creates ``--paced`` services at ``--rate`` per second (the path of one service when
   the operator keeps up);
3. **burst**: creates N AIMServices from 8 client threads at once and waits for every
   InferenceService and for the operator to go quiet;
4. **steady**: ``--quiet-seconds`` in which nothing changes: the operator must write nothing;
5. **ready**: plays the kubelet and KServe from 8 threads: per service a predictor pod, running and
   Ready, then its InferenceService's status Ready; waits until every AIMService is Running; then a
   second quiet period (**steady, Ready**);
6. **bare client**: the operator stopped, in fresh namespaces of the same server, 8 threads send
   the same three writes per service (create the service, apply its InferenceService, write its
   status), timed the same way as the burst.

Latency per service: from the create's answer to its InferenceService's ADDED event on a watch the
driver holds (ready: from the status write's answer to the service's Running on a watch). Every
phase has the CPU of kube-apiserver, etcd, kube-controller-manager, the operator and the driver
(``/proc``), the operator's requests by kind (audit log) and its RSS. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import ssl
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
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
from benchmarks.processes import (  # noqa: E402
    WATCH_OR_DISCOVERY,
    OperatorProcess,
    Profiler,
    by_request,
    cpu_seconds,
    label,
    loadavg,
)
from benchmarks.report import summary  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "apiserver.json"
AGENT = "bench-driver"
WALL_VS_BARE = 1.3  # issue 19's targets
BURST_P99_MS = 2000.0
PROCESSES = ("kube-apiserver", "etcd", "kube-controller-manager", "operator", "driver")
ISVC_LIST = "/apis/serving.kserve.io/v1beta1/inferenceservices"
SERVICE_LIST = "/apis/aim.eai.amd.com/v1alpha1/aimservices"
PODS = "/api/v1/namespaces/{ns}/pods"
ISVC_POD_LABEL = "serving.kserve.io/inferenceservice"  # how the operator finds an InferenceService's pods

Item = tuple[str, str, str]  # namespace, service, its InferenceService


@attrs.frozen
class Config:
    services: int = 1000
    namespaces: int = 10
    nodes: int = 4
    workers: int = 64  # the operator's default
    threads: int = 8
    paced: int = 50  # services created at `rate` per second before the burst; 0: no paced phase
    rate: float = 5.0
    quiet_seconds: float = 30.0  # each steady phase; 0: none
    ready: bool = True  # the ready phase (the driver plays KServe)
    audit: bool = True  # count the operator's requests from the server's audit log
    settle_quiet: float = 1.0
    timeout: float = 900.0
    bare: bool = True
    profile: bool = False


class ApiServerOperator(OperatorProcess):
    """The operator process with a kubeconfig naming the server itself (its URL and CA, the audited token)."""

    def __init__(self, workdir: Path, plane: envtest.ControlPlane, **kw: Any) -> None:
        super().__init__(workdir, None, **kw)  # type: ignore[arg-type]
        self.plane = plane

    def kubeconfig(self) -> Path:
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(self.plane.kubeconfig_dict(envtest.AUDITED_TOKEN)))
        return path


class Watcher:
    """A watch straight to the server: when each object was ADDED, and when ``match`` first held for it."""

    def __init__(
        self, plane: envtest.ControlPlane, path: str, match: Callable[[dict[str, Any]], bool] | None = None
    ) -> None:
        self.plane, self.path, self.match = plane, path, match
        self.seen: dict[tuple[str, str], float] = {}
        self.matched: dict[tuple[str, str], float] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self.error: BaseException | None = None

    def start(self) -> Watcher:
        self._thread.start()
        if not self._ready.wait(30):
            raise TimeoutError(f"the watch of {self.path} did not start")
        return self

    def _note(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata", {})
        key = (meta.get("namespace", ""), meta.get("name", ""))
        now = time.perf_counter()
        if kind == "ADDED":
            self.seen.setdefault(key, now)
        if self.match is not None and key not in self.matched and self.match(obj):
            self.matched[key] = now

    def _run(self) -> None:
        client = httpx.Client(
            base_url=self.plane.url,
            verify=ssl.create_default_context(cafile=str(self.plane.ca_file)),
            timeout=httpx.Timeout(30, read=None),
            headers={"Authorization": f"Bearer {envtest.ADMIN_TOKEN}", "User-Agent": AGENT},
        )
        try:
            listed = client.get(self.path).json()
            rv = listed["metadata"]["resourceVersion"]
            for item in listed.get("items") or ():
                self._note("LISTED", item)
            while not self._stop.is_set():
                params = {"watch": "1", "resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "300"}
                with client.stream("GET", self.path, params=params) as stream:
                    self._ready.set()
                    for line in stream.iter_lines():
                        if self._stop.is_set():
                            return
                        if not line:
                            continue
                        event = json.loads(line)
                        rv = event["object"].get("metadata", {}).get("resourceVersion", rv)
                        if event["type"] in ("ADDED", "MODIFIED"):
                            self._note(event["type"], event["object"])
        except BaseException as exc:  # noqa: BLE001 - reported by check()
            if not self._stop.is_set():
                self.error = exc
            self._ready.set()
        finally:
            client.close()

    def check(self) -> None:
        if self.error is not None:
            raise RuntimeError(f"the watch of {self.path} failed: {self.error!r}")

    def stop(self) -> None:
        self._stop.set()  # the daemon thread ends with its stream (or with the process)


def pod_running(at: str) -> dict[str, Any]:
    """A predictor pod's status as the kubelet writes it once the model server answers its readiness probe."""
    return {
        "phase": "Running",
        "startTime": at,
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": at}
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "containerStatuses": [
            {
                "name": "kserve-container",
                "image": "registry.invalid/vllm:bench",
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": at}},
            }
        ],
    }


def service_running(obj: dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("status") == "Running"


@attrs.frozen
class Snapshot:
    """Where a phase starts: the time, each process's CPU seconds, the audit log's position."""

    at: float
    cpu: dict[str, float]
    mark: int


class Driver:
    def __init__(self, cfg: Config, workdir: Path, say: Any = print) -> None:
        self.cfg, self.workdir, self.say = cfg, workdir, say
        self.namespaces = seed.namespace_names(cfg.namespaces)
        self.local = threading.local()
        self.created: dict[tuple[str, str], float] = {}  # (namespace, service) -> when its create was answered
        self.created_at: dict[tuple[str, str], float] = {}  # the same in time.time() seconds
        self.results: dict[str, Any] = {}  # filled phase by phase: what a failed run got to
        self.audit: envtest.AuditLog | None = None

    # ------------------------------------------------------------------ plumbing

    def client(self) -> httpx.Client:
        """One keep-alive client per thread, straight to the server over TLS, as the admin."""
        client = getattr(self.local, "client", None)
        if client is None:
            client = self.local.client = httpx.Client(
                base_url=self.plane.url,
                verify=self.tls,
                timeout=60,
                headers={"User-Agent": AGENT, "Authorization": f"Bearer {envtest.ADMIN_TOKEN}"},
            )
        return client

    def create(self, ns: str, name: str) -> httpx.Response:
        r = self.client().post(SERVICES.format(ns=ns), json=seed.service(name, ns))
        r.raise_for_status()
        self.created[ns, name] = time.perf_counter()
        self.created_at[ns, name] = time.time()  # the audit log's clock
        return r

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each process (a process that is not running counts as 0)."""
        pids = {**self.plane.pids(), "driver": os.getpid()}
        if self.op.proc is not None and self.op.proc.poll() is None:
            pids["operator"] = self.op.pid
        out = {}
        for name in PROCESSES:
            try:
                out[name] = cpu_seconds(pids[name]) if name in pids else 0.0
            except OSError:
                out[name] = 0.0
        return out

    def begin(self) -> Snapshot:
        return Snapshot(time.perf_counter(), self.cpu(), self.audit.mark() if self.audit else 0)

    def measure(self, start: Snapshot, services: int, *, end: float | None = None) -> dict[str, Any]:
        """Seconds, the CPU split and (with the audit log) the operator's requests since ``start``."""
        cpu, per = self.cpu(), max(services, 1)
        split = {name: cpu[name] - start.cpu.get(name, 0.0) for name in PROCESSES}
        out: dict[str, Any] = {
            "services": services,
            "seconds": (end or time.perf_counter()) - start.at,
            "loadavg": round(loadavg(), 1),
            "cpu_s": split,
            "cpu_ms_per_service": {name: s * 1e3 / per for name, s in split.items()},
            "operator_cpu_s": split["operator"],
            "operator_cpu_ms_per_service": split["operator"] * 1e3 / per,
        }
        if self.audit is not None:
            out.update(self.counts(start.mark, per))
        return out

    def counts(self, mark: int, per: int) -> dict[str, Any]:
        assert self.audit is not None
        self.audit.poll()
        calls = [c for c in self.audit.calls[mark:] if c.verb not in WATCH_OR_DISCOVERY]
        writes = [c for c in calls if c.verb not in READ_VERBS]
        failed = Counter(str(code) for code in self.audit.codes[mark:] if code >= 400)
        return {
            "requests": len(calls),
            "writes": len(writes),
            "requests_per_service": len(calls) / per,
            "writes_per_service": len(writes) / per,
            "by_request_per_service": {k: v / per for k, v in by_request(calls).items()},
            "by_request": by_request(calls),
            "refused_by_code": dict(failed),
        }

    def memory(self, after: str) -> dict[str, Any]:
        reading = {"after": after, **self.op.memory()}
        self.results.setdefault("memory", []).append(reading)
        return reading

    def settle(self, start: Snapshot, done: Callable[[], bool]) -> float:
        """Wait until ``done()`` holds and the operator went quiet; return when.

        Quiet: no write in the audit log for ``settle_quiet`` s; without the audit log, the operator
        used under a tenth of a core over that long.
        """
        cfg = self.cfg
        deadline = time.monotonic() + cfg.timeout
        last_write = time.time()
        cpu_samples: list[tuple[float, float]] = []
        position = start.mark
        while True:
            self.op.check()
            for watch in self.watches:
                watch.check()
            now = time.time()
            if self.audit is not None:
                self.audit.poll()
                for call, at in zip(self.audit.calls[position:], self.audit.times[position:], strict=True):
                    if call.verb not in READ_VERBS and call.verb not in WATCH_OR_DISCOVERY:
                        last_write = max(last_write, at)
                position = len(self.audit.calls)
                quiet = now - last_write >= cfg.settle_quiet
            else:
                cpu_samples.append((now, self.op.cpu()))
                old = [s for s in cpu_samples if s[0] <= now - cfg.settle_quiet]
                quiet = bool(old) and cpu_samples[-1][1] - old[-1][1] < 0.1 * cfg.settle_quiet
            if done() and quiet:
                return time.perf_counter()
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not settle")
            time.sleep(0.1)

    def all_seen(self, watch: Watcher, keys: set[tuple[str, str]], matched: bool = False) -> Callable[[], bool]:
        return lambda: keys <= (watch.matched if matched else watch.seen).keys()

    def latencies(self, items: list[Item], mark: int | None = None) -> dict[str, Any]:
        samples, first, last = [], float("inf"), 0.0
        for ns, name, isvc in items:
            t0, t1 = self.created.get((ns, name)), self.isvcs.seen.get((ns, isvc))
            if t0 is None or t1 is None:
                continue
            samples.append(max(t1 - t0, 0.0) * 1e3)
            first, last = min(first, t0), max(last, t1)
        out = {"latency_ms": summary(samples), "wall_s": last - first if samples else 0.0, "applied": len(samples)}
        if self.audit is not None and mark is not None:
            out.update(self.path_parts(items, mark))
        return out

    def path_parts(self, items: list[Item], mark: int) -> dict[str, Any]:
        """Where a new service's time goes, from the audit log (the server's clock, which is this machine's).

        ``to_first_request_ms``: its create answered -> the server received the operator's first
        request about it (the finalizer patch): watch delivery, queue wait and planning.
        ``first_request_to_apply_ms``: that request received -> the InferenceService apply answered.
        ``server_ms_by_request``: how long the server took to answer the operator's requests, by kind.
        """
        assert self.audit is not None
        self.audit.poll()
        services = {(ns, name) for ns, name, _ in items}
        isvc_of = {(ns, isvc): (ns, name) for ns, name, isvc in items}
        first: dict[tuple[str, str], float] = {}
        applied: dict[tuple[str, str], float] = {}
        durations: dict[str, list[float]] = {}
        log = self.audit
        for i in range(mark, len(log.calls)):
            call = log.calls[i]
            if call.verb in WATCH_OR_DISCOVERY:
                continue
            durations.setdefault(label(call), []).append((log.times[i] - log.received[i]) * 1e3)
            plural = (call.resource or "").rsplit("/", 1)[-1]
            key = (call.namespace or "", call.name or "")
            if plural == "aimservices" and key in services:
                first.setdefault(key, log.received[i])
            elif plural == "inferenceservices" and call.verb == "apply" and key in isvc_of:
                applied.setdefault(isvc_of[key], log.times[i])
        to_first = [(first[k] - self.created_at[k]) * 1e3 for k in first if k in self.created_at]
        to_apply = [(applied[k] - first[k]) * 1e3 for k in applied if k in first]
        return {
            "to_first_request_ms": summary(to_first),
            "first_request_to_apply_ms": summary(to_apply),
            "server_ms_by_request": {k: summary(v) for k, v in durations.items()},
        }

    # ------------------------------------------------------------------ the run

    def run(self) -> dict[str, Any]:
        cfg, results = self.cfg, self.results
        results.update(config=attrs.asdict(cfg), environment=_environment())
        results["environment"]["loadavg_start"] = round(loadavg(), 1)
        folder = envtest.assets()
        if folder is None:
            raise RuntimeError(envtest.HOW_TO_ENABLE)
        self.plane = envtest.ControlPlane(folder, audit=cfg.audit).start()
        self.watches: list[Watcher] = []
        try:
            self.tls = ssl.create_default_context(cafile=str(self.plane.ca_file))
            if self.plane.audit_file is not None:
                self.audit = envtest.AuditLog(self.plane.audit_file)
            self.kube = envtest.ApiServerKube(self.plane)
            self.isvcs = Watcher(self.plane, ISVC_LIST).start()
            self.watches.append(self.isvcs)
            self.op = ApiServerOperator(self.workdir, self.plane, workers=cfg.workers)
            try:
                self.seed()
                results["environment"]["kube_apiserver"] = self.plane.client.get("/version").json().get("gitVersion")
                self.op.start()
                results["startup"] = self.startup()
                results["environment"]["operator_pid"] = self.op.pid
                paced = [
                    (ns, f"paced-{i:04d}", inference_service_name(f"paced-{i:04d}", ns))
                    for i, ns in zip(range(cfg.paced), self.namespaces * cfg.paced, strict=False)
                ]
                wanted = seed.services(cfg.services, self.namespaces)
                if paced:
                    results["paced"] = self.paced(paced)
                results["burst"] = self.burst(wanted)
                everything = [self.warm_up, *paced, *wanted]
                if cfg.quiet_seconds:
                    results["steady"] = self.steady("steady", len(everything))
                if cfg.ready:
                    results["ready"] = self.ready(everything)
                    if cfg.quiet_seconds:
                        results["steady_ready"] = self.steady("steady, Ready", len(everything))
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
            for watch in self.watches:
                watch.stop()
            if self.plane.audit_file is not None and self.plane.audit_file.exists():
                shutil.copy(self.plane.audit_file, self.workdir / "audit.log")  # the plane's folder goes
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

    # ------------------------------------------------------------------ phases

    def startup(self) -> dict[str, Any]:
        start = self.begin()
        ns, name = self.namespaces[0], "warm-up"
        self.warm_up = (ns, name, inference_service_name(name, ns))
        self.create(ns, name)
        end = self.settle(start, self.all_seen(self.isvcs, {(ns, self.warm_up[2])}))
        out = {**self.measure(start, 1, end=end), "memory_mb": self.op.memory()}
        self.say(f"operator started and settled in {out['seconds']:.1f} s")
        return out

    def paced(self, items: list[Item]) -> dict[str, Any]:
        """One thread creates the services at ``rate`` per second: one service's path, the operator keeping up."""
        rate = self.cfg.rate
        self.say(f"paced: {len(items)} services at {rate:g}/s")
        start = self.begin()
        for i, (ns, name, _) in enumerate(items):
            time.sleep(max(0.0, start.at + i / rate - time.perf_counter()))
            self.create(ns, name)
        end = self.settle(start, self.all_seen(self.isvcs, {(ns, isvc) for ns, _, isvc in items}))
        out = {**self.measure(start, len(items), end=end), **self.latencies(items, start.mark)}
        lat = out["latency_ms"]
        self.say(f"paced: median {lat.get('median', 0):.0f} ms, p99 {lat.get('p99', 0):.0f} ms")
        return out

    def burst(self, wanted: list[Item]) -> dict[str, Any]:
        cfg = self.cfg
        self.say(f"burst: {len(wanted)} services from {cfg.threads} threads")
        profiler = Profiler(self.op.pid, self.workdir / "burst.pyspy") if cfg.profile else None
        profiling = profiler.start() if profiler else False
        start = self.begin()
        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(lambda item: self.create(item[0], item[1]), wanted))
        end = self.settle(start, self.all_seen(self.isvcs, {(ns, isvc) for ns, _, isvc in wanted}))
        profile = profiler.stop() if profiler and profiling else None
        out = {
            **self.measure(start, len(wanted), end=end),
            **self.latencies(wanted, start.mark),
            "memory_mb": self.memory("burst"),
        }
        if profile is not None:
            out["profile"] = profile
        lat = out["latency_ms"]
        self.say(
            f"burst: wall {out['wall_s']:.1f} s, median {lat.get('median', 0):.0f} ms, p99 {lat.get('p99', 0):.0f} ms, "
            f"{out.get('requests_per_service', 0):.2f} requests and {out['operator_cpu_ms_per_service']:.1f} ms CPU "
            "per service"
        )
        return out

    def steady(self, name: str, services: int) -> dict[str, Any]:
        """Nothing changes for ``quiet_seconds``: what the operator sends (it must write nothing)."""
        seconds = self.cfg.quiet_seconds
        self.say(f"{name}: {seconds:g} s with {services} services and nothing changing")
        start = self.begin()
        time.sleep(seconds)
        out = {"name": name, **self.measure(start, services), "memory_mb": self.memory(name)}
        scale = 60.0 / seconds
        out["cpu_s_per_minute"] = {k: v * scale for k, v in out["cpu_s"].items()}
        if self.audit is not None:
            out["requests_per_minute"] = out["requests"] * scale
            out["writes_per_minute"] = out["writes"] * scale
            out["by_request_per_minute"] = {k: v * scale for k, v in out["by_request"].items()}
            self.say(f"{name}: {out['requests']} requests, {out['writes']} writes")
        return out

    def ready(self, items: list[Item]) -> dict[str, Any]:
        """Play the kubelet and KServe: a Ready predictor pod, then the InferenceService's status Ready, per service.

        Latency per service: from the InferenceService status write's answer to the AIMService's
        ``status.status`` Running on a watch; wall from the first such write to the last Running.
        """
        cfg = self.cfg
        self.say(f"ready: a Ready pod and InferenceService for {len(items)} services, from {cfg.threads} threads")
        services = Watcher(self.plane, SERVICE_LIST, service_running).start()
        self.watches.append(services)
        written: dict[tuple[str, str], float] = {}
        start = self.begin()

        def mark_ready(item: Item) -> None:
            ns, name, isvc = item
            client = self.client()
            # the kubelet's part first: the predictor pod, running and Ready
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"{isvc}-predictor", "namespace": ns, "labels": {ISVC_POD_LABEL: isvc}},
                "spec": {"containers": [{"name": "kserve-container", "image": "registry.invalid/vllm:bench"}]},
            }
            client.post(PODS.format(ns=ns), json=pod).raise_for_status()
            client.patch(
                f"{PODS.format(ns=ns)}/{isvc}-predictor/status",
                content=json.dumps({"status": pod_running(envtest.now())}).encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            ).raise_for_status()
            body = {
                "status": {
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": envtest.now()}],
                    "url": f"http://{isvc}.{ns}",
                }
            }
            client.patch(
                f"{ISVC.format(ns=ns, name=isvc)}/status",
                content=json.dumps(body).encode(),
                headers={"Content-Type": "application/merge-patch+json"},
            ).raise_for_status()
            written[ns, name] = time.perf_counter()

        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(mark_ready, items))
        keys = {(ns, name) for ns, name, _ in items}
        try:
            end = self.settle(start, self.all_seen(services, keys, matched=True))
        except TimeoutError:
            missing = sorted(keys - services.matched.keys())
            found = self.kube.get("aimservices", *missing[0]) or {}
            status = found.get("status") or {}
            conditions = [(c.get("type"), c.get("status"), c.get("reason")) for c in status.get("conditions") or ()]
            raise TimeoutError(
                f"{len(missing)} services not Running, e.g. {missing[0]}: status {status.get('status')!r}, "
                f"conditions {conditions}"
            ) from None
        samples = [(services.matched[k] - written[k]) * 1e3 for k in keys if k in written and k in services.matched]
        first = min(written.values(), default=0.0)
        last = max((services.matched[k] for k in keys if k in services.matched), default=first)
        out = {
            **self.measure(start, len(items), end=end),
            "latency_ms": summary(samples),
            "wall_s": last - first,
            "running": len(keys & services.matched.keys()),
            "memory_mb": self.memory("ready"),
        }
        services.stop()
        self.say(
            f"ready: {out['running']} services Running in {out['wall_s']:.1f} s, "
            f"{out.get('requests_per_service', 0):.2f} requests per service"
        )
        return out

    def templates(self, wanted: list[Item]) -> dict[str, Any] | None:
        """What the operator wrote for one service: the bare client sends the same bodies."""
        return bare_templates(self.kube.get, wanted)

    def bare(self, wanted: list[Item], templates: dict[str, Any] | None) -> dict[str, Any]:
        """The same three writes per service, from 8 threads, in fresh namespaces (the operator stopped)."""
        if templates is None:
            raise RuntimeError("no InferenceService to copy for the bare client")
        cfg = self.cfg
        spaces = {ns: f"bare-{ns}" for ns in self.namespaces}
        for ns in spaces.values():
            self.kube.ensure_namespace(ns)
        moved = [(spaces[ns], name, inference_service_name(name, spaces[ns])) for ns, name, _ in wanted]
        self.say(f"bare client: the same three writes for {len(moved)} services from {cfg.threads} threads")

        def three(item: Item) -> None:
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

        start = self.begin()
        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(three, moved))
        deadline = time.monotonic() + 60
        while not {(ns, isvc) for ns, _, isvc in moved} <= self.isvcs.seen.keys():
            self.isvcs.check()
            if time.monotonic() > deadline:
                raise TimeoutError("the bare client's InferenceServices were not all seen")
            time.sleep(0.05)
        measured = self.measure(start, len(moved))
        out = {
            **self.latencies(moved),
            "loadavg": measured["loadavg"],
            "cpu_s": measured["cpu_s"],
            "cpu_ms_per_service": measured["cpu_ms_per_service"],
        }
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
    for key in ("steady", "steady_ready"):
        if key in results and "writes" in results[key]:
            targets.append(
                {
                    "target": f"{results[key]['name']}: operator writes",
                    "limit": 0,
                    "measured": results[key]["writes"],
                    "met": results[key]["writes"] == 0,
                }
            )
    return targets


# ---------------------------------------------------------------------- the printed results


def _f(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def _lat(phase: dict[str, Any]) -> str:
    ms = phase.get("latency_ms") or {}
    return f"{ms['median']:,.0f} / {ms['p99']:,.0f}" if ms.get("count") else "-"


def _ms(stats: dict[str, Any]) -> str:
    return f"{stats['median']:,.0f} / {stats['p99']:,.0f}" if stats.get("count") else "-"


PHASES = (
    ("startup", "startup (1 service)"),
    ("paced", "paced"),
    ("burst", "burst"),
    ("steady", "steady"),
    ("ready", "ready"),
    ("steady_ready", "steady, Ready"),
    ("bare", "bare client"),
)


def render(results: dict[str, Any]) -> str:
    cfg, env = results["config"], results["environment"]
    burst = results["burst"]
    audited = cfg.get("audit", True)
    lines = [
        f"# operator vs kube-apiserver {env.get('kube_apiserver', '?')}: {burst['services']} services "
        f"(commit {env.get('commit')}, load average {env.get('loadavg_start')} -> {env.get('loadavg_end')}; "
        f"paced {cfg['paced']} at {cfg['rate']:g}/s; steady {cfg['quiet_seconds']:g} s; "
        f"requests from the audit log: {'on' if audited else 'off'})",
        "",
        "| phase | services | seconds | wall (s) | latency median / p99 (ms) | operator requests / service "
        "| writes / service | operator CPU / service (ms) | RSS after (MB) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key, title in PHASES:
        phase = results.get(key)
        if not phase:
            continue
        rss = (phase.get("memory_mb") or {}).get("VmRSS")
        lines.append(
            f"| {title} | {phase.get('services', burst['services'])} | {_f(phase.get('seconds'))} "
            f"| {_f(phase.get('wall_s'))} | {_lat(phase)} | {_f(phase.get('requests_per_service'), 2)} "
            f"| {_f(phase.get('writes_per_service'), 2)} | {_f(phase.get('operator_cpu_ms_per_service'))} "
            f"| {_f(rss, 0)} |"
        )
    lines += [
        "",
        "CPU seconds by process (" + ", ".join(PROCESSES) + "):",
        "",
        "| phase | " + " | ".join(PROCESSES) + " |",
        "|---|" + "---|" * len(PROCESSES),
    ]
    for key, title in PHASES:
        phase = results.get(key)
        if phase and "cpu_s" in phase:
            lines.append(f"| {title} | " + " | ".join(_f(phase["cpu_s"][p], 2) for p in PROCESSES) + " |")
    if audited:
        lines.append("")
        for key, title in PHASES:
            phase = results.get(key)
            if not phase or "by_request" not in phase:
                continue
            if key.startswith("steady"):
                counted = ", ".join(f"{k} {v}" for k, v in phase["by_request"].items()) or "none"
                lines.append(f"- {title}, requests in {phase['seconds']:.0f} s: {counted}")
            else:
                counted = ", ".join(f"{k} {v:.2f}" for k, v in phase["by_request_per_service"].items())
                lines.append(f"- {title}, requests per service: {counted}")
            if phase.get("refused_by_code"):
                lines.append(f"  refused: {phase['refused_by_code']}")
            if phase.get("to_first_request_ms", {}).get("count"):
                lines.append(
                    f"  a service's path (median / p99 ms): create answered -> the operator's first request "
                    f"{_ms(phase['to_first_request_ms'])}, -> its InferenceService applied "
                    f"{_ms(phase['first_request_to_apply_ms'])}"
                )
            if phase.get("server_ms_by_request"):
                served = ", ".join(
                    f"{k} {_ms(v)}" for k, v in phase["server_ms_by_request"].items() if v.get("count", 0) >= 5
                )
                if served:
                    lines.append(f"  the server's time per request (median / p99 ms): {served}")
    memory = results.get("memory") or []
    if memory:
        lines += ["", "RSS (MB): " + ", ".join(f"after {m['after']} {m.get('VmRSS', 0):.0f}" for m in memory)]
    lines += ["", "Targets:"]
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
    parser.add_argument("--workers", type=int, default=64, help="the operator's --workers (default 64)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating services (default 8)")
    parser.add_argument("--paced", type=int, default=50, help="services created at --rate before the burst (50)")
    parser.add_argument("--rate", type=float, default=5.0, help="paced phase: services per second (default 5)")
    parser.add_argument("--quiet-seconds", type=float, default=30.0, help="each steady phase (default 30; 0: none)")
    parser.add_argument("--no-ready", action="store_true", help="skip the ready phase (InferenceServices Ready)")
    parser.add_argument(
        "--no-audit", action="store_true", help="no audit log (no request counts): to see what the audit log costs"
    )
    parser.add_argument("--no-bare", action="store_true", help="skip the bare-client comparison")
    parser.add_argument("--profile", action="store_true", help="py-spy the operator during the burst")
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the operator's log, the audit log and the profile in this folder"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    parser.add_argument("--no-output", action="store_true", help="do not write the JSON results")
    args = parser.parse_args(argv)
    cfg = Config(
        services=args.services,
        namespaces=args.namespaces,
        workers=args.workers,
        threads=args.threads,
        paced=args.paced,
        rate=args.rate,
        quiet_seconds=args.quiet_seconds,
        ready=not args.no_ready,
        audit=not args.no_audit,
        bare=not args.no_bare,
        profile=args.profile,
    )
    signal.signal(signal.SIGTERM, _stop)
    say = lambda msg: print(f"# {msg}", file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="aim-bench-api-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        driver = Driver(cfg, workdir, say)
        try:
            results = driver.run()
        except BaseException as exc:
            if not args.no_output and driver.results:  # keep what the phases that ran measured
                driver.results["error"] = repr(exc)
                args.output.parent.mkdir(parents=True, exist_ok=True)
                args.output.write_text(json.dumps(driver.results, indent=2) + "\n")
                say(f"partial results written to {args.output}")
            raise
    print(render(results))
    if not args.no_output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
