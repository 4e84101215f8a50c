"""Simulated downloads: the upstream image's ``AIM_DEBUG_SIMULATE_*`` switches.

They let a platform engineer try the whole artifact path on a cluster (check-size
Job, PVC, download Job, progress, verification, failure handling) without a model
source or network:

* ``AIM_DEBUG_SIMULATE_DOWNLOAD``: nothing is listed or fetched. One sparse file,
  :data:`SIMULATED_FILE`, grows to the expected size over
  ``AIM_DEBUG_DOWNLOAD_DURATION`` seconds (so the real progress monitor reports real
  percentages and the stall detection watches it), then verification takes
  ``AIM_DEBUG_VERIFY_DURATION`` seconds (both default 10) and fails with
  ``AIM_DEBUG_VERIFY_FAIL``.
* ``AIM_DEBUG_SIMULATE_HF_DOWNLOAD`` (``hf://`` sources only): the protocol sequence
  of ``AIM_DOWNLOADER_PROTOCOL`` is played, each attempt taking
  ``AIM_DEBUG_SIMULATE_HF_DURATION`` seconds (default 2); the protocols named in
  ``AIM_DEBUG_SIMULATE_HF_FAIL_PROTOCOLS`` fail, so the fallback and its
  ``status.download`` reports can be watched.

The size is ``EXPECTED_SIZE_BYTES`` (the operator sets it on download Jobs), else
:data:`DEFAULT_SIZE`. The file is sparse: it takes no disk blocks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

import attrs

from aim_core.downloader.config import flag, seconds
from aim_core.downloader.sources import DownloadError, Failure, Manifest, RemoteFile, Source

SIMULATED_FILE = ".aim-simulated-download"
DEFAULT_SIZE = 1024**3
ATTEMPT_PROTOCOL_ENV = "AIM_DOWNLOADER_ATTEMPT_PROTOCOL"  # the supervisor tells each attempt its protocol
_STEPS_PER_SECOND = 10


@attrs.frozen
class Simulation:
    """What to pretend; ``hf_only`` is the HF switch (it plays the protocol sequence)."""

    hf_only: bool
    download_seconds: float = 10.0
    verify_seconds: float = 10.0
    verify_fail: bool = False
    fail_protocols: frozenset[str] = frozenset()

    @classmethod
    def from_env(cls, env: Mapping[str, str], source: Source | None = None) -> Simulation | None:
        """The simulation the environment asks for (``None``: download for real)."""
        verify_fail = flag(env, "AIM_DEBUG_VERIFY_FAIL")
        if flag(env, "AIM_DEBUG_SIMULATE_DOWNLOAD"):
            return cls(
                False,
                seconds(env, "AIM_DEBUG_DOWNLOAD_DURATION", 10.0, allow_zero=True),
                seconds(env, "AIM_DEBUG_VERIFY_DURATION", 10.0, allow_zero=True),
                verify_fail,
            )
        if flag(env, "AIM_DEBUG_SIMULATE_HF_DOWNLOAD") and (source is None or source.scheme == "hf"):
            fail = frozenset(
                p.strip().upper() for p in env.get("AIM_DEBUG_SIMULATE_HF_FAIL_PROTOCOLS", "").split(",") if p.strip()
            )
            return cls(
                True, seconds(env, "AIM_DEBUG_SIMULATE_HF_DURATION", 2.0, allow_zero=True), 0.0, verify_fail, fail
            )
        return None

    def manifest(self, source: Source, expected_size: int) -> Manifest:
        """The listing a real source would have given: one file of the expected size."""
        size = expected_size if expected_size > 0 else DEFAULT_SIZE
        return Manifest(source=source, files=(RemoteFile(path=SIMULATED_FILE, size=size),), revision="simulated")

    def transfer(self, manifest: Manifest, target: Path, protocol: str) -> None:
        """In the attempt process: grow the file over the duration, or fail as configured."""
        if protocol.upper() in self.fail_protocols:
            time.sleep(self.download_seconds)
            raise DownloadError(
                Failure.OTHER, f"simulated failure of {protocol} (AIM_DEBUG_SIMULATE_HF_FAIL_PROTOCOLS)"
            )
        target.mkdir(parents=True, exist_ok=True)
        path = target / SIMULATED_FILE
        size = manifest.total_bytes
        steps = max(1, int(self.download_seconds * _STEPS_PER_SECOND))
        with open(path, "ab"):
            pass
        for step in range(1, steps + 1):
            os.truncate(path, size * step // steps)
            if step < steps:
                time.sleep(self.download_seconds / steps)

    def verify(self, manifest: Manifest, target: Path) -> int:
        """In the supervisor: take the verification time, then pass or fail as configured."""
        time.sleep(self.verify_seconds)
        if self.verify_fail:
            raise DownloadError(Failure.VERIFICATION, "verification failed on purpose (AIM_DEBUG_VERIFY_FAIL)")
        path = target / SIMULATED_FILE
        if not path.exists() or path.stat().st_size != manifest.total_bytes:
            raise DownloadError(Failure.VERIFICATION, f"{SIMULATED_FILE} is not {manifest.total_bytes} bytes")
        return len(manifest.files)
