"""``aim-engine bench``: benchmark results as tables and plots (see :mod:`aim_core.cli.benchview`).

* ``bench show NAME``: one AIMBenchmark's results, one row per scenario x load level;
* ``bench compare A B``: two runs side by side, with B's change against A;
* ``bench sweep NAME``: an AIMBenchmarkSweep's comparison table, one row per template.

Objects come from the live cluster, or with ``-f`` from YAML files (``kubectl get -o yaml``
output, saved reports). ``--plot`` adds a latency/throughput plot in the terminal (one curve per
run or template, a point per load level); ``--svg FILE`` writes the same plot as an SVG file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from aim_core.cli.common import (
    add_cluster_options,
    add_filename_option,
    add_output_option,
    command_parser,
    error,
    stdout_console,
    subcommands,
)

_CODES = "Exit status: 0 shown; 1 not found, or the cluster cannot be reached; 2 bad usage or unreadable input."

AXIS_NAMES = (
    "outputTokensPerSecond",
    "requestsPerSecond",
    "ttftP50",
    "ttftP90",
    "ttftP99",
    "interTokenLatencyP50",
    "e2eLatencyP50",
    "concurrency",
)


def _common(p: argparse.ArgumentParser, *, plot: bool = True) -> None:
    p.add_argument("-n", "--namespace", default=None, help="namespace (default: the context's, else default)")
    add_filename_option(p, "read objects from here (kubectl get -o yaml output, saved reports), not the cluster")
    add_output_option(p, ["table", "json"])
    if plot:
        p.add_argument("--plot", action="store_true", help="add a latency/throughput plot in the terminal")
        p.add_argument("--svg", default=None, metavar="FILE", help="write the plot as an SVG file")
        p.add_argument("--x", choices=AXIS_NAMES, default="outputTokensPerSecond", help="plot x axis")
        p.add_argument("--y", choices=AXIS_NAMES, default="ttftP50", help="plot y axis")
        p.add_argument("--scenario", default="", help="scenario to plot (default: the first)")
    add_cluster_options(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = command_parser(
        sub,
        "bench",
        "AIMBenchmark results: a run's table, two runs compared, a sweep, plots",
        [
            "aim-engine bench show qwen-baseline -f examples/bench/results.yaml --plot",
            "aim-engine bench compare qwen-baseline qwen-fp8 -f examples/bench/results.yaml",
            "aim-engine bench sweep qwen-sweep -f examples/bench/results.yaml --svg sweep.svg",
        ],
        codes=_CODES,
    )
    cmds = subcommands(p, "bench_command")
    s = command_parser(
        cmds,
        "show",
        "one AIMBenchmark's results as a table (and a plot)",
        [
            "aim-engine bench show qwen-baseline -f examples/bench/results.yaml --plot",
            "aim-engine bench show qwen-baseline -n ml-team -o json",
        ],
        codes=_CODES,
    )
    s.add_argument("name", help="the AIMBenchmark")
    _common(s)
    s.set_defaults(func=show)
    c = command_parser(
        cmds,
        "compare",
        "two AIMBenchmarks side by side, with the change of the second",
        [
            "aim-engine bench compare qwen-baseline qwen-fp8 -f examples/bench/results.yaml",
            "aim-engine bench compare qwen-baseline qwen-fp8 -f examples/bench/results.yaml --svg compare.svg",
        ],
        codes=_CODES,
    )
    c.add_argument("first", help="the AIMBenchmark to compare against")
    c.add_argument("second", help="the AIMBenchmark compared")
    _common(c)
    c.set_defaults(func=compare)
    w = command_parser(
        cmds,
        "sweep",
        "an AIMBenchmarkSweep's comparison of templates (and a plot per template)",
        ["aim-engine bench sweep qwen-sweep -f examples/bench/results.yaml --plot --y ttftP90"],
        codes=_CODES,
    )
    w.add_argument("name", help="the AIMBenchmarkSweep")
    _common(w)
    w.set_defaults(func=sweep)


# --------------------------------------------------------------------------- loading


def _from_files(docs: list[dict[str, Any]], kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
    for d in docs:
        meta = d.get("metadata") or {}
        if d.get("kind") == kind and meta.get("name") == name:
            if namespace is None or meta.get("namespace", namespace) == namespace:
                return d
    return None


def _load(args: argparse.Namespace, kind: str, names: list[str]) -> list[dict[str, Any]] | None:
    """The named objects of ``kind``, from ``-f`` files or the cluster; None after an error was printed."""
    if args.filename:
        from aim_core.cli.inputs import load_documents

        docs = load_documents(args.filename)
        found = [_from_files(docs, kind, args.namespace, n) for n in names]
        missing = [n for n, o in zip(names, found, strict=True) if o is None]
        if missing:
            there = sorted({d["metadata"]["name"] for d in docs if d.get("kind") == kind})
            error(
                f"{kind} {', '.join(missing)} not in {', '.join(args.filename)}"
                + (f" (it has {', '.join(there)})" if there else f" (it has no {kind})")
            )
            return None
        return [o for o in found if o is not None]
    return _from_cluster(args, kind, names)


def _from_cluster(args: argparse.Namespace, kind: str, names: list[str]) -> list[dict[str, Any]] | None:
    from aim_core.cli.common import on_cluster
    from aim_core.reconcile.resources import AIM_RESOURCES

    ref = next(r for r in AIM_RESOURCES if r.kind == kind)

    async def read(cluster: Any) -> tuple[str, list[dict[str, Any] | None]]:
        namespace = args.namespace or cluster.credentials.default_namespace or "default"
        return namespace, [await cluster.get(ref, namespace, n) for n in names]

    read_back = on_cluster(args, read)
    if read_back is None:
        return None
    namespace, found = read_back
    missing = [n for n, o in zip(names, found, strict=True) if o is None]
    if missing:
        error(f"{kind} {', '.join(f'{namespace}/{n}' for n in missing)} not found")
        return None
    return [o for o in found if o is not None]


# --------------------------------------------------------------------------- output


def _print_table(columns: tuple[str, ...] | list[str], rows: list[list[str]]) -> None:
    from aim_core.cli.benchview import format_table

    console = stdout_console()
    if not console.is_terminal or not rows:
        sys.stdout.write(format_table(columns, rows))
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(*columns, header_style="bold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)


def _plots(args: argparse.Namespace, series: list[Any], title: str) -> None:
    from aim_core.cli.benchview import AXES, svg_plot, text_plot

    x_label, y_label = AXES[args.x][0], AXES[args.y][0]
    if args.plot:
        sys.stdout.write("\n" + text_plot(series, x_label, y_label))
    if args.svg:
        try:
            Path(args.svg).write_text(svg_plot(series, x_label, y_label, title), encoding="utf-8")
        except OSError as exc:
            error(f"{args.svg}: cannot write: {exc.strerror or exc}")
            return
        sys.stderr.write(f"wrote {args.svg}\n")


def _ident(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}".lstrip("/")


def show(args: argparse.Namespace) -> int:
    from aim_core.cli.benchview import RUN_COLUMNS, run_heading, run_rows, series_of

    found = _load(args, "AIMBenchmark", [args.name])
    if found is None:
        return 1
    status = found[0].get("status") or {}
    if args.output == "json":
        json.dump({"name": _ident(found[0]), "status": status}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(run_heading(f"AIMBenchmark {_ident(found[0])}", status) + "\n")
    _print_table(RUN_COLUMNS, run_rows(status))
    name = (status.get("target") or {}).get("template") or args.name
    _plots(args, [series_of(name, status.get("results") or (), args.x, args.y, args.scenario)], args.name)
    return 0


def compare(args: argparse.Namespace) -> int:
    from aim_core.cli.benchview import compare_rows, run_heading, series_of

    found = _load(args, "AIMBenchmark", [args.first, args.second])
    if found is None:
        return 1
    a, b = (o.get("status") or {} for o in found)
    rows = compare_rows(a, b)
    if args.output == "json":
        columns = ("scenario", "load", "metric", "first", "second", "change")
        json.dump([dict(zip(columns, r, strict=True)) for r in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(f"A = {run_heading(f'AIMBenchmark {_ident(found[0])}', a)}\n")
    sys.stdout.write(f"B = {run_heading(f'AIMBenchmark {_ident(found[1])}', b)}\n")
    if not rows:
        sys.stdout.write("(the two runs share no scenario and load level)\n")
    else:
        _print_table(["Scenario", "Load", "Metric", "A", "B", "B vs A"], rows)
    series = [
        series_of(o["metadata"]["name"], (o.get("status") or {}).get("results") or (), args.x, args.y, args.scenario)
        for o in found
    ]
    _plots(args, series, f"{args.first} vs {args.second}")
    return 0


def sweep(args: argparse.Namespace) -> int:
    from aim_core.cli.benchview import SWEEP_COLUMNS, sweep_rows, sweep_series

    found = _load(args, "AIMBenchmarkSweep", [args.name])
    if found is None:
        return 1
    status = found[0].get("status") or {}
    if args.output == "json":
        json.dump({"name": _ident(found[0]), "status": status}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    done = sum(1 for t in status.get("templates") or () if t.get("state") in ("Succeeded", "Failed", "Skipped"))
    total = len(status.get("templates") or ())
    sys.stdout.write(
        f"AIMBenchmarkSweep {_ident(found[0])}: {status.get('status') or 'Pending'}; {done} of {total} templates done\n"
    )
    _print_table(SWEEP_COLUMNS, sweep_rows(status))
    for t in status.get("templates") or ():
        if t.get("state") in ("Failed", "Skipped"):
            sys.stdout.write(f"  {t.get('template')}: {t.get('state')}: {t.get('message', '')}\n")
    _plots(args, sweep_series(status, args.x, args.y, args.scenario), args.name)
    return 0
