"""Run a process as an image runs it: an unknown uid that can write almost nowhere.

Tests that check an image works on a read-only root filesystem start its command as a
uid with no passwd entry (:func:`unknown_uid`) through ``setpriv`` (:func:`as_uid`):
everything owned by root is then read-only to it, and :func:`files_owned_by` finds
whatever it still wrote in the world-writable places a read-only root filesystem would
take away. Needs root and util-linux's ``setpriv``: see :func:`can_switch_uid`.
"""

from __future__ import annotations

import os
import pwd
import random
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

__all__ = ["WORLD_WRITABLE", "as_uid", "can_switch_uid", "files_owned_by", "remap", "unknown_uid"]

WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def can_switch_uid() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def unknown_uid() -> int:
    """A uid with no passwd entry that no other test (or concurrent test run) is likely to use."""
    rng = random.Random()
    for _ in range(1000):
        uid = rng.randrange(200_000, 2_000_000)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise RuntimeError("no free uid")


def as_uid(uid: int, argv: list[str]) -> list[str]:
    """``argv`` run as ``uid``/``gid`` with no groups.

    The process keeps one capability, reading and searching any directory, only so that
    it can reach this machine's interpreter (often under /root); it can write nothing it
    does not own.
    """
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--inh-caps=+dac_read_search",
        "--ambient-caps=+dac_read_search",
        *argv,
    ]


def files_owned_by(
    uid: int, roots: tuple[str | Path, ...] = WORLD_WRITABLE, allowed: tuple[Path, ...] = ()
) -> list[str]:
    """Paths under ``roots`` owned by ``uid``, except ``allowed`` folders and their content."""
    existing = [str(r) for r in roots if os.path.isdir(r)]
    if not existing:
        return []
    found = subprocess.run(
        ["find", *existing, "-xdev", "-uid", str(uid)], capture_output=True, text=True, check=False
    ).stdout.split("\n")
    return [f for f in found if f and not any(f == str(a) or f.startswith(f"{a}/") for a in allowed)]


def remap(env: Mapping[str, str], mounts: Mapping[str, Path]) -> dict[str, str]:
    """``env`` with values at or below a mount path (``/tmp``) moved to the folder standing in for it."""
    moved = {}
    for name, value in env.items():
        for mount, folder in mounts.items():
            if value == mount or value.startswith(mount.rstrip("/") + "/"):
                value = str(folder) + value[len(mount.rstrip("/")) :]
                break
        moved[name] = value
    return moved
