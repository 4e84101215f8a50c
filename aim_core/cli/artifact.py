"""``aim-engine artifact download|check-size``: the entrypoints of the artifact Jobs (:mod:`aim_core.downloader`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("artifact", help="the artifact downloader (entrypoints of the download and check-size Jobs)")
    art = p.add_subparsers(dest="artifact_command", required=True)
    a = art.add_parser("download", help="download an hf:// or s3:// source into TARGET_DIR, reporting to the artifact")
    a.add_argument("source_uri", help="hf://<org>/<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=download)
    a = art.add_parser("check-size", help='print {"url": ..., "sizeBytes": N} for a source (last output line)')
    a.add_argument("source_uri", help="hf://<org>/<model>[@<revision>] or s3://<bucket>/<prefix>")
    a.set_defaults(func=check_size)


def download(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import download

    return download(args.source_uri)


def check_size(args: argparse.Namespace) -> int:
    from aim_core.downloader.run import check_size

    return check_size(args.source_uri)
