"""The processes of the separate-process benchmark: the emulator, the operator, py-spy; /proc readings."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import yaml

from aim_testing.emulator import ApiCall

ROOT = Path(__file__).resolve().parent.parent
WATCH_OR_DISCOVERY = frozenset({"watch", "discovery"})
OPERATOR_AGENTS = ("aim-engine", "kopf")


# --------------------------------------------------------------------------- /proc


def cpu_seconds(pid: int) -> float:
    """utime + stime of a whole process (every thread, ended ones included) in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak RSS) of a process, in MiB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
    return found


def loadavg() -> float:
    return os.getloadavg()[0]


# --------------------------------------------------------------------------- the emulator


class EmulatorProcess:
    """``benchmarks/emulator_process.py`` in a child process, with a client for its control API."""

    def __init__(self, workdir: Path, *, tls: bool = True, write_latency_ms: float = 0.0) -> None:
        self.workdir, self.tls, self.write_latency_ms = workdir, tls, write_latency_ms
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = self.control = ""
        self.ca: str | None = None
        self.pid = 0
        self.http = httpx.Client(timeout=120)
        self.position = 0  # request log read so far (see :meth:`poll`)
        self.log: list[tuple[ApiCall, float]] = []

    def start(self, timeout: float = 60.0) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        ready = self.workdir / "emulator.json"
        ready.unlink(missing_ok=True)  # a folder used before: wait for this process's file
        cmd = [sys.executable, "-m", "benchmarks.emulator_process", "--ready-file", str(ready)]
        if self.tls:
            cmd += ["--tls-dir", str(self.workdir / "tls")]
        if self.write_latency_ms:
            cmd += ["--write-latency-ms", str(self.write_latency_ms)]
        with open(self.workdir / "emulator.log", "wb") as out:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not ready.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"the emulator exited ({self.proc.returncode}); see {self.workdir}/emulator.log")
            if time.monotonic() > deadline:
                raise TimeoutError("the emulator did not start")
            time.sleep(0.05)
        info = json.loads(ready.read_text())
        self.url, self.control, self.ca, self.pid = info["url"], info["control"], info["ca"], info["pid"]

    def stop(self) -> None:
        self.http.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    # control API

    def put(self, objects: list[dict[str, Any]], chunk: int = 500) -> None:
        for i in range(0, len(objects), chunk):
            self.http.post(f"{self.control}/put", json=objects[i : i + chunk]).raise_for_status()

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        r = self.http.get(
            f"{self.control}/object", params={"resource": resource, "namespace": namespace or "", "name": name}
        )
        r.raise_for_status()
        return r.json()

    def backlog(self) -> int:
        """Watch events not yet sent to the watching clients."""
        r = self.http.get(f"{self.control}/backlog")
        r.raise_for_status()
        return int(r.json())

    def stored(self, plural: str) -> dict[tuple[str, str], float]:
        """When each object of ``plural`` was first stored, by (namespace, name)."""
        r = self.http.get(f"{self.control}/stored", params={"plural": plural})
        r.raise_for_status()
        return {(ns, name): t for ns, name, t in r.json()}

    def poll(self) -> list[tuple[ApiCall, float]]:
        """Fetch the requests served since the last poll; keep them in :attr:`log` too."""
        r = self.http.get(f"{self.control}/calls", params={"since": self.position})
        r.raise_for_status()
        data = r.json()
        new = [
            (
                ApiCall(
                    verb=v, resource=res, namespace=ns, name=n, subresource=sub, field_manager=None, user_agent=agent
                ),
                t,
            )
            for v, res, ns, n, sub, agent, t in data["calls"]
        ]
        self.position = data["served"]
        self.log.extend(new)
        return new

    def mark(self) -> int:
        self.poll()
        return len(self.log)

    def calls_since(self, mark: int) -> list[ApiCall]:
        self.poll()
        return [c for c, _ in self.log[mark:]]


def operator_calls(calls: Iterable[ApiCall]) -> list[ApiCall]:
    """Requests the operator made (our adapter and kopf), without watch streams and API discovery."""
    return [c for c in calls if c.user_agent.startswith(OPERATOR_AGENTS) and c.verb not in WATCH_OR_DISCOVERY]


def label(call: ApiCall) -> str:
    sub = f"/{call.subresource}" if call.subresource else ""
    return f"{call.verb} {(call.resource or '?').rsplit('/', 1)[-1]}{sub}"


def by_request(calls: Iterable[ApiCall]) -> dict[str, int]:
    return dict(sorted(Counter(label(c) for c in calls).items(), key=lambda kv: (-kv[1], kv[0])))


# --------------------------------------------------------------------------- the operator


