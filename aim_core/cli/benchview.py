"""What ``aim-engine bench`` prints: result tables, comparisons and plots, from status dicts. Pure.

Everything here takes the ``status`` of an AIMBenchmark (or an AIMBenchmarkSweep) as the API
server returns it and gives text: aligned tables (:func:`format_table`), the rows of one run
(:func:`run_rows`), of two runs side by side (:func:`compare_rows`) and of a sweep
(:func:`sweep_rows`), and a latency/throughput plot per template or run, as terminal text
(:func:`text_plot`) or as a standalone SVG file (:func:`svg_plot`). No plotting library: the
plot is a few dozen characters or SVG elements, not worth a dependency.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

RUN_COLUMNS = (
    "Scenario",
    "Load",
    "OK",
    "Failed",
    "Req/s",
    "Out tok/s",
    "TTFT p50",
    "TTFT p90",
    "TTFT p99",
    "ITL p50",
    "ITL p99",
    "E2E p50",
    "E2E p99",
)

#: what ``--x``/``--y`` may name, with the label a plot shows and where the number is
AXES: dict[str, tuple[str, tuple[str, ...]]] = {
    "outputTokensPerSecond": ("output tokens/s", ("outputTokensPerSecond",)),
    "requestsPerSecond": ("requests/s", ("requestsPerSecond",)),
    "ttftP50": ("TTFT p50 (ms)", ("ttftMs", "p50")),
    "ttftP90": ("TTFT p90 (ms)", ("ttftMs", "p90")),
    "ttftP99": ("TTFT p99 (ms)", ("ttftMs", "p99")),
    "interTokenLatencyP50": ("ITL p50 (ms)", ("interTokenLatencyMs", "p50")),
    "e2eLatencyP50": ("E2E p50 (ms)", ("e2eLatencyMs", "p50")),
    "concurrency": ("concurrency", ("concurrency",)),
}


def value(entry: Mapping[str, Any], name: str) -> float | None:
    """The number ``name`` (a key of :data:`AXES`) of a result entry; None when absent."""
    found: Any = entry
    for part in AXES[name][1]:
        found = found.get(part) if isinstance(found, Mapping) else None
    return float(found) if isinstance(found, int | float) and not isinstance(found, bool) else None


def number(v: Any) -> str:
    """``410.5``, ``12``, ``-`` for nothing: one decimal at most, no exponent."""
    if v is None or isinstance(v, bool) or not isinstance(v, int | float):
        return "-"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def load(entry: Mapping[str, Any]) -> str:
    """``c=8`` (concurrency) or ``r=2.5/s`` (request rate)."""
    if entry.get("concurrency") is not None:
        return f"c={entry['concurrency']}"
    if entry.get("requestRate") is not None:
        return f"r={number(entry['requestRate'])}/s"
    return "-"


def _load_key(entry: Mapping[str, Any]) -> tuple[int, float]:
    if entry.get("concurrency") is not None:
        return 0, float(entry["concurrency"])
    return 1, float(entry.get("requestRate") or 0)


def _sorted(results: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted((r for r in results if isinstance(r, Mapping)), key=lambda r: (str(r.get("scenario")), _load_key(r)))


def _p(entry: Mapping[str, Any], field: str, pct: str) -> Any:
    return (entry.get(field) or {}).get(pct)


def run_rows(status: Mapping[str, Any]) -> list[list[str]]:
    """One row per scenario x load level of a run (columns :data:`RUN_COLUMNS`; latencies in ms)."""
    return [
        [
            str(r.get("scenario", "")),
            load(r),
            number(r.get("completedRequests")),
            number(r.get("failedRequests")),
            number(r.get("requestsPerSecond")),
            number(r.get("outputTokensPerSecond")),
            number(_p(r, "ttftMs", "p50")),
            number(_p(r, "ttftMs", "p90")),
            number(_p(r, "ttftMs", "p99")),
            number(_p(r, "interTokenLatencyMs", "p50")),
            number(_p(r, "interTokenLatencyMs", "p99")),
            number(_p(r, "e2eLatencyMs", "p50")),
            number(_p(r, "e2eLatencyMs", "p99")),
        ]
        for r in _sorted(status.get("results") or ())
    ]


def run_heading(name: str, status: Mapping[str, Any]) -> str:
    """``AIMBenchmark team/run-1: Succeeded; llama-3-8b-mi300x-fp8 (1 x MI300X, fp8, latency), 1 replica``."""
    t = status.get("target") or {}
    where = t.get("template") or t.get("endpoint") or t.get("serviceName") or "?"
    facts = ", ".join(
        str(x)
        for x in (
            f"{t['gpuCount']} x {t['gpuModel']}" if t.get("gpuModel") and t.get("gpuCount") else t.get("gpuModel"),
            t.get("precision"),
            t.get("metric"),
        )
        if x
    )
    replicas = t.get("replicas")
    tail = f", {replicas} replica{'s' if replicas != 1 else ''}" if replicas is not None else ""
    when = f"; finished {status['completionTime']}" if status.get("completionTime") else ""
    return f"{name}: {status.get('status') or 'Pending'}; {where}{f' ({facts})' if facts else ''}{tail}{when}"


COMPARE_METRICS = ("outputTokensPerSecond", "requestsPerSecond", "ttftP50", "ttftP99", "interTokenLatencyP50")


def compare_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[list[str]]:
    """Two runs side by side per scenario x load and metric: A, B and B's change against A in percent.

    Columns: Scenario, Load, Metric, A, B, Change. Only scenario x load levels both runs measured.
    """

    def keyed(status: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
        return {(str(r.get("scenario")), load(r)): r for r in _sorted(status.get("results") or ())}

    ra, rb = keyed(a), keyed(b)
    rows = []
    for key in [k for k in ra if k in rb]:
        for metric in COMPARE_METRICS:
            va, vb = value(ra[key], metric), value(rb[key], metric)
            if va is None and vb is None:
                continue
            change = f"{(vb - va) / va * 100:+.1f}%" if va and vb is not None else "-"
            rows.append([key[0], key[1], AXES[metric][0], number(va), number(vb), change])
    return rows


SWEEP_COLUMNS = tuple("Template|GPU|Scenario|Load|Out tok/s|Req/s|TTFT p50|ITL p50|E2E p50|Run".split("|"))


def sweep_rows(status: Mapping[str, Any]) -> list[list[str]]:
    """The comparison table of a sweep: one row per template x scenario x load (status.comparison)."""
    rows = []
    entries = [e for e in status.get("comparison") or () if isinstance(e, Mapping)]
    for e in sorted(entries, key=lambda e: (str(e.get("scenario")), _load_key(e), str(e.get("template")))):
        gpu = f"{e['gpuCount']} x {e['gpuModel']}" if e.get("gpuModel") and e.get("gpuCount") else e.get("gpuModel")
        rows.append(
            [
                str(e.get("template", "")),
                str(gpu or "-"),
                str(e.get("scenario", "")),
                load(e),
                number(e.get("outputTokensPerSecond")),
                number(e.get("requestsPerSecond")),
                number(_p(e, "ttftMs", "p50")),
                number(_p(e, "interTokenLatencyMs", "p50")),
                number(_p(e, "e2eLatencyMs", "p50")),
                str(e.get("benchmark", "")),
            ]
        )
    return rows


def format_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Aligned plain text: a header, a rule, the rows; numbers right-aligned."""
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]

    def numeric(i: int) -> bool:
        return all(_is_number(r[i]) for r in rows) if rows else False

    right = [numeric(i) for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)).rstrip()

    return "\n".join([line(columns), line(["-" * w for w in widths]), *(line(r) for r in rows)]) + "\n"


