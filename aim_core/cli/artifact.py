"""``aim-engine artifact download|check-size|storage-initializer``: the entrypoints of the artifact Jobs (:mod:`aim_core.downloader`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("artifact", help="the artifact downloader (entrypoints of the download and check-size Jobs)")
    art = p.add_subparsers(dest="artifact_command", required=True)
    a = art.add_parser("download", help="download an hf:// or s3:// source into TARGET_DIR, reporting to the artifact")
    a.add_argument("source_uri", help="hf://[<org>/]<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=download)
    a = art.add_parser("check-size", help='print {"url": ..., "sizeBytes": N} for a source (last output line)')
    a.add_argument("source_uri", help="hf://[<org>/]<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=check_size)
    a = art.add_parser(
        "storage-initializer",
        help="KServe storage-initializer entrypoint: download each <source-uri> into its <destination>",
    )
    a.add_argument(
        "pairs",
        nargs="+",
        metavar="SOURCE DESTINATION",
        help="pairs of hf:// or s3:// source and destination folder (KServe passes <storageUri> /mnt/models)",
    )
    a.set_defaults(func=storage_initializer)


def download(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import download

    return download(args.source_uri)


def check_size(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import check_size

    return check_size(args.source_uri)


def storage_initializer(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import storage_initializer

    return storage_initializer(args.pairs)
