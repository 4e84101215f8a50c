"""Dockerfile.downloader against the installed package (no Docker engine here to build it).

The Jobs run it as upstream does: the download container only passes ``args: [sourceUri]``
(so the ENTRYPOINT must download), the check-size container runs ``/check-size.sh <uri>``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from aim_core import cli
from aim_core.cli import artifact
from aim_testing.dockerfile import Dockerfile
from aim_testing.hubserver import HubServer
from aim_testing.sandbox import as_uid, can_switch_uid, files_owned_by, remap, unknown_uid
from tests.downloader.conftest import base_env

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile.downloader"
IMAGE = Dockerfile.read(DOCKERFILE)


def one(op: str) -> str:
    values = [i.args for i in IMAGE.final.all(op)]
    assert len(values) == 1, f"expected one {op} in the final stage, got {values}"
    return values[0]


def env_of_image() -> dict[str, str]:
    return IMAGE.final.env()


def check_size_script() -> str:
    """The /check-size.sh the image writes, decoded from its printf."""
    run = next(i.args for i in IMAGE.final.all("RUN") if "/check-size.sh" in i.args)
    match = re.search(r"printf '(.*?)' > /check-size\.sh", run)
    assert match, "the image should write /check-size.sh with printf"
    return match[1].replace("\\n", "\n")


def test_the_entrypoint_downloads_the_source_given_as_the_only_argument():
    entrypoint = json.loads(one("ENTRYPOINT"))
    assert entrypoint[0] == "aim-engine"
    args = cli.build_parser().parse_args([*entrypoint[1:], "hf://org/model"])
    assert args.func is artifact.download and args.source_uri == "hf://org/model"


def test_aim_engine_is_the_installed_console_script():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["aim-engine"] == "aim_core.cli:main"
    installed = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert installed["aim-engine"] == "aim_core.cli:main"
    assert (Path(sys.executable).parent / "aim-engine").exists()


def test_the_image_installs_the_downloader_extra_and_it_is_complete():
    build = DOCKERFILE.read_text()
    assert '".[downloader]"' in build
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {re.split(r"[<>=\[ ]", req)[0].lower().replace("_", "-") for req in extras["downloader"]}
    assert {"huggingface-hub", "boto3"} <= names
    for name in names:
        metadata.version(name)  # installed here, so the image gets the same set


def test_it_runs_as_uid_1000_and_writes_only_below_tmp_and_cache():
    assert one("USER") == "1000:1000"
    env = env_of_image()
    assert env["TARGET_DIR"] == "/cache"
    for name in ("HOME", "TMPDIR", "HF_HOME"):
        assert env[name].startswith("/tmp"), name
    assert "chown 1000:1000 /cache" in DOCKERFILE.read_text()


def test_check_size_sh_prints_the_size_line(tmp_path):
    script = tmp_path / "check-size.sh"
    script.write_text(check_size_script())
    script.chmod(0o755)
    assert check_size_script().startswith("#!/bin/sh\n")
    env = base_env(tmp_path)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    with HubServer() as hub:
        hub.add_repo("org/model", {"config.json": b"{}"})
        env["HF_ENDPOINT"] = hub.url
        result = subprocess.run(
            [str(script), "hf://org/model"], env=env, capture_output=True, text=True, timeout=60, check=False
        )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1]) == {"url": "hf://org/model", "sizeBytes": 2}


def test_the_storage_initializer_script_runs_the_storage_initializer_command():
    run = next(i.args for i in IMAGE.final.all("RUN") if "initializer-entrypoint" in i.args)
    match = re.search(r"printf '(.*?)' > /storage-initializer/scripts/initializer-entrypoint", run)
    assert match, "the image should write KServe's initializer-entrypoint with printf"
    script = match[1].replace("\\n", "\n")
    exec_line = next(line for line in script.splitlines() if line.startswith("exec "))
    argv = shlex.split(exec_line)[1:]
    assert argv[0] == "aim-engine" and argv[-1] == "$@"
    args = cli.build_parser().parse_args([*argv[1:-1], "s3://bucket/model", "/mnt/models"])
    assert args.func is artifact.storage_initializer and args.pairs == ["s3://bucket/model", "/mnt/models"]
    assert "chmod 0755 /storage-initializer/scripts/initializer-entrypoint" in run


@pytest.mark.skipif(not can_switch_uid(), reason="switching uid needs root and setpriv")
def test_the_image_command_downloads_writing_only_to_the_volume_and_scratch(tmp_path):
    """As a Job runs it on a read-only root filesystem: the image's uid-less ENV, ENTRYPOINT and WORKDIR, an
    unknown uid, /tmp and /cache the only folders it may write."""
    uid = unknown_uid()
    tmp_path.chmod(0o755)
    scratch, cache, workdir = tmp_path / "tmp", tmp_path / "cache", tmp_path / "workdir"
    for folder in (scratch, cache):
        folder.mkdir(mode=0o700)
        os.chown(folder, uid, uid)
    workdir.mkdir(mode=0o755)
    env = remap(env_of_image(), {"/tmp": scratch, "/cache": cache})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
    argv = json.loads(one("ENTRYPOINT")) + ["hf://org/model"]
    with HubServer() as hub:
        hub.add_repo("org/model", {"config.json": b"{}", "model.safetensors": os.urandom(50_000)})
        env["HF_ENDPOINT"] = hub.url
        result = subprocess.run(
            as_uid(uid, argv), env=env, cwd=workdir, capture_output=True, text=True, timeout=120, check=False
        )
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == ["config.json", "model.safetensors"]
    assert files_owned_by(uid, allowed=(scratch, cache)) == []
    assert files_owned_by(uid, (tmp_path,), allowed=(scratch, cache)) == []
