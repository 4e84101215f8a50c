"""The CLI as a user runs it: ``aim-engine`` in a process of its own, its output captured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(
    *args: str, stdin: str | None = None, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``aim-engine ARGS`` in ``cwd``, whatever its exit status; ``env`` defaults to this process's
    environment without ``AIM_ENGINE_DEBUG`` (which would add tracebacks to what the user sees)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "AIM_ENGINE_DEBUG"}
    return subprocess.run(
        [sys.executable, "-m", "aim_core.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        check=False,
    )
