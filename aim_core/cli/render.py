"""``aim-engine render``: the operator's planners over files, offline (see :mod:`aim_core.cli.offline`).

Output (``-o``):

* ``yaml`` (default): the summary table as YAML comments, then today's YAML
  documents; one stream that stays valid YAML, so pipes and files keep working;
* ``json``: one JSON object ``{"summary": [...], "objects": [...]}``;
* ``summary``: only the table (a rich table on a terminal, aligned text when piped).
"""

from __future__ import annotations

import argparse
import json
import sys

from aim_core.cli.common import GPU_PREFERENCE_HELP, stderr_progress, stdout_console


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("render", help="plan given AIM objects offline and print what the operator would apply")
    p.add_argument("-f", "--file", action="append", required=True, help="YAML file or directory (repeatable)")
    p.add_argument("--nodes", action="append", help="YAML file or directory with Nodes (cluster snapshot)")
    p.add_argument("--explain", action="store_true", help="say why templates were chosen or rejected")
    p.add_argument("--kind", action="append", help="only report objects of this kind (repeatable)")
    p.add_argument("--operator-namespace", default="aim-system")
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=GPU_PREFERENCE_HELP)
    p.add_argument(
        "-o",
        "--output",
        choices=["yaml", "json", "summary"],
        default="yaml",
        help="yaml (default): the summary as YAML comments, then the objects; json: both as one "
        "JSON object; summary: only the table of services",
    )
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.cli.offline import format_rendered, format_summary, load_documents, render, summarize
    from aim_core.operator.settings import gpu_preference
    from aim_core.plugin.manager import get_plugin_manager

    docs = load_documents(args.file + (args.nodes or []))
    with stderr_progress("planning", total=None) as step:
        results = asyncio.run(
            render(
                docs,
                plugins=get_plugin_manager(),
                operator_namespace=args.operator_namespace,
                gpu_preference=gpu_preference(args.gpu_preference),
                on_object=lambda ident, total: step(f"{ident} (of {total})"),
            )
        )
    kinds = set(args.kind) if args.kind else None
    summary = summarize(results)
    if args.output == "json":
        json.dump(
            {
                "summary": [s.to_json() for s in summary],
                "objects": [_object_json(r, args.explain) for r in results if not kinds or r.obj["kind"] in kinds],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    elif args.output == "summary":
        _print_summary(summary)
    else:
        sys.stdout.write(format_summary(summary, prefix="# ") + "\n")
        sys.stdout.write(format_rendered(results, explain=args.explain, only_kinds=kinds))
    return 0


def _object_json(r, explain: bool) -> dict:
    meta = r.obj["metadata"]
    out = {
        "kind": r.obj["kind"],
        "name": meta["name"],
        "namespace": meta.get("namespace"),
        "status": r.status,
        "apply": r.apply,
    }
    if r.delete:
        out["delete"] = r.delete
    if explain:
        out["notes"] = r.notes
    return out


def _print_summary(summary) -> None:
    from aim_core.cli.offline import SUMMARY_COLUMNS, format_summary

    console = stdout_console()
    if not console.is_terminal or not summary:
        sys.stdout.write(format_summary(summary))
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(*SUMMARY_COLUMNS, header_style="bold")
    styles = {"Running": "green", "Ready": "green", "Failed": "red", "Degraded": "red", "NotAvailable": "red"}
    for row in summary:
        cells = [escape(cell) for cell in row.row()]
        style = styles.get(row.status, "yellow")
        cells[3] = f"[{style}]{cells[3]}[/{style}]"
        table.add_row(*cells)
    console.print(table)
