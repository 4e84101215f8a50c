"""``aim-engine render``: a preflight and the operator's planners over files, offline (see :mod:`aim_core.cli.offline`).

First the preflight (:mod:`aim_core.cli.preflight`): objects the API server would refuse are
reported on stderr with its message and not planned; unknown AIM kinds, unknown fields,
skipped documents and duplicates are warned about. Then the output (``-o``):

* ``yaml`` (default): the summary table as YAML comments, then today's YAML
  documents; one stream that stays valid YAML, so pipes and files keep working;
* ``json``: one JSON object ``{"summary": [...], "refused": [...], "objects": [...]}``;
* ``summary``: only the table (a rich table on a terminal, aligned text when piped);
* ``report``: a screenful for people: each service's status, template and why, folded to the
  terminal (100 columns when piped), the explanations with ``--explain``, and how to see the objects.
"""

from __future__ import annotations

import argparse
import json
import sys

from aim_core.cli.common import (
    GPU_PREFERENCE_HELP,
    add_filename_option,
    add_output_option,
    command_parser,
    error,
    stdout_console,
)
from aim_core.cli.progress import stderr_progress

_BAD = ("Failed", "Degraded")


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "render",
        "check AIM objects as the API server would and plan them offline: what the operator would apply",
        [
            "aim-engine render -f examples -o report --explain   # a screenful: services, templates, why",
            "aim-engine render -f examples --kind svc             # the services' status and objects as YAML",
            "aim-engine render -f services/ --nodes nodes.yaml --strict -o summary   # in CI",
            "kubectl get aimservices -A -o yaml | aim-engine render -f - -o json",
        ],
        codes="Exit status: 0 planned (refused objects and warnings are reported on stderr); 1 with --strict, "
        "an object the API server would refuse or a service that would be Failed or Degraded; "
        "2 bad usage or unreadable input.",
    )
    add_filename_option(p, "AIM objects (and Nodes, Namespaces) to plan", required=True)
    p.add_argument(
        "--nodes",
        action="append",
        default=[],
        metavar="PATH",
        help="Nodes of the cluster (a snapshot: kubectl get nodes -o yaml); file, directory or - (repeatable)",
    )
    p.add_argument("--explain", action="store_true", help="say how each model and template was resolved and why")
    p.add_argument(
        "--kind",
        action="append",
        metavar="KIND",
        help="only report objects of this kind: any case, plural or short name, e.g. svc,aimmodels (repeatable)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when an object would be refused or a service would be Failed or Degraded (for CI)",
    )
    p.add_argument("--operator-namespace", default="aim-system", help="the operator's namespace (default aim-system)")
    p.add_argument("--gpu-preference", default=None, metavar="MODELS", help=GPU_PREFERENCE_HELP)
    add_output_option(
        p,
        ["yaml", "json", "summary", "report"],
        "yaml (default): the summary as YAML comments, then the objects; json: all as one JSON object; "
        "summary: only the table of services; report: a screenful for people (the demo's)",
    )
    p.set_defaults(func=command)


def warn(message: str) -> None:
    sys.stderr.write(f"aim-engine: warning: {message}\n")


def command(args: argparse.Namespace) -> int:
    import asyncio

    from aim_core.cli import inputs, preflight
    from aim_core.cli.offline import format_rendered, format_summary, render, summarize
    from aim_core.operator.settings import gpu_preference
    from aim_core.plugin.manager import get_plugin_manager

    kinds: set[str] | None = None
    if args.kind:
        kinds, problems = preflight.resolve_kinds(args.kind)
        if problems:
            for problem in problems:
                error(problem)
            return 2
    docs = inputs.load([*args.filename, *args.nodes])
    checked = preflight.check(docs)
    for finding in checked.warnings:
        warn(finding.line())
    for finding in checked.refused:
        error(f"{finding.where}: refused: {finding.message}")
    by_id = {id(d.obj): d for d in checked.accepted}
    skipped: list[dict] = []
    failures: list[tuple[dict, str]] = []
    with stderr_progress("planning", total=None) as step:
        results = asyncio.run(
            render(
                [d.obj for d in checked.accepted],
                plugins=get_plugin_manager(),
                operator_namespace=args.operator_namespace,
                gpu_preference=gpu_preference(args.gpu_preference),
                on_object=lambda ident, total: step(f"{ident} (of {total})"),
                skipped=skipped,
                failures=failures,
            )
        )
    by_key = {_key(d.obj): d for d in checked.accepted}
    for obj, problem in failures:
        where = by_key[_key(obj)].where if _key(obj) in by_key else "-"
        meta = obj.get("metadata") or {}
        error(
            f"{where}: could not plan {obj.get('kind')} {meta.get('name')}: {problem} "
            "(a defect of aim-engine: the operator would meet the same object; please report it)"
        )
    for obj in skipped:
        where = by_id[id(obj)].where if id(obj) in by_id else "-"
        warn(
            f"{where}: skipped {obj.get('kind')} {obj.get('metadata', {}).get('name')} ({obj.get('apiVersion')}): "
            "render reads AIM kinds, Nodes, Namespaces, Pods and the kinds of installed plugins"
        )
    summary = summarize(results)
    if args.output == "json":
        json.dump(
            {
                "summary": [s.to_json() for s in summary],
                "refused": [{"where": f.where, "message": f.message} for f in checked.refused],
                "warnings": [{"where": f.where, "message": f.message} for f in checked.warnings],
                "objects": [_object_json(r, args.explain) for r in results if not kinds or r.obj["kind"] in kinds],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    elif args.output == "summary":
        _print_summary(summary)
    elif args.output == "report":
        from aim_core.cli.report import format_report

        console = stdout_console()
        width = console.width if console.is_terminal else 100
        sys.stdout.write(
            format_report(results, summary, checked, explain=args.explain, width=width, files=args.filename)
        )
    else:
        sys.stdout.write(format_summary(summary, prefix="# ") + "\n")
        if checked.refused:
            sys.stdout.write("".join(f"# refused: {f.line()}\n" for f in checked.refused) + "\n")
        sys.stdout.write(format_rendered(results, explain=args.explain, only_kinds=kinds))
    if args.strict:
        bad = [s for s in summary if s.status in _BAD]
        if checked.refused or bad or failures:
            error(
                f"--strict: {len(checked.refused)} object(s) would be refused, "
                f"{len(bad)} service(s) would be Failed or Degraded"
                + (f", {len(failures)} could not be planned" if failures else "")
            )
            return 1
    return 0


def _key(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind")), str(meta.get("namespace") or ""), str(meta.get("name")))


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