def _is_number(cell: str) -> bool:
    try:
        float(cell.rstrip("%"))
    except ValueError:
        return cell == "-"
    return True


# --------------------------------------------------------------------------- plots


@attrs.frozen
class Series:
    """One curve: a template's (or a run's) points, each labelled with its load level."""

    name: str
    points: tuple[tuple[float, float, str], ...]


def series_of(name: str, results: Iterable[Mapping[str, Any]], x: str, y: str, scenario: str = "") -> Series:
    """The points (x, y, load) of a run's results, in load order; one scenario (the first when unset)."""
    entries = _sorted(results)
    if not scenario and entries:
        scenario = str(entries[0].get("scenario"))
    points = []
    for e in entries:
        if str(e.get("scenario")) != scenario:
            continue
        vx, vy = value(e, x), value(e, y)
        if vx is not None and vy is not None:
            points.append((vx, vy, load(e)))
    return Series(name, tuple(points))


def sweep_series(status: Mapping[str, Any], x: str, y: str, scenario: str = "") -> list[Series]:
    """One series per template of a sweep's comparison table."""
    entries = [e for e in status.get("comparison") or () if isinstance(e, Mapping)]
    names = sorted({str(e.get("template")) for e in entries})
    if not scenario and entries:
        scenario = str(_sorted(entries)[0].get("scenario"))
    return [series_of(n, [e for e in entries if str(e.get("template")) == n], x, y, scenario) for n in names]


MARKERS = "ox+*#@%&"


