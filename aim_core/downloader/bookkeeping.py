"""The transfer's own files inside the target folder, and removing them once a download is verified.

huggingface_hub keeps ``local_dir`` metadata and locks under ``.cache/huggingface``;
the S3 backend keeps a record per object under ``.cache/aim-downloader``. They let the
next attempt skip complete files and continue partial ones, and have no place in the
served tree: a model downloaded from the Hub, copied as it is to a bucket and downloaded
again from there must give the same files.
"""

from __future__ import annotations

import logging
from pathlib import Path

from aim_core.downloader.sources import Manifest

log = logging.getLogger("aim.downloader")

#: Bookkeeping folders inside the target: huggingface_hub's (``local_dir`` metadata, locks) and our S3 records.
BOOKKEEPING = (Path(".cache") / "huggingface", Path(".cache") / "aim-downloader")


def remove_bookkeeping(target: Path, manifest: Manifest) -> None:
    """Remove the transfer's own files from ``target``, keeping every file of the manifest.

    Only after a verified download: until then they are what lets the next attempt skip
    complete files and continue partial ones. A later run over the finished tree still
    skips its files (the Hub client hashes large files against their published digest,
    S3 files are checked against a plain MD5 ETag) and fetches the rest again.
    """
    wanted = {f.path for f in manifest.files}
    for folder in BOOKKEEPING:
        root = target / folder
        if not root.is_dir() or root.is_symlink():
            continue
        for path in sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            relative = path.relative_to(target).as_posix()
            try:
                if path.is_dir() and not path.is_symlink():
                    if not any(path.iterdir()):
                        path.rmdir()
                elif relative not in wanted:
                    path.unlink()
            except OSError as exc:
                log.warning("could not remove %s: %s", path, exc)
    for path in [target / f for f in BOOKKEEPING] + [target / f.parent for f in BOOKKEEPING]:
        try:
            if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
                path.rmdir()  # an empty folder still counts in `du` (4 KiB on most file systems)
        except OSError:
            pass
