"""Fetching the files of a manifest side by side, for every backend (Hugging Face, S3).

:func:`fetch_each` runs a backend's fetch of one file for every file of the manifest
in a pool of threads. The first failure stops what has not started yet and is raised
as the backend's :class:`~aim_core.downloader.sources.DownloadError`.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from aim_core.downloader.sources import DownloadError, Manifest, RemoteFile, Source

__all__ = ["fetch_each"]


def fetch_each(
    manifest: Manifest,
    fetch_one: Callable[[RemoteFile], None],
    *,
    workers: int,
    name: str,
    failure_of: Callable[[BaseException, Source], DownloadError],
    progress: Callable[[str], None] | None = None,
) -> None:
    """Call ``fetch_one`` for each file in ``workers`` threads named ``name``; ``progress(path)`` after each."""

    def one(f: RemoteFile) -> None:
        fetch_one(f)
        if progress is not None:
            progress(f.path)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name) as pool:
        futures = [pool.submit(one, f) for f in manifest.files]
        _, pending = wait(futures, return_when=FIRST_EXCEPTION)
        for future in pending:
            future.cancel()
        for future in futures:
            if future.done() and not future.cancelled() and (exc := future.exception()) is not None:
                raise failure_of(exc, manifest.source) from None
