"""Check the downloaded folder against the manifest: every file there, with its size and digest.

``checksum`` (default) also hashes what the source publishes a digest for: the SHA-256
of Hugging Face LFS files and the git object id of small Hub files. S3 ETags are not
content hashes in general (multipart uploads, KMS encryption), so S3 files are checked
by size. ``size`` checks sizes only (for very large models on slow volumes).
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from aim_core.downloader.sources import DownloadError, Failure, Manifest, RemoteFile

CHUNK = 4 << 20


def verify(manifest: Manifest, target: Path, mode: str = "checksum", workers: int = 4) -> int:
    """Return the number of files checked; raise a VERIFICATION :class:`DownloadError` listing the bad ones."""
    problems: list[str] = []
    for f in manifest.files:
        local = target / f.path
        if not local.is_file():
            problems.append(f"{f.path}: missing")
        elif (size := local.stat().st_size) != f.size:
            problems.append(f"{f.path}: {size} bytes, expected {f.size}")
    if not problems and mode == "checksum":
        hashed = [f for f in manifest.files if f.sha256 or f.git_blob]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify") as pool:
            for problem in pool.map(lambda f: _check_digest(target / f.path, f), hashed):
                if problem:
                    problems.append(problem)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise DownloadError(Failure.VERIFICATION, f"verification failed for {len(problems)} file(s): {shown}")
    return len(manifest.files)


def _check_digest(path: Path, f: RemoteFile) -> str | None:
    if f.sha256:
        digest = hashlib.sha256()
        want = f.sha256
    else:
        digest = hashlib.sha1(b"blob %d\0" % f.size)  # noqa: S324 - git's object id, not a security hash
        want = f.git_blob or ""
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    got = digest.hexdigest()
    return None if got == want else f"{f.path}: checksum {got[:12]}..., expected {want[:12]}..."
