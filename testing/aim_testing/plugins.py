"""Install a plugin distribution for a test, without touching the environment the tests run in.

A plugin is found through its entry point, so a test that wants the real
discovery path needs the plugin *installed*, not just importable. This module
builds and installs a plugin project (its ``pyproject.toml``) into a folder of
the test's own with pip, offline, and puts that folder on ``sys.path`` only
while a test uses it::

    target = install_plugin(Path("examples/plugins/gpu_acme"), tmp_path / "site")
    with plugins_on_path(target, "aim_example_gpu_acme"):
        pm = get_plugin_manager(only=["gpu_acme"])   # found through its entry point

The project is copied before it is built, so setuptools' ``build/`` and
``*.egg-info`` folders never land in the source tree (where they would make
the plugin look installed to every later test).
"""

from __future__ import annotations

import contextlib
import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["install_plugin", "plugins_on_path"]

_IGNORED = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "tests")


def install_plugin(project: Path, target: Path) -> Path:
    """Build ``project`` and install it (without dependencies) into ``target``; return ``target``.

    :raises RuntimeError: pip failed; the message holds its output.
    """
    source = target.parent / f".src-{project.name}"
    shutil.rmtree(source, ignore_errors=True)
    shutil.copytree(project, source, ignore=_IGNORED)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(target),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pip could not install {project}:\n{result.stdout}{result.stderr}")
    return target


@contextlib.contextmanager
def plugins_on_path(target: Path, *packages: str) -> Iterator[None]:
    """Make the distributions in ``target`` importable and discoverable for the duration of the block.

    Modules of ``packages`` already imported (say from the source tree) are set
    aside, so the block imports the installed copies, and put back afterwards.
    """

    def owned(name: str) -> bool:
        return any(name == p or name.startswith(p + ".") for p in packages)

    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if owned(name)}
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(target))
        for name in [n for n in sys.modules if owned(n)]:
            del sys.modules[name]
        sys.modules.update(saved)
        importlib.invalidate_caches()