def _bounds(series: Sequence[Series]) -> tuple[float, float, float, float]:
    xs = [p[0] for s in series for p in s.points]
    ys = [p[1] for s in series for p in s.points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    pad_x = (x1 - x0) * 0.05 or abs(x0) * 0.1 or 1.0
    pad_y = (y1 - y0) * 0.05 or abs(y0) * 0.1 or 1.0
    return (
        max(0.0, x0 - pad_x) if x0 >= 0 else x0 - pad_x,
        x1 + pad_x,
        max(0.0, y0 - pad_y) if y0 >= 0 else y0 - pad_y,
        y1 + pad_y,
    )


def text_plot(series: Sequence[Series], x_label: str, y_label: str, *, width: int = 60, height: int = 16) -> str:
    """A scatter of every series in a character grid, points joined in load order; legend below.

    Each series has a marker (``o``, ``x``, ...); ``.`` draws the line between its points.
    """
    series = [s for s in series if s.points]
    if not series:
        return "(nothing to plot: no result has both numbers)\n"
    x0, x1, y0, y1 = _bounds(series)
    grid = [[" "] * width for _ in range(height)]

    def cell(x: float, y: float) -> tuple[int, int]:
        col = round((x - x0) / (x1 - x0) * (width - 1))
        row = height - 1 - round((y - y0) / (y1 - y0) * (height - 1))
        return min(max(row, 0), height - 1), min(max(col, 0), width - 1)

    for s in series:
        for (ax, ay, _), (bx, by, _) in zip(s.points, s.points[1:], strict=False):
            steps = max(width, height)
            for i in range(1, steps):
                r, c = cell(ax + (bx - ax) * i / steps, ay + (by - ay) * i / steps)
                if grid[r][c] == " ":
                    grid[r][c] = "."
    for i, s in enumerate(series):
        for x, y, _ in s.points:
            r, c = cell(x, y)
            grid[r][c] = MARKERS[i % len(MARKERS)]
    top, bottom = number(y1), number(y0)
    margin = max(len(top), len(bottom))
    lines = [y_label]
    for r, row in enumerate(grid):
        tick = top if r == 0 else bottom if r == height - 1 else ""
        lines.append(f"{tick.rjust(margin)} |{''.join(row).rstrip()}")
    lines.append(" " * margin + " +" + "-" * width)
    left, right = number(x0), number(x1)
    lines.append(" " * (margin + 2) + left + right.rjust(width - len(left)))
    lines.append(" " * (margin + 2) + x_label.center(width).rstrip())
    for i, s in enumerate(series):
        loads = ", ".join(p[2] for p in s.points)
        lines.append(f"  {MARKERS[i % len(MARKERS)]} {s.name} ({loads})")
    return "\n".join(lines) + "\n"


COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def svg_plot(series: Sequence[Series], x_label: str, y_label: str, title: str = "") -> str:
    """A standalone SVG of the same plot: a polyline and labelled points per series, axes with ticks, legend."""
    series = [s for s in series if s.points]
    w, h, left, right, top, bottom = 720, 440, 70, 200, 40, 50
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
    ]
    if title:
        out.append(f'<text x="{left}" y="22" font-size="14" font-weight="bold">{html.escape(title)}</text>')
    if not series:
        out.append(f'<text x="{left}" y="{h // 2}">nothing to plot</text></svg>')
        return "\n".join(out) + "\n"
    x0, x1, y0, y1 = _bounds(series)
    pw, ph = w - left - right, h - top - bottom

    def px(x: float) -> float:
        return round(left + (x - x0) / (x1 - x0) * pw, 1)

    def py(y: float) -> float:
        return round(top + ph - (y - y0) / (y1 - y0) * ph, 1)

    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i in range(5):
        tx = x0 + (x1 - x0) * i / 4
        ty = y0 + (y1 - y0) * i / 4
        out.append(f'<text x="{px(tx)}" y="{top + ph + 16}" text-anchor="middle">{_tick(tx)}</text>')
        out.append(f'<text x="{left - 6}" y="{py(ty) + 4}" text-anchor="end">{_tick(ty)}</text>')
        out.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(ty)}" y2="{py(ty)}" stroke="#eee"/>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">{html.escape(x_label)}</text>')
    out.append(
        f'<text x="16" y="{top + ph / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {top + ph / 2})">{html.escape(y_label)}</text>'
    )
    for i, s in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{px(x)},{py(y)}" for x, y, _ in s.points)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y, label in s.points:
            out.append(
                f'<circle cx="{px(x)}" cy="{py(y)}" r="4" fill="{colour}"><title>{html.escape(label)}</title></circle>'
            )
            out.append(f'<text x="{px(x) + 6}" y="{py(y) - 6}" font-size="10">{html.escape(label)}</text>')
        ly = top + 16 * i + 8
        out.append(f'<rect x="{left + pw + 14}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{left + pw + 30}" y="{ly}">{html.escape(s.name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tick(v: float) -> str:
    if v == 0 or abs(v) >= 100:
        return f"{v:.0f}"
    digits = max(0, 2 - int(math.floor(math.log10(abs(v)))))
    return f"{v:.{digits}f}"
