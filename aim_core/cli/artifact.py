"""``aim-engine artifact download|check-size|storage-initializer``: the entrypoints of the artifact Jobs (:mod:`aim_core.downloader`)."""

from __future__ import annotations

import argparse

from aim_core.cli.common import command_parser, subcommands


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "artifact",
        "the artifact downloader (entrypoints of the download and check-size Jobs)",
        [
            "aim-engine artifact check-size hf://Qwen/Qwen3-0.6B",
            "TARGET_DIR=/tmp/m aim-engine artifact download hf://Qwen/Qwen3-0.6B",
        ],
    )
    art = subcommands(p, "artifact_command")
    a = command_parser(
        art,
        "download",
        "download an hf:// or s3:// source into TARGET_DIR, reporting to the artifact",
        ["TARGET_DIR=/tmp/m aim-engine artifact download hf://Qwen/Qwen3-0.6B"],
        codes="Exit status: 0 downloaded and verified; 1 the download or its check failed; 2 bad usage.",
    )
    a.add_argument("source_uri", help="hf://[<org>/]<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=download)
    a = command_parser(
        art,
        "check-size",
        'print {"url": ..., "sizeBytes": N} for a source (last output line)',
        ["aim-engine artifact check-size hf://Qwen/Qwen3-0.6B", "aim-engine artifact check-size s3://bucket/prefix"],
        codes="Exit status: 0 measured; 1 the source cannot be listed; 2 bad usage.",
    )
    a.add_argument("source_uri", help="hf://[<org>/]<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=check_size)
    a = command_parser(
        art,
        "storage-initializer",
        "KServe storage-initializer entrypoint: download each <source-uri> into its <destination>",
        ["aim-engine artifact storage-initializer hf://Qwen/Qwen3-0.6B /mnt/models"],
    )
    a.add_argument(
        "pairs",
        nargs="+",
        metavar="SOURCE DESTINATION",
        help="pairs of hf:// or s3:// source and destination folder (KServe passes <storageUri> /mnt/models)",
    )
    a.set_defaults(func=storage_initializer)


def download(args: argparse.Namespace) -> int:
    from aim_core.cli.progress import TransferProgress
    from aim_core.downloader import monitor
    from aim_core.downloader.run import download

    with TransferProgress(f"downloading {args.source_uri}") as progress:
        monitor.LISTENERS.append(progress.update)
        try:
            return download(args.source_uri)
        finally:
            monitor.LISTENERS.remove(progress.update)


def check_size(args: argparse.Namespace) -> int:
    from aim_core.cli.progress import stderr_progress
    from aim_core.downloader.run import check_size

    # listing a large repository takes a while; a spinner with the time on a terminal, nothing when piped
    with stderr_progress(f"listing {args.source_uri}", total=None):
        return check_size(args.source_uri)


def storage_initializer(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import storage_initializer

    return storage_initializer(args.pairs)
