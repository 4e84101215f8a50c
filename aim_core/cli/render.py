"""``aim-engine render``: the operator's planners over files, offline (see :mod:`aim_core.render`)."""

from __future__ import annotations

import argparse
import sys

from aim_core.cli.common import GPU_PREFERENCE_HELP


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="plan given AIM objects offline and print what the operator would apply")
    p.add_argument("-f", "--file", action="append", required=True, help="YAML file or directory (repeatable)")
    p.add_argument("--nodes", action="append", help="YAML file or directory with Nodes (cluster snapshot)")
    p.add_argument("--explain", action="store_true", help="say why templates were chosen or rejected")
    p.add_argument("--kind", action="append", help="only report objects of this kind (repeatable)")
    p.add_argument("--operator-namespace", default="aim-system")
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=GPU_PREFERENCE_HELP)
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.operator.settings import gpu_preference
    from aim_core.plugins import get_plugin_manager
    from aim_core.render import format_rendered, load_documents, render

    docs = load_documents(args.file + (args.nodes or []))
    results = asyncio.run(render(docs, plugins=get_plugin_manager(), operator_namespace=args.operator_namespace,
                                 gpu_preference=gpu_preference(args.gpu_preference)))
    kinds = set(args.kind) if args.kind else None
    sys.stdout.write(format_rendered(results, explain=args.explain, only_kinds=kinds))
    return 0
