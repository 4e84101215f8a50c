"""The separate-process benchmark against a real API server, with no proxy in the path.

    KUBEBUILDER_ASSETS=$(../shared/envtest/unpack) python benchmarks/bench_apiserver.py [--services 1000]
        [--existing 10000] [--repeats 3] [--paced 0] [--quiet-seconds 30] [--profile] [--keep DIR]

The cluster is etcd + kube-apiserver + kube-controller-manager (``aim_testing.apiserver.ControlPlane``,
1.24 from envtest). The operator runs as its own process (``aim-engine run -A``, 64 workers, its
default JSON log at info, as deployed) with a kubeconfig naming the server's HTTPS URL and CA; it
authenticates with a token of its own (``AUDITED_TOKEN``, in ``system:masters`` as the admin is) and
the server writes an audit log (level Metadata) of that user's requests only, which the driver reads
back to count them. The driver talks to the server directly over TLS too. The phases:

1. **startup**: the Ready dependencies seeded (``seed.cluster``), the operator started, a warm-up
   service until its InferenceService exists; one Running service per namespace (the driver plays
   the kubelet and KServe) to copy for the existing services; the operator stopped.
2. **bare client, before**: ``--repeats`` runs of the same three writes per service the operator's
   burst makes (create the service, apply its InferenceService, patch its status), from the same
   threads, in fresh namespaces (deleted after each run).
3. **existing** (``--existing N``): N Running services written directly, as the operator and
   KServe leave them (six writes each: service with finalizer, its status, the InferenceService
   applied with the operator's field manager, its status Ready, the predictor pod and its status).
4. **start**: the operator started over them: until its log says every object of its first
   listings has been reconciled once; requests beyond the listings and writes (none expected).
5. **paced** (``--paced``, off by default), then **burst**: N new services from ``--threads``
   threads. The window is from the first create sent to the last InferenceService seen on the
   driver's own watch; the operator's process CPU over exactly that window (read on the watch's
   thread when the last one arrives) divided by N; latency per service from its create's answer to
   its InferenceService on that watch (p50/p99); requests and writes per service from the audit
   log until the operator went quiet; RSS.
6. **steady**: ``--quiet-seconds`` with nothing changing: no writes (to the existing services
   either); **ready**: the driver plays the kubelet and KServe for the new services (pod Ready,
   then InferenceService Ready): status patches and Events per service; **steady, Ready**.
7. **restart**: the operator stopped and started over every service (all Running): as in 4.
8. **bare client, after**: ``--repeats`` runs again. The burst's wall time is compared with the
   median of all bare runs, and with the fastest and slowest.

See benchmarks/README.md for what each figure includes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import ssl
import statistics
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
WALL_VS_BARE = 1.3  # the targets (benchmarks/README.md)
BURST_P99_MS = 2000.0
CPU_MS_PER_SERVICE = 5.0
REQUESTS_PER_SERVICE = 4.0
RSS_MB = 200.0
RESTART_S = 60.0
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
    paced: int = 0  # services created at `rate` per second before the burst; 0: no paced phase
    rate: float = 5.0
    quiet_seconds: float = 30.0  # each steady phase; 0: none
    ready: bool = True  # the ready phase (the driver plays KServe)
    audit: bool = True  # count the operator's requests from the server's audit log
    settle_quiet: float = 1.0
    timeout: float = 900.0
    bare: bool = True
    repeats: int = 3  # bare-client runs before the operator's burst and again after it
    existing: int = 0  # Running services the driver writes directly before the operator starts (e.g. 10,000)
    restart: bool = True  # the restart phase: the operator stopped and started over every service
    profile: bool = False
    direct_threads: int = 16  # threads writing the existing services


class ApiServerOperator(OperatorProcess):
    """The operator process with a kubeconfig naming the server itself (its URL and CA, the audited token).

    Its log in the default format (JSON lines) at the default level (info), as deployed.
    """

    log_format = "json"

    def __init__(self, workdir: Path, plane: envtest.ControlPlane, **kw: Any) -> None:
        super().__init__(workdir, None, **kw)  # type: ignore[arg-type]
        self.plane = plane

    def kubeconfig(self) -> Path:
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(self.plane.kubeconfig_dict(envtest.AUDITED_TOKEN)))
        return path


class Completion:
    """When the last of ``keys`` was seen on a watch, and what ``probe()`` (the operator's CPU) read then."""

    def __init__(self, keys: set[tuple[str, str]], probe: Callable[[], float] | None, matched: bool) -> None:
        self.remaining, self.probe, self.matched = set(keys), probe, matched
        self.at: float | None = None
        self.probed: float | None = None
        self.done = threading.Event()

    def note(self, key: tuple[str, str], now: float) -> None:
        self.remaining.discard(key)
        if not self.remaining and not self.done.is_set():
            self.at = now
            self.probed = self.probe() if self.probe is not None else None
            self.done.set()


class Watcher:
    """A watch straight to the server: when each object was ADDED, and when ``match`` first held for it."""

    def __init__(
        self,
        plane: envtest.ControlPlane,
        path: str,
        match: Callable[[dict[str, Any]], bool] | None = None,
        *,
        from_now: bool = False,
    ) -> None:
        """``from_now``: watch from the current version without listing what exists (at 10,000 objects the
        listing takes longer than the phase needs)."""
        self.plane, self.path, self.match, self.from_now = plane, path, match, from_now
        self.seen: dict[tuple[str, str], float] = {}
        self.matched: dict[tuple[str, str], float] = {}
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-watch", daemon=True)
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._expected: list[Completion] = []

    def when_all(
        self, keys: set[tuple[str, str]], probe: Callable[[], float] | None = None, *, matched: bool = False
    ) -> Completion:
        """A :class:`Completion` that fills in when every key has been seen (or matched), on the watch's thread.

        The probe runs on the watch's thread the moment the last event is decoded: the operator's CPU
        at the end of a window is read then, not when the driver next looks.
        """
        with self._lock:
            done = Completion(keys - (self.matched if matched else self.seen).keys(), probe, matched)
            if not done.remaining:
                done.remaining.add(("", ""))  # already complete: mark it now
                done.note(("", ""), time.perf_counter())
            else:
                self._expected.append(done)
        return done

    def start(self) -> Watcher:
        self._thread.start()
        if not self._ready.wait(120):
            raise TimeoutError(f"the watch of {self.path} did not start")
        return self

    def _note(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata", {})
        key = (meta.get("namespace", ""), meta.get("name", ""))
        now = time.perf_counter()
        with self._lock:
            if kind == "ADDED" and key not in self.seen:
                self.seen[key] = now
                for done in self._expected:
                    if not done.matched:
                        done.note(key, now)
            if self.match is not None and key not in self.matched and self.match(obj):
                self.matched[key] = now
                for done in self._expected:
                    if done.matched:
                        done.note(key, now)
            if any(done.done.is_set() for done in self._expected):
                self._expected = [done for done in self._expected if not done.done.is_set()]

    def _run(self) -> None:
        client = httpx.Client(
            base_url=self.plane.url,
            verify=ssl.create_default_context(cafile=str(self.plane.ca_file)),
            timeout=httpx.Timeout(30, read=None),
            headers={"Authorization": f"Bearer {envtest.ADMIN_TOKEN}", "User-Agent": AGENT},
        )
        try:
            listed = client.get(self.path, params={"limit": "1"} if self.from_now else None).json()
            rv = listed["metadata"]["resourceVersion"]
            for item in () if self.from_now else listed.get("items") or ():
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
            wanted = seed.services(cfg.services, self.namespaces)
            try:
                self.seed()
                results["environment"]["kube_apiserver"] = self.plane.client.get("/version").json().get("gitVersion")
                self.op.start()
                results["startup"] = self.startup()
                results["environment"]["operator_pid"] = self.op.pid
                templates = self.templates([self.warm_up])  # a new service as the operator leaves it
                # one Running service per namespace (the warm-up's too): what the existing services copy
                models = [self.warm_up] + [
                    (ns, "tplsvc", inference_service_name("tplsvc", ns)) for ns in self.namespaces[1:]
                ]
                for ns, name, _ in models[1:]:
                    self.create(ns, name)
                seen = self.isvcs.when_all({(ns, isvc) for ns, _, isvc in models})
                if not seen.done.wait(cfg.timeout):
                    raise TimeoutError("the template services' InferenceServices did not appear")
                results["models_ready"] = self.ready(models)
                running = self.running_templates(models)
                self.op.stop()
                if cfg.bare:
                    results["bare_before"] = self.bare_runs(wanted, templates, "b")
                existing = [
                    (ns, f"old-{i:05d}", inference_service_name(f"old-{i:05d}", ns))
                    for i, ns in zip(range(cfg.existing), self.namespaces * cfg.existing, strict=False)
                ]
                watched = {(ns, name) for ns, name, _ in existing} | {(ns, isvc) for ns, _, isvc in existing}
                if existing:
                    results["existing"] = self.write_existing(existing, running)
                results["start"] = self.restart("start", len(existing) + len(models), watched)
                paced = [
                    (ns, f"paced-{i:04d}", inference_service_name(f"paced-{i:04d}", ns))
                    for i, ns in zip(range(cfg.paced), self.namespaces * cfg.paced, strict=False)
                ]
                if paced:
                    results["paced"] = self.paced(paced)
                results["burst"] = self.burst(wanted)
                everything = [*models, *existing, *paced, *wanted]
                if cfg.quiet_seconds:
                    results["steady"] = self.steady("steady", len(everything), watched)
                if cfg.ready:
                    results["ready"] = self.ready([*paced, *wanted])
                    if cfg.quiet_seconds:
                        results["steady_ready"] = self.steady("steady, Ready", len(everything), watched)
                if cfg.restart and cfg.ready:
                    every = {(ns, name) for ns, name, _ in everything} | {(ns, isvc) for ns, _, isvc in everything}
                    results["restart"] = self.restart("restart", len(everything), every)
            finally:
                results["operator_log"] = self.op.log_counts()
                self.op.stop()
            if cfg.bare:
                results["bare_after"] = self.bare_runs(wanted, templates, "a")
                walls = [r["wall_s"] for r in results["bare_before"] + results["bare_after"]]
                results["bare"] = {
                    "services": len(wanted),
                    "wall_s": statistics.median(walls),
                    "walls_before": [r["wall_s"] for r in results["bare_before"]],
                    "walls_after": [r["wall_s"] for r in results["bare_after"]],
                    "min_s": min(walls),
                    "max_s": max(walls),
                    "loadavg": [r["loadavg"] for r in results["bare_before"] + results["bare_after"]],
                }
                burst = results["burst"]
                burst["vs_bare"] = burst["wall_s"] / results["bare"]["wall_s"]
                burst["vs_bare_range"] = [burst["wall_s"] / max(walls), burst["wall_s"] / min(walls)]
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

    def operator_cpu(self) -> float:
        try:
            return self.op.cpu()
        except OSError:
            return 0.0

    def burst(self, wanted: list[Item], name: str = "burst") -> dict[str, Any]:
        """N new services from ``threads`` threads; the window is first create sent -> last InferenceService seen.

        ``window``: its seconds, the operator's process CPU over it (read on the watch's thread when the
        last InferenceService arrives) per service. The rest (requests, writes, CPU to settled) runs on
        until the operator went quiet: the status writes and Events that follow the last apply.
        """
        cfg = self.cfg
        self.say(f"{name}: {len(wanted)} services from {cfg.threads} threads")
        profiler = Profiler(self.op.pid, self.workdir / f"{name}.pyspy") if cfg.profile else None
        profiling = profiler.start() if profiler else False
        keys = {(ns, isvc) for ns, _, isvc in wanted}
        done = self.isvcs.when_all(keys, self.operator_cpu)
        start = self.begin()
        sent = time.perf_counter()
        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(lambda item: self.create(item[0], item[1]), wanted))
        end = self.settle(start, done.done.is_set)
        profile = profiler.stop() if profiler and profiling else None
        assert done.at is not None and done.probed is not None
        window_cpu = done.probed - start.cpu["operator"]
        out = {
            **self.measure(start, len(wanted), end=end),
            **self.latencies(wanted, start.mark),
            "window": {
                "seconds": done.at - sent,
                "operator_cpu_s": window_cpu,
                "operator_cpu_ms_per_service": window_cpu * 1e3 / max(len(wanted), 1),
            },
            "memory_mb": self.memory(name),
        }
        out["wall_s"] = out["window"]["seconds"]
        if profile is not None:
            out["profile"] = profile
        lat = out["latency_ms"]
        self.say(
            f"{name}: wall {out['wall_s']:.1f} s, median {lat.get('median', 0):.0f} ms, p99 {lat.get('p99', 0):.0f} ms, "
            f"{out.get('requests_per_service', 0):.2f} requests and {out['window']['operator_cpu_ms_per_service']:.1f} ms "
            f"CPU per service in the window ({out['operator_cpu_ms_per_service']:.1f} ms to settled)"
        )
        return out

    def steady(self, name: str, services: int, watched: set[tuple[str, str]] | None = None) -> dict[str, Any]:
        """Nothing changes for ``quiet_seconds``: what the operator sends (it must write nothing)."""
        seconds = self.cfg.quiet_seconds
        self.say(f"{name}: {seconds:g} s with {services} services and nothing changing")
        start = self.begin()
        time.sleep(seconds)
        out = {"name": name, **self.measure(start, services), "memory_mb": self.memory(name)}
        if watched is not None and self.audit is not None:
            out["writes_to_watched"] = self.writes_to(start.mark, watched)
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
        services = Watcher(self.plane, SERVICE_LIST, service_running, from_now=True).start()
        self.watches.append(services)
        written: dict[tuple[str, str], float] = {}
        start = self.begin()

        def mark_ready(item: Item) -> None:
            ns, name, isvc = item
            client = self.client()
            self.put_pod(client, ns, isvc)  # the kubelet's part first: the predictor pod, running and Ready
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
        per = out.get("by_request_per_service") or {}
        out["status_patches_per_service"] = per.get("patch aimservices/status", 0.0)
        out["events_per_service"] = per.get("create events", 0.0) + per.get("patch events", 0.0)
        services.stop()
        self.say(
            f"ready: {out['running']} services Running in {out['wall_s']:.1f} s, "
            f"{out.get('requests_per_service', 0):.2f} requests per service"
        )
        return out

    def templates(self, wanted: list[Item]) -> dict[str, Any] | None:
        """What the operator wrote for one service: the bare client sends the same bodies."""
        return bare_templates(self.kube.get, wanted)

    def bare(self, wanted: list[Item], templates: dict[str, Any] | None, tag: str = "bare") -> dict[str, Any]:
        """The same three writes per service, from the same threads, in fresh namespaces (the operator stopped).

        Timed as the burst: from the first create sent to the last InferenceService seen on the driver's
        watch. The namespaces are deleted afterwards (and waited out), so that no later phase sees them.
        """
        if templates is None:
            raise RuntimeError("no InferenceService to copy for the bare client")
        cfg = self.cfg
        spaces = {ns: f"{tag}-{ns}" for ns in self.namespaces}
        for ns in spaces.values():
            self.kube.ensure_namespace(ns)
        moved = [(spaces[ns], name, inference_service_name(name, spaces[ns])) for ns, name, _ in wanted]
        self.say(f"{tag}: the same three writes for {len(moved)} services from {cfg.threads} threads")

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

        done = self.isvcs.when_all({(ns, isvc) for ns, _, isvc in moved})
        start = self.begin()
        sent = time.perf_counter()
        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(three, moved))
        if not done.done.wait(60):
            raise TimeoutError("the bare client's InferenceServices were not all seen")
        measured = self.measure(start, len(moved))
        assert done.at is not None
        out = {
            **self.latencies(moved),
            "wall_s": done.at - sent,
            "loadavg": measured["loadavg"],
            "cpu_s": measured["cpu_s"],
            "cpu_ms_per_service": measured["cpu_ms_per_service"],
        }
        self.say(f"{tag}: {out['wall_s']:.1f} s (load {out['loadavg']})")
        self.delete_namespaces(list(spaces.values()))
        return out

    def delete_namespaces(self, names: list[str], timeout: float = 600.0) -> None:
        """Delete namespaces and wait until they are gone (kube-controller-manager empties them)."""
        client = self.kube.client
        for ns in names:
            client.delete(f"/api/v1/namespaces/{ns}")
        deadline = time.monotonic() + timeout
        for ns in names:
            while client.get(f"/api/v1/namespaces/{ns}").status_code != 404:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"namespace {ns} was not deleted")
                time.sleep(0.5)

    def bare_runs(self, wanted: list[Item], templates: dict[str, Any] | None, when: str) -> list[dict[str, Any]]:
        return [self.bare(wanted, templates, f"bare-{when}{i}") for i in range(self.cfg.repeats)]

    # ------------------------------------------------------------------ existing services, restarts

    def running_templates(self, items: list[Item]) -> dict[str, dict[str, Any]]:
        """Per namespace, what a Running service and its children look like on the server, as text to copy.

        ``items``: one service per namespace, Running (the operator made it, the driver played KServe).
        """
        out = {}
        for ns, name, isvc in items:
            svc, child = self.kube.get("aimservices", ns, name), self.kube.get("inferenceservices", ns, isvc)
            assert svc is not None and child is not None
            managers = [m for m in child["metadata"].get("managedFields") or () if m.get("operation") == "Apply"]
            meta = svc["metadata"]
            created = {
                "apiVersion": svc["apiVersion"],
                "kind": svc["kind"],
                "metadata": {
                    k: meta[k] for k in ("name", "namespace", "labels", "annotations", "finalizers") if k in meta
                },
                "spec": svc["spec"],
            }
            cmeta = child["metadata"]
            applied = {
                "apiVersion": child["apiVersion"],
                "kind": child["kind"],
                "metadata": {
                    k: cmeta[k] for k in ("name", "namespace", "labels", "annotations", "ownerReferences") if k in cmeta
                },
                "spec": child.get("spec", {}),
            }
            out[ns] = {
                "name": name,
                "isvc": isvc,
                "uid": meta["uid"],
                "manager": managers[0]["manager"] if managers else "aim-engine",
                "service": json.dumps(created),
                "status": json.dumps({"status": svc.get("status") or {}}),
                "isvc_body": json.dumps(applied),
                "isvc_status": json.dumps({"status": child.get("status") or {}}),
            }
        return out

    def write_existing(self, items: list[Item], templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Write ``items`` as the operator and KServe would have left them, Running, with the operator stopped.

        Per service: the AIMService (with the operator's finalizer), its status Running, its
        InferenceService applied with the operator's field manager, that one's status Ready, the
        predictor pod and its status Running and Ready: six writes, from ``direct_threads`` threads.
        """
        self.say(f"existing: writing {len(items)} Running services directly")
        started = time.perf_counter()

        def write(item: Item) -> None:
            ns, name, isvc = item
            tpl = templates[ns]
            client = self.client()

            def text(key: str, uid: str = "") -> bytes:
                out = tpl[key].replace(tpl["isvc"], isvc).replace(tpl["name"], name)
                return (out.replace(tpl["uid"], uid) if uid else out).encode()

            json_headers = {"Content-Type": "application/json"}
            merge = {"Content-Type": "application/merge-patch+json"}
            r = client.post(SERVICES.format(ns=ns), content=text("service"), headers=json_headers)
            r.raise_for_status()
            uid = r.json()["metadata"]["uid"]
            client.patch(
                f"{SERVICES.format(ns=ns)}/{name}/status", content=text("status"), headers=merge
            ).raise_for_status()
            r = client.patch(
                ISVC.format(ns=ns, name=isvc),
                content=text("isvc_body", uid),
                params={"fieldManager": tpl["manager"], "force": "true"},
                headers={"Content-Type": "application/apply-patch+yaml"},
            )
            if r.status_code >= 400:
                raise RuntimeError(f"apply {ns}/{isvc}: {r.status_code} {r.text[:300]}")
            client.patch(
                f"{ISVC.format(ns=ns, name=isvc)}/status", content=text("isvc_status"), headers=merge
            ).raise_for_status()
            self.put_pod(client, ns, isvc)

        with ThreadPoolExecutor(self.cfg.direct_threads) as pool:
            list(pool.map(write, items))
        seconds = time.perf_counter() - started
        self.say(f"existing: {len(items)} services written in {seconds:.0f} s")
        return {"services": len(items), "seconds": seconds, "loadavg": round(loadavg(), 1)}

    def put_pod(self, client: httpx.Client, ns: str, isvc: str) -> None:
        """The kubelet's part: the predictor pod, running and Ready."""
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

    def restart(self, name: str, services: int, watched: set[tuple[str, str]] | None = None) -> dict[str, Any]:
        """Stop the operator (if running) and start it: until it has listed and reconciled every object once.

        ``ready_s``: from starting the process to its log line saying every object of its first
        listings has been reconciled once. Requests beyond the listings (``list`` and watches left
        out) and writes are counted from the start until the operator went quiet; ``writes_to``:
        writes to ``watched`` services (and their InferenceServices) among them.
        """
        self.op.stop()
        self.say(f"{name}: starting the operator over {services} services")
        start = self.begin()
        started = time.perf_counter()
        self.op.start()
        deadline = time.monotonic() + self.cfg.timeout
        line = ""
        while True:
            self.op.check()
            found = [x for x in self.op.new_log().splitlines() if "reconciled once" in x]
            if found:
                line = found[0]
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not report its first pass")
            time.sleep(0.02)
        ready = time.perf_counter()
        cpu_ready = self.operator_cpu()
        end = self.settle(start, lambda: True)
        if self.audit is not None:
            # kopf lists the CRDs once after its login, a moment after the engine's listings: part of the
            # start, not of a burst that follows it (on a small cluster the first pass is done before it)
            audit, until = self.audit, time.monotonic() + 10
            while time.monotonic() < until and not any(
                c.verb == "list" and (c.resource or "").endswith("customresourcedefinitions")
                for c in audit.calls[start.mark :]
            ):
                time.sleep(0.05)
                audit.poll()
        out = {
            "name": name,
            **self.measure(start, services, end=end),
            "ready_s": ready - started,
            "operator_cpu_to_ready_s": cpu_ready,
            "log": line.strip()[-200:],
            "memory_mb": self.memory(name),
        }
        if self.audit is not None:
            calls = [c for c in self.audit.calls[start.mark :] if c.verb not in WATCH_OR_DISCOVERY]
            beyond = [c for c in calls if c.verb != "list"]
            out["lists"] = len(calls) - len(beyond)
            # the start-up check that the CRDs are installed and Established: one GET per CRD, whatever N
            out["crd_checks"] = sum(1 for c in beyond if (c.resource or "").endswith("customresourcedefinitions"))
            out["requests_beyond_listings"] = len(beyond)
            out["requests_beyond_listings_per_service"] = len(beyond) / max(services, 1)
            if watched is not None:
                out["writes_to_watched"] = self.writes_to(start.mark, watched)
        self.say(
            f"{name}: ready in {out['ready_s']:.1f} s, {out.get('requests_beyond_listings', 0)} requests beyond "
            f"{out.get('lists', 0)} lists, {out.get('writes', 0)} writes"
        )
        return out

    def writes_to(self, mark: int, watched: set[tuple[str, str]]) -> int:
        """Writes since ``mark`` to the (namespace, name)s in ``watched`` (services and InferenceServices)."""
        assert self.audit is not None
        self.audit.poll()
        return sum(
            1
            for c in self.audit.calls[mark:]
            if c.verb not in READ_VERBS
            and c.verb not in WATCH_OR_DISCOVERY
            and (c.namespace or "", c.name or "") in watched
        )


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    burst = results["burst"]
    targets: list[dict[str, Any]] = []

    def target(name: str, limit: float, measured: Any, met: bool) -> None:
        targets.append({"target": name, "limit": limit, "measured": measured, "met": met})

    p99 = burst["latency_ms"].get("p99")
    target("burst p99 create -> InferenceService (ms)", BURST_P99_MS, p99, (p99 or 0) < BURST_P99_MS)
    if burst.get("vs_bare") is not None:
        target("burst wall / bare client's (median)", WALL_VS_BARE, burst["vs_bare"], burst["vs_bare"] <= WALL_VS_BARE)
    cpu = burst["window"]["operator_cpu_ms_per_service"]
    target("operator CPU per new service in the window (ms)", CPU_MS_PER_SERVICE, cpu, cpu <= CPU_MS_PER_SERVICE)
    if "requests_per_service" in burst:
        rq = burst["requests_per_service"]
        target("operator requests per new service", REQUESTS_PER_SERVICE, rq, rq <= REQUESTS_PER_SERVICE)
    rss = max((m.get("VmRSS", 0.0) for m in results.get("memory") or ()), default=0.0)
    target("operator RSS, largest reading (MB)", RSS_MB, rss, rss < RSS_MB)
    for key in ("steady", "steady_ready"):
        if key in results and "writes" in results[key]:
            writes = results[key]["writes"]
            target(f"{results[key]['name']}: operator writes", 0, writes, writes == 0)
    ready = results.get("ready")
    if ready and "status_patches_per_service" in ready:
        for what in ("status_patches_per_service", "events_per_service"):
            target(f"going Ready: {what.replace('_', ' ')}", 1, ready[what], ready[what] <= 1.0)
    for key in ("start", "restart"):
        phase = results.get(key)
        if not phase:
            continue
        target(
            f"{key}: seconds until every service was reconciled once",
            RESTART_S,
            phase["ready_s"],
            phase["ready_s"] < RESTART_S,
        )
        if "writes" in phase:
            # (an artifact's status may change: services that use it appeared while the operator was stopped)
            writes = phase.get("writes_to_watched", phase["writes"])
            target(f"{key}: operator writes to the services and their InferenceServices", 0, writes, writes == 0)
            # the start-up GET of each CRD is one request whatever N: not a request per service
            per = (phase["requests_beyond_listings"] - phase.get("crd_checks", 0)) / max(phase["services"], 1)
            target(f"{key}: requests per service beyond the listings and the CRD checks", 1, per, per <= 1.0)
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
    ("start", "start over the existing services"),
    ("paced", "paced"),
    ("burst", "burst"),
    ("steady", "steady"),
    ("ready", "ready"),
    ("steady_ready", "steady, Ready"),
    ("restart", "restart"),
)


def render(results: dict[str, Any]) -> str:
    cfg, env = results["config"], results["environment"]
    burst = results["burst"]
    audited = cfg.get("audit", True)
    lines = [
        f"# operator vs kube-apiserver {env.get('kube_apiserver', '?')}: {burst['services']} services "
        f"(commit {env.get('commit')}, load average {env.get('loadavg_start')} -> {env.get('loadavg_end')}; "
        f"paced {cfg['paced']} at {cfg['rate']:g}/s; steady {cfg['quiet_seconds']:g} s; "
        f"requests from the audit log: {'on' if audited else 'off'}; existing services {cfg.get('existing', 0)})",
        "",
    ]
    window, bare = burst.get("window") or {}, results.get("bare")
    lines += [
        f"burst, first create sent -> last InferenceService seen: {_f(window.get('seconds'), 2)} s; operator CPU "
        f"over that window {_f(window.get('operator_cpu_s'), 2)} s = {_f(window.get('operator_cpu_ms_per_service'), 2)} "
        f"ms per service ({_f(burst.get('operator_cpu_ms_per_service'), 2)} ms until settled)",
    ]
    if bare:
        lines.append(
            f"bare client, same three writes, same threads: median {bare['wall_s']:.2f} s of "
            f"{len(bare['walls_before']) + len(bare['walls_after'])} runs (before: "
            + ", ".join(f"{w:.2f}" for w in bare["walls_before"])
            + "; after: "
            + ", ".join(f"{w:.2f}" for w in bare["walls_after"])
            + f" s; load {bare['loadavg']}); burst / bare {burst['vs_bare']:.2f}x "
            f"(against the slowest and fastest run {burst['vs_bare_range'][0]:.2f}-{burst['vs_bare_range'][1]:.2f}x)"
        )
    for key in ("start", "restart"):
        phase = results.get(key)
        if phase:
            lines.append(
                f"{key}: {phase['services']} services, every one reconciled once {phase['ready_s']:.1f} s after the "
                f"process started ({phase.get('log', '')}); {phase.get('lists', '-')} lists, "
                f"{phase.get('requests_beyond_listings', '-')} other requests ({phase.get('crd_checks', '-')} of them "
                f"the start-up GETs of the CRDs), {phase.get('writes', '-')} writes "
                f"({phase.get('writes_to_watched', '-')} to the services and InferenceServices); "
                f"operator CPU {phase['operator_cpu_to_ready_s']:.1f} s to then"
            )
    for key in ("steady", "steady_ready"):
        phase = results.get(key)
        if phase and "writes_to_watched" in phase:
            lines.append(f"{phase['name']}: {phase['writes_to_watched']} writes to the existing services")
    ready = results.get("ready")
    if ready and "status_patches_per_service" in ready:
        lines.append(
            f"going Ready: {ready['status_patches_per_service']:.2f} status patches and "
            f"{ready['events_per_service']:.2f} Events per service"
        )
    if results.get("existing"):
        ex = results["existing"]
        lines.append(f"existing: {ex['services']} Running services written directly in {ex['seconds']:.0f} s")
    lines += [
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
    parser.add_argument("--paced", type=int, default=0, help="services created at --rate before the burst (0)")
    parser.add_argument("--rate", type=float, default=5.0, help="paced phase: services per second (default 5)")
    parser.add_argument("--quiet-seconds", type=float, default=30.0, help="each steady phase (default 30; 0: none)")
    parser.add_argument("--no-ready", action="store_true", help="skip the ready phase (InferenceServices Ready)")
    parser.add_argument(
        "--no-audit", action="store_true", help="no audit log (no request counts): to see what the audit log costs"
    )
    parser.add_argument("--no-bare", action="store_true", help="skip the bare-client comparison")
    parser.add_argument(
        "--repeats", type=int, default=3, help="bare-client runs before the operator's burst and again after (3)"
    )
    parser.add_argument(
        "--existing", type=int, default=0, help="Running services written directly before the operator starts (0)"
    )
    parser.add_argument("--no-restart", action="store_true", help="skip the restart phase")
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
        bare=not args.no_bare and args.repeats > 0,
        repeats=max(args.repeats, 1),
        existing=args.existing,
        restart=not args.no_restart,
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
