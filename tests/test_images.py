"""Both Dockerfiles against the repository and the installed packages (no Docker engine here to build them).

Each image runs as a numeric non-root user, writes nothing into its own filesystem at run
time (so ``readOnlyRootFilesystem: true`` holds), starts a console script that the packages
it installs provide with arguments the CLI accepts, and copies only what exists. The
operator image installs the plugins its ``PLUGINS`` build argument names. That the
operator really runs this way (unknown uid, unwritable HOME, read-only working directory,
only the scratch volume writable) is tests/operator/test_image_runtime.py.
"""

from __future__ import annotations

import glob
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from aim_core import cli
from aim_core.artifact import children
from aim_testing.dockerfile import Dockerfile

ROOT = Path(__file__).resolve().parents[1]
OPERATOR = Dockerfile.read(ROOT / "Dockerfile")
DOWNLOADER = Dockerfile.read(ROOT / "Dockerfile.downloader")
BOTH = pytest.mark.parametrize("image", [OPERATOR, DOWNLOADER], ids=["operator", "downloader"])
PLUGIN_GROUP = "aim_engine.plugins"
# Where each image may write at run time: volumes its pods mount (emptyDir scratch, the artifact's PVC).
WRITABLE = {"Dockerfile": ("/tmp",), "Dockerfile.downloader": ("/tmp", children.MOUNT_PATH)}


def user_of(image: Dockerfile) -> tuple[int, int]:
    user = image.final.last("USER")
    assert user is not None, f"{image.path.name}: the final stage sets no USER, so it runs as root"
    match = re.fullmatch(r"(\d+):(\d+)", user.args.strip())
    assert match, f"{image.path.name}: USER {user.args} should be numeric uid:gid (runAsNonRoot checks a number)"
    return int(match[1]), int(match[2])


def manager_deployment() -> dict:
    return yaml.safe_load((ROOT / "deploy" / "manager.yaml").read_text())


@BOTH
def test_the_image_runs_as_a_numeric_user_that_is_not_root(image):
    uid, gid = user_of(image)
    assert uid != 0 and gid != 0


def test_the_users_are_the_ones_the_pods_ask_for():
    container = manager_deployment()["spec"]["template"]["spec"]["containers"][0]
    assert user_of(OPERATOR)[0] == container["securityContext"]["runAsUser"]
    assert user_of(DOWNLOADER) == (children.RUN_AS, children.RUN_AS)  # the artifact Jobs' runAsUser/runAsGroup


@BOTH
def test_every_copy_source_exists(image):
    for stage in image.stages:
        for copy in stage.all("COPY") + stage.all("ADD"):
            assert copy.op == "COPY", f"{image.path.name}:{copy.line}: use COPY, not ADD"
            source_stage = copy.flags().get("from")
            *sources, _dest = copy.words()
            assert sources, f"{image.path.name}:{copy.line}: COPY without a source"
            if source_stage is not None:
                earlier = image.stage(source_stage)
                assert earlier is not None and earlier.index < stage.index, f"{image.path.name}:{copy.line}"
                continue
            for source in sources:
                assert glob.glob(str(ROOT / source)), (
                    f"{image.path.name}:{copy.line}: {source} is not in the repository"
                )


def console_scripts_of(pyproject: Path) -> dict[str, str]:
    return tomllib.loads(pyproject.read_text())["project"].get("scripts", {})


@BOTH
def test_the_entrypoint_is_a_console_script_of_the_installed_core(image):
    entrypoint = image.final.last("ENTRYPOINT")
    assert entrypoint is not None and entrypoint.is_exec_form(), "exec form, so signals reach the operator"
    words = entrypoint.words()
    script = console_scripts_of(ROOT / "pyproject.toml").get(words[0])
    assert script, f"{words[0]} is not a console script of the core distribution the image installs"
    installed = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert installed.get(words[0]) == script
    cmd = image.final.last("CMD")
    argv = words[1:] + (cmd.words() if cmd is not None else ["hf://org/model"])
    args = cli.build_parser().parse_args(argv)  # exits (fails the test) on arguments the CLI does not know
    assert callable(args.func)


def test_the_operator_command_runs_the_operator():
    argv = OPERATOR.final.last("ENTRYPOINT").words()[1:] + OPERATOR.final.last("CMD").words()
    args = cli.build_parser().parse_args(argv)
    assert argv[0] == "run" and args.leader_elect and args.all_namespaces


def plugin_entry_points(folder: Path) -> dict[str, str]:
    data = tomllib.loads((folder / "pyproject.toml").read_text())
    return data["project"].get("entry-points", {}).get(PLUGIN_GROUP, {})


def test_the_plugins_build_argument_names_plugins_that_exist_with_their_entry_point():
    build = next(stage for stage in OPERATOR.stages if "PLUGINS" in stage.args)
    names = build.args["PLUGINS"].split()
    assert names, "the default image should carry the shipped plugins"
    installed = {ep.name for ep in metadata.entry_points(group=PLUGIN_GROUP)}
    for name in names:
        folder = ROOT / "plugins" / name
        assert (folder / "pyproject.toml").is_file(), f"PLUGINS names {name}, but plugins/{name} is not a distribution"
        assert name in plugin_entry_points(folder), f"plugins/{name} declares no {PLUGIN_GROUP} entry point {name!r}"
        assert name in installed
    shipped = {p.parent.name for p in (ROOT / "plugins").glob("*/pyproject.toml")}
    assert set(names) == shipped, "the default image should install every shipped plugin (and only those)"
    install = " ".join(run.args for run in build.all("RUN"))
    assert "$PLUGINS" in install and "plugins/$name" in install, "the install step should follow the argument"


@BOTH
def test_nothing_is_written_into_the_image_at_run_time(image):
    env = image.final.env()
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1"
    assert env["PATH"].startswith("/opt/aim/bin:")
    writable = WRITABLE[image.path.name]
    for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "HF_HOME", "TARGET_DIR"):
        if name in env:
            assert env[name].startswith(writable), f"{name}={env[name]} is not on a volume the pod mounts"
    assert env.get("HOME") and env.get("TMPDIR"), "HOME and TMPDIR should point at the scratch volume"


def test_the_operator_pod_mounts_scratch_space_where_the_image_writes_and_locks_the_rest():
    pod = manager_deployment()["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    empty_dirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    mounted = {m["mountPath"] for m in container["volumeMounts"] if m["name"] in empty_dirs}
    assert set(WRITABLE["Dockerfile"]) <= mounted
    assert container["command"] == OPERATOR.final.last("ENTRYPOINT").words()


def test_the_operator_serves_metrics_and_probes_on_the_ports_the_pod_declares():
    argv = OPERATOR.final.last("ENTRYPOINT").words()[1:] + OPERATOR.final.last("CMD").words()
    args = cli.build_parser().parse_args(argv)
    container = manager_deployment()["spec"]["template"]["spec"]["containers"][0]
    declared = {p["containerPort"] for p in container["ports"]}
    exposed = {int(p) for e in OPERATOR.final.all("EXPOSE") for p in e.args.split()}
    for address in (args.metrics_bind_address, args.health_probe_bind_address):
        port = int(address.rpartition(":")[2])
        assert port in declared and port in exposed, (address, declared, exposed)
        assert address.rpartition(":")[0] in ("", "0.0.0.0"), "reachable by the kubelet and Prometheus, not only inside"
