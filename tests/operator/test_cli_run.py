"""`aim-engine run` as users start it: a process, the current kubeconfig, JSON logs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


async def test_run_command_reconciles_with_the_kubeconfig_and_stops_on_sigterm(kube, api, kubeconfig: Path, tmp_path):
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "AIM_SYSTEM_NAMESPACE": "aim-system"}
    log = tmp_path / "operator.log"
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "aim_core.cli", "run", "-A", "--log-format", "json",
            env=env, stdout=out, stderr=asyncio.subprocess.STDOUT,
        )
        try:
            response = await api.post(kube.path(RC, "team"), json={
                "apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMRuntimeConfig",
                "metadata": {"name": "default", "namespace": "team"}, "spec": {"env": [{"name": "A", "value": "1"}]},
            })
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