class OperatorProcess:
    """``aim-engine run`` as deployed, with a kubeconfig naming the emulator (a token user, its CA)."""

    log_format = "plain"

    def __init__(self, workdir: Path, emulator: EmulatorProcess, *, workers: int = 4) -> None:
        self.workdir, self.emulator, self.workers = workdir, emulator, workers
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_offset = 0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kubeconfig(self) -> Path:
        cluster: dict[str, Any] = {"server": self.emulator.url}
        if self.emulator.ca:
            cluster["certificate-authority"] = self.emulator.ca
        path = self.workdir / "kubeconfig"
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "current-context": "bench",
                    "clusters": [{"name": "bench", "cluster": cluster}],
                    "users": [{"name": "bench", "user": {"token": "bench-token"}}],
                    "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench"}}],
                }
            )
        )
        return path

    def start(self) -> None:
        exe = Path(sys.executable).with_name("aim-engine")
        cmd = (
            [str(exe)]
            if exe.exists()
            else [sys.executable, "-c", "import sys; from aim_core.cli import main; sys.exit(main())"]
        )
        cmd += [
            "run",
            "-A",
            "--operator-namespace",
            "aim-system",
            "--workers",
            str(self.workers),
            "--log-format",
            self.log_format,
            # free loopback ports: the defaults (:8080, :8081) may be taken, e.g. by another benchmark run
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
        ]
        env = {**os.environ, "KUBECONFIG": str(self.kubeconfig())}
        env.pop("KUBERNETES_SERVICE_HOST", None)
        log = self.workdir / "operator.log"
        self.log_offset = log.stat().st_size if log.exists() else 0  # a restart appends: where this run's lines begin
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.workdir, env=env, stdout=out, stderr=subprocess.STDOUT)

    def new_log(self) -> str:
        """What this run of the process has logged so far (a restart appends to the same file)."""
        try:
            with open(self.workdir / "operator.log", "rb") as f:
                f.seek(self.log_offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def check(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"the operator exited ({self.proc.returncode}); see {self.workdir}/operator.log")

    def cpu(self) -> float:
        return cpu_seconds(self.pid)

    def memory(self) -> dict[str, float]:
        return memory_mb(self.pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_counts(self) -> dict[str, int]:
        """WARNING/ERROR lines in the operator's log (reconcile failures show here)."""
        counts: Counter[str] = Counter()
        try:
            text = (self.workdir / "operator.log").read_text(errors="replace")
        except OSError:
            return {}
        for line in text.splitlines():
            for level in ("WARNING", "ERROR", "Traceback"):
                if level in line:
                    counts[level] += 1
        return dict(counts)


# --------------------------------------------------------------------------- py-spy


class Profiler:
    """``py-spy record`` of one process in raw (collapsed stack) format, until stopped."""

    def __init__(self, pid: int, output: Path, rate: int = 100) -> None:
        self.pid, self.output, self.rate = pid, output, rate
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> bool:
        exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not Path(exe).exists():
            return False
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [
                exe,
                "record",
                "--pid",
                str(self.pid),
                "--format",
                "raw",
                "--rate",
                str(self.rate),
                "--nonblocking",
                "-o",
                str(self.output),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        time.sleep(0.5)
        return self.proc.poll() is None

    def stop(self) -> dict[str, Any] | None:
        if self.proc is None:
            return None
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if not self.output.exists():
            self.log.seek(0)
            return {"error": self.log.read().decode(errors="replace")[-500:]}
        return summarize_profile(self.output.read_text())


def _group(frame: str) -> str:
    """The top-level package of a frame ``function (path/to/file.py:line)``: asyncio, httpx, kopf, aim_core..."""
    path = frame.rpartition(" (")[2].rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1].split("/", 1)[-1] if marker == "lib/python3" else path.split(marker, 1)[1]
    top = path.lstrip("/").split("/", 1)[0]
    return top[:-3] if top.endswith(".py") else top


def summarize_profile(raw: str, top: int = 25) -> dict[str, Any]:
    """Top functions by own and by total samples, and own samples per package, from py-spy's raw output."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    groups: Counter[str] = Counter()
    inclusive_groups: Counter[str] = Counter()
    samples = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [f for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        samples += count
        own[frames[-1]] += count
        groups[_group(frames[-1])] += count
        for frame in set(frames):
            total[frame] += count
        for group in {_group(f) for f in frames}:
            inclusive_groups[group] += count

    def pct(counter: Counter[str], n: int) -> list[list[Any]]:
        return [[name, round(100 * c / samples, 1)] for name, c in counter.most_common(n)] if samples else []

    return {
        "samples": samples,
        "own_by_package_pct": pct(groups, 20),
        "inclusive_by_package_pct": pct(inclusive_groups, 20),
        "top_own_pct": pct(own, top),
        "top_total_pct": pct(total, top),
    }
