"""Statistics, the targets, and the printed results table."""

from __future__ import annotations

import math
import statistics
from typing import Any

# (key, what, limit): a target is met when the measured value is <= limit.
TARGETS = (
    (
        "first_all",
        "first reconcile, ready dependencies: requests per service",
        4.0,
    ),  # finalizer (F13), isvc, status, Event
    ("first_no_events", "  the same, not counting Event posts", 3.0),
    ("steady_writes", "steady state: writes (worst pass)", 0.0),
    ("plan_p99", "plan: p99 per service (us)", 1000.0),
)


def summary(samples: list[float]) -> dict[str, float]:
    """count, mean, median, p90, p99 (nearest rank) and max."""
    if not samples:
        return {"count": 0}
    ordered = sorted(samples)

    def rank(q: float) -> float:
        return ordered[max(0, math.ceil(q * len(ordered)) - 1)]

    return {
        "count": len(ordered),
        "mean": statistics.fmean(ordered),
        "median": statistics.median(ordered),
        "p90": rank(0.90),
        "p99": rank(0.99),
        "max": ordered[-1],
    }


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    first = results["first_reconcile"]["per_service"]
    measured = {
        "first_all": first["total"],
        "first_no_events": first["total_without_event_posts"],
        "steady_writes": max((p["operator"]["writes"] for p in results["steady_state"]), default=0),
        "plan_p99": results["plan_time"]["plan_us"].get("p99", math.inf),
    }
    return [
        {"target": what, "limit": limit, "measured": measured[key], "met": measured[key] <= limit}
        for key, what, limit in TARGETS
    ]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"
    return str(value)


def _table(rows: list[list[Any]], header: list[str]) -> str:
    cells = [header] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(results: dict[str, Any]) -> str:
    cfg, out = results["config"], []
    creation = f"{cfg['rate']}/s" if cfg["rate"] else "burst"
    out.append(
        f"AIMService benchmark: {cfg['services']} services in {cfg['namespaces']} namespaces, "
        f"{cfg['workers']} workers, routing {'on' if cfg['routing'] else 'off'}, creation {creation}"
    )

    lat = results["latency"]
    out.append("\nTime from AIMService stored to InferenceService stored (ms)")
    parts = lat.get("breakdown_ms") or {}
    out.append(
        _table(
            [
                [name, s.get("median"), s.get("p90"), s.get("p99"), s.get("max")]
                for name, s in (
                    ("create -> InferenceService", lat["ms"]),
                    ("  1 watch: stored -> in operator store", parts.get("watch", {})),
                    ("  2 queue: in store -> reconcile starts", parts.get("queue", {})),
                    ("  3 reconcile starts -> InferenceService", parts.get("reconcile", {})),
                )
            ],
            ["", "median", "p90", "p99", "max"],
        )
    )
    out.append(
        f"all {lat['applied']}/{lat['created']} InferenceServices applied {lat['wall_s']:.2f} s after the "
        f"first create ({lat['throughput_per_s']:.0f} services/s); settled after {lat['settled_s']:.2f} s"
    )

    out.append("\nOperator API requests (kopf watch streams and discovery excluded)")
    phases = [
        ("startup (seeded objects)", results["startup"]),
        ("first reconcile", results["first_reconcile"]),
        *((p["name"], p) for p in results["steady_state"][:1]),
    ]
    if results.get("runtime_ready"):
        phases.append(("InferenceServices turn Ready", results["runtime_ready"]))
    phases += [(p["name"], p) for p in results["steady_state"][1:]]
    rows = []
    for name, phase in phases:
        o, per, cpu = phase["operator"], phase.get("per_service") or {}, phase.get("cpu_s") or {}
        rows.append(
            [
                name,
                phase.get("seconds", "-"),
                phase.get("reconciles", "-"),
                o["total"],
                o["reads"],
                o["writes"],
                o["event_posts"],
                per.get("total", "-"),
                per.get("total_without_event_posts", "-"),
                per.get("operator_cpu_ms", "-"),
                cpu.get("emulator_and_driver", "-"),
            ]
        )
    out.append(
        _table(
            rows,
            [
                "phase",
                "s",
                "reconciles",
                "requests",
                "reads",
                "writes",
                "Event posts",
                "per svc",
                "per svc w/o Event posts",
                "operator CPU ms/svc",
                "emulator CPU s",
            ],
        )
    )
    for name, phase in phases[1:]:
        detail = ", ".join(f"{k}: {v}" for k, v in phase["operator"]["by_request"].items()) or "none"
        out.append(f"  {name}: {detail}")

    pt = results["plan_time"]
    out.append(f"\nCPU per service, no I/O ({pt['services']} services x {pt['rounds']} rounds, microseconds)")
    out.append(
        _table(
            [
                [label, s.get("mean"), s.get("median"), s.get("p99"), s.get("max")]
                for label, s in (
                    ("observe (store reads)", pt["observe_us"]),
                    ("plan (pure)", pt["plan_us"]),
                    ("observe + plan", pt["observe_plan_us"]),
                    ("engine.reconcile (no-op)", pt["reconcile_us"]),
                )
            ],
            ["", "mean", "median", "p99", "max"],
        )
    )
    out.append(
        f"  requests the no-I/O passes would have sent per pass: observe {pt['observe_requests_per_pass']}, "
        f"whole reconcile {pt['reconcile_requests_per_pass']}"
    )

    log = results.get("log") or {}
    if "operator_info_lines" in log:
        out.append(
            f"\nOperator log lines at INFO and above: {log['operator_info_lines']} "
            f"({log['operator_info_lines_per_service']:.2f} per service; target under 5), by logger: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(log["operator_info_lines_by_logger"].items()))
        )
    if log.get("counts"):
        out.append(
            "\nWarnings and errors logged during the run: "
            + ", ".join(f"{k}: {v}" for k, v in sorted(log["counts"].items()))
        )
        out += [f"  {line}" for line in log.get("first") or []]

    out.append("\nTargets")
    out.append(
        _table(
            [[t["target"], t["limit"], t["measured"], "met" if t["met"] else "MISSED"] for t in results["targets"]],
            ["", "limit", "measured", ""],
        )
    )
    return "\n".join(out)
