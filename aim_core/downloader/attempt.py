"""One transfer attempt, run by the supervisor as a child process.

``python -m aim_core.downloader.attempt <manifest.json> <target-dir>`` fetches the
files of the manifest with the protocol settings of its environment (huggingface_hub
reads them at import, hence a fresh process per protocol; a stalled attempt can be
killed without harm). Its exit code is the :class:`~aim_core.downloader.sources.Failure`
value, and its last stderr line on failure starts with :data:`ERROR_PREFIX`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from aim_core.downloader.config import flag
from aim_core.downloader.monitor import folder_bytes
from aim_core.downloader.simulate import ATTEMPT_PROTOCOL_ENV, Simulation
from aim_core.downloader.sources import DownloadError, Failure, Manifest

ERROR_PREFIX = "aim-downloader: error: "
#: The line an attempt writes once it is running and about to transfer (the supervisor starts its stall clock).
READY_LINE = "aim-downloader: attempt ready"


def transfer(manifest: Manifest, target: Path, workers: int) -> None:
    if flag(os.environ, "AIM_DEBUG_CAUSE_FAILURE"):
        raise DownloadError(Failure.OTHER, "simulated failure (AIM_DEBUG_CAUSE_FAILURE)")
    if flag(os.environ, "AIM_DEBUG_CAUSE_HANG"):
        sys.stderr.write("aim-downloader: hanging on purpose (AIM_DEBUG_CAUSE_HANG)\n")
        sys.stderr.flush()
        while True:
            time.sleep(3600)
    simulation = Simulation.from_env(os.environ, manifest.source)
    if simulation is not None:
        simulation.transfer(manifest, target, os.environ.get(ATTEMPT_PROTOCOL_ENV, ""))
        return
    target.mkdir(parents=True, exist_ok=True)
    if manifest.source.scheme == "hf":
        from aim_core.downloader import hub as backend
    else:
        from aim_core.downloader import s3 as backend  # type: ignore[no-redef]
    before, started = folder_bytes(target), time.monotonic()
    backend.fetch(manifest, target, workers)
    elapsed = max(time.monotonic() - started, 1e-6)
    moved = folder_bytes(target) - before
    sys.stderr.write(f"aim-downloader: transfer: {moved} bytes in {elapsed:.3f} s ({moved / elapsed / 1e6:.1f} MB/s)\n")


def _die_with_parent() -> None:
    """Linux: end with the supervisor, even when it is killed outright (no orphan keeps writing)."""
    parent = os.environ.get("AIM_DOWNLOADER_PARENT_PID", "")
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if parent and str(os.getppid()) != parent:  # the parent died before the line above
        os._exit(Failure.OTHER.value)


def main(argv: list[str]) -> int:
    manifest_file, target = argv
    _die_with_parent()
    sys.stderr.write(READY_LINE + "\n")
    sys.stderr.flush()
    try:
        transfer(
            Manifest.from_json(Path(manifest_file).read_text()),
            Path(target),
            int(os.environ.get("AIM_DOWNLOADER_WORKERS", "8") or 8),
        )
    except DownloadError as exc:
        sys.stderr.write(f"{ERROR_PREFIX}{exc}\n")
        return exc.kind.value
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
