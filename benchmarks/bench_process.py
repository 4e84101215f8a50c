"""Benchmark with the API emulator and the operator in processes of their own (issue 9's table).

    python benchmarks/bench_process.py [--services 1000] [--quick] [--rate R] [--profile]

Three processes: the emulator (``emulator_process.py``, serving TLS on
127.0.0.1 by default), the operator as deployed (``aim-engine run -A`` with a
kubeconfig naming the emulator) and this driver. The driver seeds the Ready
dependencies (as ``bench_services.py``), then:

1. **paced**: creates services one at a time, each after the previous one's
   InferenceService appeared (the path of one service, nothing else going on);
2. **burst**: creates N AIMServices from 8 client threads at once (or ``--rate``
   per second), waits for every InferenceService and for the operator to go
   quiet;
3. **quiet**: waits ``--quiet-seconds`` (60 s; 5 s with ``--quick``) with every
   InferenceService not Ready and counts the operator's requests;
4. **memory**: reads the operator's RSS, then stores clones of the services (with
   their InferenceServices) directly in the emulator until ``--rss-objects`` AIM
   objects exist, waits for the operator to take them in, reads it again; then
   restarts the operator (it lists them all, in pages, and reconciles every
   service once), waits until it is ready and idle, reads it a third time;
5. **bare client**: against a fresh emulator process, 8 threads send the same
   three writes per service as the operator causes (create the service, apply
   its InferenceService, write its status), for the wall-time comparison.

``--big-cluster`` runs another sequence (issue 18): the cluster also holds
1,000 Helm release Secrets of 100 KiB and 2,000 Pods of other workloads before
the operator starts; startup, a burst of 100 services and a restart, with the
operator's peak RSS (VmHWM), CPU and requests.

Latency and wall time are stamped inside the emulator (first stored). CPU comes
from ``/proc/<pid>/stat`` of each process. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import signal
import ssl
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from aim_core.api.crds import generate_crds  # noqa: E402
from aim_core.reconcile.naming import inference_service_name  # noqa: E402
from aim_testing.emulator import READ_VERBS  # noqa: E402
from benchmarks import seed  # noqa: E402
from benchmarks.bench_services import _environment  # noqa: E402
from benchmarks.process_report import check_targets, render, render_big_cluster  # noqa: E402
from benchmarks.processes import EmulatorProcess, OperatorProcess, Profiler, by_request, loadavg, operator_calls  # noqa: E402
from benchmarks.report import summary  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "process.json"
SERVICES = "/apis/aim.eai.amd.com/v1alpha1/namespaces/{ns}/aimservices"
ISVC = "/apis/serving.kserve.io/v1beta1/namespaces/{ns}/inferenceservices/{name}"
AGENT = "bench-driver"
BIG_CLUSTER_PEAK_MIB = 250 * 1000 * 1000 / 2**20  # issue 18: peak RSS under 250 MB in the big cluster


@attrs.frozen
class Config:
    services: int = 1000
    namespaces: int = 10
    nodes: int = 4
    workers: int = 64  # the operator's default
    threads: int = 8  # client threads creating services
    rate: float = 0.0  # services per second in the burst phase; 0: all at once
    paced: int = 50  # services created one at a time
    quiet_seconds: float = 60.0
    rss_objects: int = 10_000  # AIM objects in the store for the second memory reading; 0: skip
    rss_restart: bool = True  # a third reading: the operator restarted with them all (lists them in pages)
    tls: bool = True
    write_latency_ms: float = 0.0  # every write waits this long in the emulator (a real server's etcd commit)
    bare: bool = True
    profile: bool = False
    settle_quiet: float = 1.0  # no operator write for this long: settled
    timeout: float = 900.0
    # --big-cluster: a cluster that also holds other workloads' Secrets (Helm releases) and Pods
    unrelated_secrets: int = 0
    unrelated_secret_kib: int = 100
    unrelated_pods: int = 0

    @property
    def big_cluster(self) -> bool:
        return bool(self.unrelated_secrets or self.unrelated_pods)


class Driver:
    def __init__(self, cfg: Config, workdir: Path, say: Any = print) -> None:
        self.cfg, self.workdir, self.say = cfg, workdir, say
        self.namespaces = seed.namespace_names(cfg.namespaces)
        self.em = EmulatorProcess(workdir / "emulator", tls=cfg.tls, write_latency_ms=cfg.write_latency_ms)
        self.op = OperatorProcess(workdir, self.em, workers=cfg.workers)
        self.local = threading.local()
        self.results: dict[str, Any] = {}  # filled phase by phase: what a failed run got to

    # ------------------------------------------------------------------ plumbing

    def client(self, em: EmulatorProcess) -> httpx.Client:
        """One keep-alive client per thread, trusting the emulator's CA."""
        cached = getattr(self.local, "clients", None)
        if cached is None:
            cached = self.local.clients = {}
        if em.url not in cached:
            verify = ssl.create_default_context(cafile=em.ca) if em.ca else False
            cached[em.url] = httpx.Client(base_url=em.url, verify=verify, timeout=60, headers={"User-Agent": AGENT})
        return cached[em.url]

    def settle(self, *, since: int, until: Any = None, quiet: float | None = None) -> float:
        """Wait until ``until()`` holds and the operator wrote nothing for ``settle_quiet`` s; return that time."""
        deadline = time.monotonic() + self.cfg.timeout
        last_write = time.perf_counter()
        while True:
            self.op.check()
            self.em.poll()
            for call, t in self.em.log[since:]:
                if (
                    call.user_agent.startswith(("aim-engine", "kopf"))
                    and call.verb not in READ_VERBS
                    and call.verb != "discovery"
                ):
                    last_write = max(last_write, t)
            since = len(self.em.log)
            now = time.perf_counter()
            if (until is None or until()) and now - last_write >= (quiet or self.cfg.settle_quiet):
                return now
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not settle")
            time.sleep(0.1)

    def cpu_idle(self, window: float = 2.0, busy: float = 0.25, limit: float = 300.0) -> tuple[float, bool]:
        """Wait until the operator used less than ``busy`` of a core over ``window`` seconds (at most ``limit``).

        Not 0: an operator that polls (e.g. Event LISTs for not-Ready InferenceServices) is never idle.
        Returns when, and whether it got there.
        """
        deadline = time.monotonic() + limit
        last = self.op.cpu()
        while time.monotonic() < deadline:
            time.sleep(window)
            self.op.check()
            now = self.op.cpu()
            if now - last < busy * window:
                return time.perf_counter() - window, True
            last = now
        return time.perf_counter(), False

    def usage(self) -> tuple[float, float, float]:
        return time.perf_counter(), self.op.cpu(), self.em.cpu()

    def phase(
        self, mark: int, before: tuple[float, float, float], services: int, *, end: float | None = None
    ) -> dict[str, Any]:
        now = self.usage()
        calls = operator_calls(self.em.calls_since(mark))
        writes = [c for c in calls if c.verb not in READ_VERBS]
        cpu_op, cpu_em = now[1] - before[1], now[2] - before[2]
        per = max(services, 1)
        return {
            "services": services,
            "seconds": (end or now[0]) - before[0],
            "loadavg": round(loadavg(), 1),
            "operator_cpu_s": cpu_op,
            "emulator_cpu_s": cpu_em,
            "operator_cpu_ms_per_service": cpu_op * 1e3 / per,
            "emulator_cpu_ms_per_service": cpu_em * 1e3 / per,
            "requests": len(calls),
            "writes": len(writes),
            "requests_per_service": len(calls) / per,
            "writes_per_service": len(writes) / per,
            "by_request_per_service": {k: v / per for k, v in by_request(calls).items()},
        }

    # ------------------------------------------------------------------ phases

    def run(self) -> dict[str, Any]:
        if self.cfg.big_cluster:
            return self.run_big_cluster()
        cfg = self.cfg
        results = self.results
        results.update(config=attrs.asdict(cfg), environment=_environment())
        results["environment"]["loadavg_start"] = round(loadavg(), 1)
        self.em.start()
        try:
            self.em.put(installed_crds() + seed.cluster(self.namespaces, nodes=cfg.nodes))
            self.op.start()
            results["startup"] = self.startup()
            results["environment"]["emulator_pid"], results["environment"]["operator_pid"] = self.em.pid, self.op.pid
            wanted = seed.services(cfg.services, self.namespaces)
            paced = [
                (ns, f"paced-{i:04d}", inference_service_name(f"paced-{i:04d}", ns))
                for i, ns in zip(range(cfg.paced), self.namespaces * cfg.paced)
            ]
            results["paced"] = self.one_at_a_time(paced)  # first: the path of one service, nothing else going on
            results["burst"] = self.burst(wanted)
            results["quiet"] = self.quiet(len(wanted) + len(paced))
            results["memory"] = self.memory(wanted + paced)
            templates = self.templates(wanted)
        finally:
            results["operator_log"] = self.op.log_counts()
            self.op.stop()
            self.em.stop()
        if cfg.bare:
            results["bare"] = self.bare(wanted, templates)
            results["burst"]["vs_bare"] = (
                results["burst"]["wall_s"] / results["bare"]["wall_s"] if results["bare"]["wall_s"] else None
            )
        results["environment"]["loadavg_end"] = round(loadavg(), 1)
        results["targets"] = check_targets(results)
        return results

    def run_big_cluster(self) -> dict[str, Any]:
        """The operator in a cluster that also holds other workloads' Secrets and Pods (issue 18).

        Seeded before the operator starts: its start lists them (or, selected on the
        server, does not); then a burst of services; then a restart in that cluster.
        Memory is VmHWM (the peak) and VmRSS after each phase.
        """
        cfg, results = self.cfg, self.results
        results.update(config=attrs.asdict(cfg), environment=_environment())
        results["environment"]["loadavg_start"] = round(loadavg(), 1)
        self.em.start()
        try:
            self.em.put(installed_crds() + seed.cluster(self.namespaces, nodes=cfg.nodes))
            self.em.put([seed.namespace("apps")])
            self.em.put(seed.unrelated_secrets(cfg.unrelated_secrets, cfg.unrelated_secret_kib * 1024), chunk=20)
            self.em.put(seed.unrelated_pods(cfg.unrelated_pods), chunk=200)
            self.say(
                f"big cluster: {cfg.unrelated_secrets} Secrets of {cfg.unrelated_secret_kib} KiB and "
                f"{cfg.unrelated_pods} Pods of other workloads seeded"
            )
            self.op.start()
            results["startup"] = self.startup()
            results["environment"]["emulator_pid"], results["environment"]["operator_pid"] = self.em.pid, self.op.pid
            wanted = seed.services(cfg.services, self.namespaces)
            results["burst"] = self.burst(wanted)
            results["memory"] = [{"aim_services": len(wanted) + 1, **self.op.memory()}]
            if cfg.rss_restart:
                results["memory"].append({"aim_services": len(wanted) + 1, "restarted": True, **self.restarted()})
        finally:
            results["operator_log"] = self.op.log_counts()
            self.op.stop()
            self.em.stop()
        results["environment"]["loadavg_end"] = round(loadavg(), 1)
        peak = max(m.get("VmHWM", 0.0) for m in results["memory"] + [results["startup"]["memory_mb"]])
        results["targets"] = [
            {
                "target": "peak RSS in the big cluster (MiB)",
                "limit": BIG_CLUSTER_PEAK_MIB,
                "measured": peak,
                "met": peak <= BIG_CLUSTER_PEAK_MIB,
            }
        ]
        return results

    def startup(self) -> dict[str, Any]:
        before, mark = self.usage(), self.em.mark()

        # A warm-up service: once its InferenceService exists the engine runs with a filled store
        # (it reconciles only after the first full listing) and the seeded objects were reconciled.
        ns, name = self.namespaces[0], "warm-up"
        isvc = inference_service_name(name, ns)
        deadline = time.monotonic() + self.cfg.timeout
        created = False
        while (ns, isvc) not in self.em.stored("inferenceservices"):
            self.op.check()
            if not created and self.em.get("namespaces", None, ns) is not None:
                self._create(self.em, ns, name)
                created = True
            if time.monotonic() > deadline:
                raise TimeoutError("the operator did not start")
            time.sleep(0.1)
        self.settle(since=mark, quiet=max(2.0, self.cfg.settle_quiet))
        out = self.phase(mark, before, 0)
        out["memory_mb"] = self.op.memory()
        self.say(f"operator started and settled in {out['seconds']:.1f} s")
        return out

    def _create(self, em: EmulatorProcess, ns: str, name: str) -> None:
        self.client(em).post(SERVICES.format(ns=ns), json=seed.service(name, ns)).raise_for_status()

    def _all_stored(self, wanted: list[tuple[str, str, str]]) -> Any:
        keys = {(ns, isvc) for ns, _, isvc in wanted}

        def check() -> bool:
            missing = keys - self.em.stored("inferenceservices").keys()
            return not missing

        return check

    def latencies(self, em: EmulatorProcess, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
        svcs, isvcs = em.stored("aimservices"), em.stored("inferenceservices")
        samples, first, last = [], float("inf"), 0.0
        for ns, name, isvc in wanted:
            t0, t1 = svcs.get((ns, name)), isvcs.get((ns, isvc))
            if t0 is None or t1 is None:
                continue
            samples.append((t1 - t0) * 1e3)
            first, last = min(first, t0), max(last, t1)
        wall = last - first if samples else 0.0
        return {
            "latency_ms": summary(samples),
            "wall_s": wall,
            "applied": len(samples),
            "per_second": len(samples) / wall if wall else 0.0,
        }

    def burst(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
        cfg = self.cfg
        mode = f"{cfg.rate}/s" if cfg.rate else f"at once from {cfg.threads} threads"
        self.say(f"burst: creating {len(wanted)} services {mode}")
        profiler = Profiler(self.op.pid, self.workdir / "profile.txt") if cfg.profile else None
        if profiler is not None and not profiler.start():
            self.say("py-spy could not attach; no profile")
            profiler = None
        before, mark = self.usage(), self.em.mark()
        begin = time.monotonic()

        def create(item: tuple[int, tuple[str, str, str]]) -> None:
            i, (ns, name, _) = item
            if cfg.rate:
                time.sleep(max(0.0, begin + i / cfg.rate - time.monotonic()))
            self._create(self.em, ns, name)

        with ThreadPoolExecutor(cfg.threads) as pool:
            list(pool.map(create, enumerate(wanted)))
        end = self.settle(since=mark, until=self._all_stored(wanted))
        out = self.phase(mark, before, len(wanted), end=end)
        out.update(self.latencies(self.em, wanted))
        out["memory_mb"] = self.op.memory()
        if profiler is not None:
            out["profile"] = profiler.stop()
        self.say(
            f"burst: {out['applied']} InferenceServices in {out['wall_s']:.1f} s, p99 "
            f"{out['latency_ms'].get('p99', 0):.0f} ms, {out['operator_cpu_ms_per_service']:.1f} ms operator "
            f"CPU and {out['requests_per_service']:.2f} requests per service"
        )
        return out

    def one_at_a_time(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any]:
        self.say(f"paced: creating {len(wanted)} services one at a time")
        before, mark = self.usage(), self.em.mark()
        for ns, name, isvc in wanted:
            self._create(self.em, ns, name)
            deadline = time.monotonic() + 60
            while (ns, isvc) not in self.em.stored("inferenceservices"):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no InferenceService for {ns}/{name}")
                time.sleep(0.005)
            time.sleep(0.05)  # let its status write and the InferenceService's watch event pass
        end = self.settle(since=mark)
        out = self.phase(mark, before, len(wanted), end=end)
        out.update(self.latencies(self.em, wanted))
        self.say(
            f"paced: median {out['latency_ms'].get('median', 0):.1f} ms, p99 {out['latency_ms'].get('p99', 0):.1f} ms"
        )
        return out

    def quiet(self, services: int) -> dict[str, Any]:
        seconds = self.cfg.quiet_seconds
        self.say(f"quiet: {seconds:.0f} s with {services} services whose InferenceService is not Ready")
        before, mark = self.usage(), self.em.mark()
        time.sleep(seconds)
        everything = self.em.calls_since(mark)
        calls = operator_calls(everything)
        watches = [c for c in everything if c.verb == "watch" and c.user_agent.startswith(("aim-engine", "kopf"))]
        writes = [c for c in calls if c.verb not in READ_VERBS]
        scale = 60.0 / seconds
        now = self.usage()
        return {
            "seconds": seconds,
            "services": services,
            "loadavg": round(loadavg(), 1),
            "requests_per_minute": len(calls) * scale,
            "writes_per_minute": len(writes) * scale,
            "watch_requests_per_minute": len(watches) * scale,
            "by_request_per_minute": {k: v * scale for k, v in by_request(calls).items()},
            "operator_cpu_s_per_minute": (now[1] - before[1]) * scale,
        }

    def memory(self, wanted: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
        readings = [{"aim_services": len(wanted), **self.op.memory()}]
        target = self.cfg.rss_objects
        if target <= len(wanted):
            return readings
        extra = target - len(wanted)
        self.say(f"memory: storing {extra} more services with their InferenceServices in the emulator")
        objects = self.clones(wanted, extra)
        before, mark = self.usage(), self.em.mark()
        self.em.put(objects)
        # Taken in without writes (they are copies of settled services): wait until every watch event went
        # out, then until the operator's CPU drops.
        deadline = time.monotonic() + self.cfg.timeout
        while self.em.backlog() and time.monotonic() < deadline:
            self.op.check()
            time.sleep(0.5)
        end, idle = self.cpu_idle()
        phase = self.phase(mark, before, extra, end=end)
        phase["went_idle"] = idle
        readings.append({"aim_services": target, **self.op.memory(), "take_in": phase})
        if self.cfg.rss_restart:
            readings.append({"aim_services": target, "restarted": True, **self.restarted()})
        return readings

    def restarted(self) -> dict[str, Any]:
        """Restart the operator with every object in the cluster: it lists them and reconciles each once."""
        self.results["operator_log_before_restart"] = self.op.log_counts()
        self.op.stop()
        start = time.perf_counter()
        self.op.start()
        deadline, ready = time.monotonic() + self.cfg.timeout, False
        while not ready and time.monotonic() < deadline:  # /readyz: every stream has listed
            self.op.check()
            time.sleep(0.5)
            # this run's lines only: the restart appends to the log, whose first lines name the old port
            found = re.search(r"/readyz on (\S+)", self.op.new_log())
            if found:
                try:
                    ready = httpx.get(f"http://{found[1]}/readyz", timeout=5).status_code == 200
                except httpx.HTTPError:
                    pass
        if not ready:
            raise TimeoutError(f"the restarted operator was not ready within {self.cfg.timeout} s")
        listed = time.perf_counter() - start
        _end, idle = self.cpu_idle(window=5.0)
        return {**self.op.memory(), "listed_s": listed, "went_idle": idle}

    def clones(self, wanted: list[tuple[str, str, str]], count: int) -> list[dict[str, Any]]:
        """Copies of one settled service (and its InferenceService) per namespace, as the operator left them."""
        sources: dict[str, tuple[str, str, str, str, str]] = {}  # ns -> name, isvc, uid, both bodies
        for ns, name, isvc in wanted:
            if ns not in sources:
                svc = self.em.get("aimservices", ns, name)
                isvc_obj = self.em.get("inferenceservices", ns, isvc)
                if svc is not None and isvc_obj is not None:
                    sources[ns] = (
                        name,
                        isvc,
                        svc["metadata"]["uid"],
                        json.dumps(_stored_to_seed(svc)),
                        json.dumps(_stored_to_seed(isvc_obj)),
                    )
        objects: list[dict[str, Any]] = []
        spaces = sorted(sources)
        for i in range(count):
            ns = spaces[i % len(spaces)]
            name, isvc, uid, svc_text, isvc_text = sources[ns]
            new_name, new_uid = f"rss-{i:05d}", str(uuid.uuid4())
            new_isvc = inference_service_name(new_name, ns)
            for text in (svc_text, isvc_text):
                text = text.replace(isvc, new_isvc).replace(uid, new_uid).replace(f'"{name}"', f'"{new_name}"')
                objects.append(json.loads(text))
        return objects

    def templates(self, wanted: list[tuple[str, str, str]]) -> dict[str, Any] | None:
        """What the operator wrote for one service: the bare client sends the same bodies."""
        return bare_templates(self.em.get, wanted)

    def bare(self, wanted: list[tuple[str, str, str]], templates: dict[str, Any] | None) -> dict[str, Any]:
        """The same three writes per service from a bare client against a fresh emulator process."""
        cfg = self.cfg
        self.say(f"bare client: the same three writes for {len(wanted)} services from {cfg.threads} threads")
        em = EmulatorProcess(self.workdir / "emulator-bare", tls=cfg.tls, write_latency_ms=cfg.write_latency_ms)
        em.start()
        try:
            em.put([seed.namespace(ns) for ns in self.namespaces])
            before_cpu = em.cpu()
            manager = "aim-engine"

            def three(item: tuple[str, str, str]) -> None:
                ns, name, isvc = item
                client = self.client(em)
                r = client.post(SERVICES.format(ns=ns), json=seed.service(name, ns))
                r.raise_for_status()
                if templates is None:
                    return
                uid = r.json()["metadata"]["uid"]
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
                    params={"fieldManager": manager, "force": "true"},
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
                list(pool.map(three, wanted))
            out = self.latencies(em, wanted)
            out["emulator_cpu_ms_per_service"] = (em.cpu() - before_cpu) * 1e3 / max(len(wanted), 1)
            out["loadavg"] = round(loadavg(), 1)
        finally:
            em.stop()
        self.say(f"bare client: {out['wall_s']:.1f} s")
        return out


def bare_templates(get: Any, wanted: list[tuple[str, str, str]]) -> dict[str, Any] | None:
    """What the operator wrote for the first service (``get(resource, ns, name)`` reads it): the bare client's bodies."""
    ns, name, isvc = wanted[0]
    svc, isvc_obj = get("aimservices", ns, name), get("inferenceservices", ns, isvc)
    if svc is None or isvc_obj is None:
        return None
    meta = isvc_obj["metadata"]
    applied = {
        "apiVersion": isvc_obj["apiVersion"],
        "kind": isvc_obj["kind"],
        "metadata": {
            k: meta[k] for k in ("name", "namespace", "labels", "annotations", "ownerReferences") if k in meta
        },
        "spec": isvc_obj.get("spec", {}),
    }
    return {
        "name": name,
        "namespace": ns,
        "isvc": isvc,
        "uid": svc["metadata"]["uid"],
        "isvc_body": json.dumps(applied),
        "status": json.dumps({"status": svc.get("status", {})}),
    }


def installed_crds() -> list[dict[str, Any]]:
    """The AIM CRDs as a cluster holds them: Established (the operator's /readyz reads them)."""
    crds = generate_crds()
    for crd in crds:
        crd["status"] = {
            "conditions": [
                {
                    "type": "Established",
                    "status": "True",
                    "reason": "InitialNamesAccepted",
                    "lastTransitionTime": seed.T0,
                }
            ],
            "acceptedNames": crd["spec"]["names"],
            "storedVersions": ["v1alpha1"],
        }
    return crds


def _stored_to_seed(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    for key in ("resourceVersion", "creationTimestamp"):  # the uid stays: owner references name it
        obj["metadata"].pop(key, None)
    return obj


def run_benchmark(cfg: Config, workdir: Path | None = None, say: Any = print) -> dict[str, Any]:
    if workdir is not None:
        return Driver(cfg, workdir, say).run()
    with tempfile.TemporaryDirectory(prefix="aim-bench-") as tmp:
        return Driver(cfg, Path(tmp), say).run()


def _stop(signum: int, _frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")  # unwind, so the child processes are stopped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--services", type=int, default=None, help="services in the burst (default 1000)")
    parser.add_argument("--namespaces", type=int, default=None, help="namespaces (default 10)")
    parser.add_argument(
        "--quick", action="store_true", help="50 services, 5 paced, 5 s quiet, 500 objects for the second RSS reading"
    )
    parser.add_argument("--workers", type=int, default=64, help="the operator's --workers (default 64, its default)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating services (default 8)")
    parser.add_argument("--rate", type=float, default=0.0, help="burst phase: N services per second instead")
    parser.add_argument("--paced", type=int, default=None, help="services created one at a time (default 50)")
    parser.add_argument("--quiet-seconds", type=float, default=None, help="length of the quiet period (60)")
    parser.add_argument("--rss-objects", type=int, default=None, help="AIM objects for the second RSS reading")
    parser.add_argument(
        "--no-restart", action="store_true", help="no third RSS reading (the operator restarted with the most objects)"
    )
    parser.add_argument(
        "--big-cluster",
        action="store_true",
        help="a cluster that also holds 1,000 Helm release Secrets of 100 KiB and 2,000 Pods of other "
        "workloads: startup, a burst (default 100 services) and a restart, with peak RSS and CPU",
    )
    parser.add_argument("--unrelated-secrets", type=int, default=None, help="with --big-cluster (default 1000)")
    parser.add_argument("--unrelated-pods", type=int, default=None, help="with --big-cluster (default 2000)")
    parser.add_argument("--plain", action="store_true", help="plain HTTP instead of TLS to the emulator")
    parser.add_argument(
        "--write-latency-ms",
        type=float,
        default=0.0,
        help="every write waits this long in the emulator before it is served, as a real API "
        "server waits for etcd; costs the emulator no CPU (default 0)",
    )
    parser.add_argument("--no-bare", action="store_true", help="skip the bare-client comparison")
    parser.add_argument("--profile", action="store_true", help="py-spy the operator during the burst")
    parser.add_argument("--keep", type=Path, default=None, help="keep logs, kubeconfig and profile in this folder")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"JSON results (default {RESULTS})")
    parser.add_argument("--no-output", action="store_true", help="do not write the JSON results")
    args = parser.parse_args(argv)
    big = args.big_cluster
    cfg = Config(
        services=args.services or (50 if args.quick else 100 if big else 1000),
        namespaces=args.namespaces or (5 if args.quick else 10),
        workers=args.workers,
        threads=args.threads,
        rate=args.rate,
        paced=args.paced if args.paced is not None else (5 if args.quick else 50),
        quiet_seconds=args.quiet_seconds or (5.0 if args.quick else 60.0),
        rss_objects=args.rss_objects if args.rss_objects is not None else (500 if args.quick else 10_000),
        rss_restart=not args.no_restart,
        tls=not args.plain,
        write_latency_ms=args.write_latency_ms,
        bare=not args.no_bare,
        profile=args.profile,
        settle_quiet=0.5 if args.quick else 1.0,
        unrelated_secrets=(args.unrelated_secrets if args.unrelated_secrets is not None else 1000) if big else 0,
        unrelated_pods=(args.unrelated_pods if args.unrelated_pods is not None else 2000) if big else 0,
    )
    signal.signal(signal.SIGTERM, _stop)
    say = lambda msg: print(f"# {msg}", file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="aim-bench-") as tmp:
        driver = Driver(cfg, args.keep or Path(tmp), say)
        try:
            results = driver.run()
        except BaseException as exc:
            if not args.no_output and driver.results:  # keep what the phases that ran measured
                driver.results["error"] = repr(exc)
                args.output.parent.mkdir(parents=True, exist_ok=True)
                args.output.write_text(json.dumps(driver.results, indent=2) + "\n")
                say(f"partial results written to {args.output}")
            raise
    print(render_big_cluster(results) if cfg.big_cluster else render(results))
    if not args.no_output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
