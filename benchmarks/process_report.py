"""Targets and the printed table of the separate-process benchmark (``bench_process.py``)."""

from __future__ import annotations

import math
from typing import Any

# (key, what, limit): met when the measured value is <= limit (issue 9).
TARGETS = (
    ("vs_bare", "burst wall time / bare client's", 1.3),
    ("burst_p99_ms", "burst: create -> InferenceService p99 (ms)", 2000.0),
    ("paced_median_ms", "one at a time: create -> InferenceService median (ms)", 15.0),
    ("cpu_ms", "operator CPU per new service (ms, burst)", 5.0),
    ("requests", "API requests per new service (burst)", 4.0),  # finalizer (F13), isvc, status, Event
    ("quiet_requests", "quiet minute: requests beyond open watches", 0.0),
    ("quiet_writes", "quiet minute: writes", 0.0),
    ("rss_10k", "operator RSS with the most AIM objects (MiB)", 200.0),
)


def _measured(results: dict[str, Any]) -> dict[str, float]:
    burst, paced, quiet = results["burst"], results["paced"], results["quiet"]
    return {
        "vs_bare": burst.get("vs_bare") or math.inf,
        "burst_p99_ms": burst["latency_ms"].get("p99", math.inf),
        "paced_median_ms": paced["latency_ms"].get("median", math.inf),
        "cpu_ms": burst["operator_cpu_ms_per_service"],
        "requests": burst["requests_per_service"],
        "quiet_requests": quiet["requests_per_minute"],
        "quiet_writes": quiet["writes_per_minute"],
        "rss_10k": max(m.get("VmRSS", math.inf) for m in results["memory"][1:] or results["memory"]),
    }


def check_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    measured = _measured(results)
    return [
        {"target": what, "limit": limit, "measured": measured[key], "met": measured[key] <= limit}
        for key, what, limit in TARGETS
    ]


def _f(value: Any, digits: int = 2) -> str:
    if isinstance(value, float):
        if math.isinf(value):
            return "-"
        return f"{value:,.{digits}f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def _lat(phase: dict[str, Any]) -> str:
    ms = phase["latency_ms"]
    if not ms.get("count"):
        return "-"
    return f"{_f(ms['median'], 1)} / {_f(ms['p99'], 1)} ms"


def render(results: dict[str, Any]) -> str:
    cfg, env = results["config"], results["environment"]
    burst, paced, quiet = results["burst"], results["paced"], results["quiet"]
    bare = results.get("bare") or {}
    mode = f"{cfg['rate']}/s" if cfg["rate"] else f"at once, {cfg['threads']} threads"
    lines = [
        f"Separate processes: emulator ({'TLS' if cfg['tls'] else 'plain HTTP'}), operator (aim-engine run, "
        f"{cfg['workers']} workers), driver; commit {env.get('commit')}; load average "
        f"{env.get('loadavg_start')} -> {env.get('loadavg_end')}",
        "",
        f"burst: {burst['services']} services {mode}  (load {burst['loadavg']})",
        f"  wall time first create -> last InferenceService  {_f(burst['wall_s'])} s"
        + (
            f"   bare client {_f(bare['wall_s'])} s (load {bare['loadavg']}): {_f(burst.get('vs_bare'))}x"
            if bare
            else ""
        ),
        f"  create -> InferenceService median / p99           {_lat(burst)}",
        f"  operator CPU per service                          {_f(burst['operator_cpu_ms_per_service'])} ms"
        f"   (emulator {_f(burst['emulator_cpu_ms_per_service'])} ms"
        + (f", for the bare client {_f(bare['emulator_cpu_ms_per_service'])} ms" if bare else "")
        + ")",
        f"  API requests per service                          {_f(burst['requests_per_service'])}"
        f"   (writes {_f(burst['writes_per_service'])})",
    ]
    lines += [f"      {v:6.2f}  {k}" for k, v in burst["by_request_per_service"].items()]
    lines += [
        f"paced: {paced['services']} services one at a time  (load {paced['loadavg']})",
        f"  create -> InferenceService median / p99           {_lat(paced)}",
        f"  operator CPU per service                          {_f(paced['operator_cpu_ms_per_service'])} ms",
        f"  API requests per service                          {_f(paced['requests_per_service'])}",
        f"quiet: {_f(quiet['seconds'], 0)} s, {quiet['services']} services, InferenceServices not Ready",
        f"  requests / writes per minute                      {_f(quiet['requests_per_minute'])} / "
        f"{_f(quiet['writes_per_minute'])}   (watch requests started: {_f(quiet['watch_requests_per_minute'])})",
    ]
    lines += [f"      {v:8.1f}  {k}" for k, v in quiet["by_request_per_minute"].items()]
    lines.append(f"  operator CPU per minute                           {_f(quiet['operator_cpu_s_per_minute'])} s")
    for reading in results["memory"]:
        again = ", operator restarted" if reading.get("restarted") else ""
        lines.append(
            f"memory with {reading['aim_services']} AIMServices{again}: VmRSS {_f(reading.get('VmRSS'), 0)} MiB, "
            f"VmHWM {_f(reading.get('VmHWM'), 0)} MiB"
        )
    profile = burst.get("profile")
    if profile and profile.get("samples"):
        lines += [
            "",
            f"profile of the operator in the burst ({profile['samples']} samples):",
            "  own time by package:  " + ", ".join(f"{n} {p}%" for n, p in profile["own_by_package_pct"]),
            "  top functions (own %):",
        ]
        lines += [f"    {p:5.1f}  {name}" for name, p in profile["top_own_pct"][:15]]
    if results.get("operator_log"):
        lines.append(f"operator log: {results['operator_log']}")
    lines += ["", "Targets:"]
    for t in results["targets"]:
        lines.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {_f(t['measured'])} (<= {t['limit']})")
    return "\n".join(lines)


def render_big_cluster(results: dict[str, Any]) -> str:
    """The ``--big-cluster`` run: startup, burst and restart in a cluster of other workloads."""
    cfg, env = results["config"], results["environment"]
    startup, burst = results["startup"], results["burst"]
    lines = [
        f"Big cluster: {cfg['unrelated_secrets']} Secrets of {cfg['unrelated_secret_kib']} KiB and "
        f"{cfg['unrelated_pods']} Pods of other workloads; commit {env.get('commit')}; load average "
        f"{env.get('loadavg_start')} -> {env.get('loadavg_end')}",
        f"startup (lists everything, reconciles the seeded objects): {_f(startup['seconds'])} s, operator CPU "
        f"{_f(startup['operator_cpu_s'])} s, VmHWM {_f(startup['memory_mb'].get('VmHWM'), 0)} MiB",
        f"burst: {burst['services']} services, operator CPU per service {_f(burst['operator_cpu_ms_per_service'])} ms, "
        f"{_f(burst['requests_per_service'])} requests per service, p99 {_lat(burst)}",
    ]
    for reading in results["memory"]:
        again = ", operator restarted" if reading.get("restarted") else ""
        lines.append(
            f"memory with {reading['aim_services']} AIMServices{again}: VmRSS {_f(reading.get('VmRSS'), 0)} MiB, "
            f"VmHWM {_f(reading.get('VmHWM'), 0)} MiB"
        )
    if results.get("operator_log"):
        lines.append(f"operator log: {results['operator_log']}")
    lines += ["", "Targets:"]
    for t in results["targets"]:
        lines.append(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {_f(t['measured'])} (<= {_f(t['limit'])})")
    return "\n".join(lines)
