"""The operator as its image runs it, with nothing writable but the scratch volume.

A pod of deploy/manager.yaml runs the image's ENTRYPOINT and CMD under an arbitrary uid
with a read-only root filesystem and an emptyDir at /tmp. Here the same command, with the
image's ENV, runs as a process under a uid that has no passwd entry and owns nothing but
a folder standing in for that emptyDir; HOME and the working directory are folders it
cannot write. It must reconcile an AIMService to its InferenceService, stop cleanly on
SIGTERM, and leave no file of its own anywhere it can write (the world-writable /tmp,
/var/tmp, /dev/shm), so a read-only root filesystem takes nothing away from it.
"""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import sys
from pathlib import Path

import pytest
import yaml

from aim_core.cli.offline import load_documents
from aim_testing.dockerfile import Dockerfile
from aim_testing.sandbox import as_uid, can_switch_uid, files_owned_by, remap, unknown_uid
from tests.wire.conftest import eventually

ROOT = Path(__file__).resolve().parents[2]
IMAGE = Dockerfile.read(ROOT / "Dockerfile")
NS = "ml-team"
ISVC = "serving.kserve.io/v1beta1/inferenceservices"
PAUSED = {"aim.eai.amd.com/reconciliation-paused": "true"}


def image_command() -> list[str]:
    """ENTRYPOINT + CMD of the image, its endpoints moved to free loopback ports (tests run side by side)."""
    argv = IMAGE.final.last("ENTRYPOINT").words() + IMAGE.final.last("CMD").words()
    return [*argv, "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0"]


def image_env(scratch: Path) -> dict[str, str]:
    """The image's ENV with /tmp (the emptyDir) mapped to ``scratch`` and this machine's interpreter on PATH."""
    env = remap(IMAGE.final.env(), {"/tmp": scratch})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    return env


def seed(kube) -> dict:
    """The cluster of examples/ (models, templates, caches paused), returning the service qwen-chat."""
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    kube.put_object(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aim-system"}, "status": {"phase": "Active"}}
    )
    service = None
    for doc in load_documents([ROOT / "examples"]):
        doc = copy.deepcopy(doc)
        if doc["kind"] == "AIMService":
            if doc["metadata"]["name"] == "qwen-chat":
                service = doc
            continue
        if doc["kind"] == "AIMClusterModelSource":
            continue
        if doc["kind"] in (
            "AIMTemplateCache",
            "AIMArtifact",
            "AIMModel",
            "AIMClusterModel",
            "AIMServiceTemplate",
            "AIMClusterServiceTemplate",
        ):
            doc["metadata"].setdefault("annotations", {}).update(PAUSED)
        kube.put_object(doc)
    assert service is not None
    service.pop("status", None)
    return service


@pytest.mark.skipif(not can_switch_uid(), reason="switching uid needs root and setpriv")
async def test_the_image_command_reconciles_a_service_writing_nothing_but_its_scratch_volume(
    kube, api, tmp_path_factory
):
    uid = unknown_uid()
    base = tmp_path_factory.mktemp("image")
    base.chmod(0o755)
    workdir, home, scratch = base / "workdir", base / "home", base / "scratch"
    for folder in (workdir, home):
        folder.mkdir(mode=0o755)  # root's: the uid can read, not write
    scratch.mkdir(mode=0o700)
    os.chown(scratch, uid, uid)  # the emptyDir at /tmp
    config = base / "kubeconfig"
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
    env = image_env(scratch)
    env.update(
        HOME=str(home),
        KUBECONFIG=str(config),
        AIM_SYSTEM_NAMESPACE="aim-system",
        POD_NAME="aim-engine-controller-manager-x1",
    )
    assert files_owned_by(uid, allowed=(scratch,)) == []
    service = seed(kube)
    log = tmp_path_factory.mktemp("image-log") / "operator.log"
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *as_uid(uid, image_command()),
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            cwd=str(workdir),
        )
        try:
            response = await api.post(kube.path("aimservices", NS), json=service)
            assert response.status_code == 201, response.text

            def served():
                assert proc.returncode is None, log.read_text()[-3000:]
                found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat")
                assert len(found) == 1, found
                return True

            await eventually(served, timeout=60)
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 30)
    text = log.read_text()
    assert "Traceback" not in text, text[-3000:]
    assert code == 0, text[-3000:]
    assert files_owned_by(uid, allowed=(scratch,)) == []
    assert files_owned_by(uid, (base,), allowed=(scratch,)) == []  # nothing in HOME or the working directory either
    assert sorted(p.name for p in scratch.iterdir()) == []  # token auth: not even a scratch file
