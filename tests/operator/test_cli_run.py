"""`aim-engine run` as users start it: a process, the current kubeconfig, JSON logs."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import shutil
import signal
import sys
from pathlib import Path

import pytest
import yaml

from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"
# Metrics and probes on free loopback ports: the defaults (:8080, :8081 on every interface) may be taken.
LOOPBACK_ENDPOINTS = ("--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0")


def _namespaces(kube) -> None:
    """The namespace the test writes to and the operator's own (a real API server creates in neither unless they exist)."""
    for name in ("team", "aim-system"):
        kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def test_run_command_reconciles_with_the_kubeconfig_and_stops_on_sigterm(kube, api, kubeconfig: Path, tmp_path):
    _namespaces(kube)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "AIM_SYSTEM_NAMESPACE": "aim-system"}
    log = tmp_path / "operator.log"
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aim_core.cli",
            "run",
            "-A",
            "--log-format",
            "json",
            *LOOPBACK_ENDPOINTS,
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            response = await api.post(
                kube.path(RC, "team"),
                json={
                    "apiVersion": "aim.eai.amd.com/v1alpha1",
                    "kind": "AIMRuntimeConfig",
                    "metadata": {"name": "default", "namespace": "team"},
                    "spec": {"env": [{"name": "A", "value": "1"}]},
                },
            )
            assert response.status_code == 201, response.text

            def reconciled():
                conditions = kube.get(RC, "team", "default")["status"]["conditions"]
                assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
                return True

            await eventually(reconciled, timeout=20)
        finally:
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 20)
    lines = [line for line in log.read_text().splitlines() if line.startswith("{")]
    assert lines, log.read_text()[-2000:]
    records = [json.loads(line) for line in lines]
    assert any("starting aim-engine" in r.get("message", "") for r in records)
    assert code == 0, log.read_text()[-2000:]


def _uid_without_passwd_entry() -> int:
    for uid in range(65532, 65632):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("no free uid")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="switching uid needs root and setpriv")
async def test_run_command_works_under_a_uid_with_no_passwd_entry(kube, api, tmp_path_factory):
    """As in the image under a restricted namespace: an arbitrary uid, no passwd entry, no HOME.

    The process keeps one capability, reading and searching any directory, only so that it can
    reach this machine's interpreter (often under /root); who it is stays an unknown uid.
    """
    _namespaces(kube)
    uid = _uid_without_passwd_entry()
    shared = tmp_path_factory.mktemp("anyuid")
    shared.chmod(0o755)
    config = shared / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "emulator",
                "clusters": [{"name": "emulator", "cluster": {"server": kube.url}}],
                "users": [{"name": "emulator", "user": {"token": kube.token}}],
                "contexts": [{"name": "emulator", "context": {"cluster": "emulator", "user": "emulator"}}],
            }
        )
    )
    config.chmod(0o644)
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "USER", "LOGNAME", "USERNAME", "LNAME")}
    env.update(KUBECONFIG=str(config), AIM_SYSTEM_NAMESPACE="aim-system", PYTHONDONTWRITEBYTECODE="1")
    log = tmp_path_factory.mktemp("anyuid-log") / "operator.log"
    engine = Path(sys.executable).with_name("aim-engine")
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search",
            str(engine),
            "run",
            "-A",
            *LOOPBACK_ENDPOINTS,
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            cwd=str(shared),
        )
        try:
            response = await api.post(
                kube.path(RC, "team"),
                json={
                    "apiVersion": "aim.eai.amd.com/v1alpha1",
                    "kind": "AIMRuntimeConfig",
                    "metadata": {"name": "default", "namespace": "team"},
                    "spec": {"env": [{"name": "A", "value": "1"}]},
                },
            )
            assert response.status_code == 201, response.text

            def reconciled():
                assert proc.returncode is None, log.read_text()[-3000:]
                conditions = kube.get(RC, "team", "default")["status"]["conditions"]
                assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
                return True

            await eventually(reconciled, timeout=30)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 20)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert code == 0, text[-3000:]


async def test_a_taken_metrics_port_is_one_clear_error_naming_the_flag_not_a_traceback(kube, kubeconfig: Path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "AIM_SYSTEM_NAMESPACE": "aim-system"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aim_core.cli",
            "run",
            "-A",
            "--log-format",
            "plain",
            "--metrics-bind-address",
            f"127.0.0.1:{port}",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await asyncio.wait_for(proc.communicate(), 60)
    text = output.decode()
    assert proc.returncode == 1, text[-2000:]
    assert f"cannot serve /metrics on 127.0.0.1:{port}" in text and "--metrics-bind-address" in text
    assert "Traceback" not in text
