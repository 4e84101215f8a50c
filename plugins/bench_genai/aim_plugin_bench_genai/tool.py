"""genai-bench (sgl-project) as a benchmark tool.

The container runs ``genai-bench benchmark`` once over every scenario and concurrency
level (it iterates both itself), writing its experiment folder (one JSON per scenario x
concurrency, an Excel sheet, plots) under ``$AIM_BENCH_REPORT_DIR/<run name>``. Then
:data:`SUMMARIZE` (Python's standard library only, run by the image's ``python3``) reads
those JSON files and writes one compact line to ``$AIM_BENCH_SUMMARY`` (the termination
message, 4 KiB at most: scenarios by index, p90 of TTFT only, 0.1 ms or whole ms when that does not fit) and to the log; :meth:`GenaiBench.parse` turns that line into
results. The summary exits non-zero when genai-bench left no results or every request
failed, so the Job fails with genai-bench's last log lines.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Sequence
from typing import Any

from aim_core import (
    BENCH_API_KEY_ENV,
    BENCH_REPORT_DIR_ENV,
    BENCH_SUMMARY_ENV,
    BenchmarkCommand,
    BenchmarkReportError,
    BenchmarkRequest,
    BenchmarkResult,
    Percentiles,
)

IMAGE = "ghcr.io/moirai-internal/genai-bench:v0.0.3"
SUMMARY_FORMAT = "aim-genai-bench/v1"
NO_BOUND_REQUESTS = 1_000_000  # genai-bench wants both bounds; this one never binds
NO_BOUND_MINUTES = 24 * 60

# Runs in the tool image: standard library only. argv[1] is the experiment folder.
SUMMARIZE = r"""
import glob, json, os, sys
folder = sys.argv[1]
raw = []
scenarios = []
errors = {}
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        continue
    agg = data.get("aggregated_metrics") if isinstance(data, dict) else None
    if not isinstance(agg, dict) or "scenario" not in agg:
        continue
    scale = 1000.0 if data.get("_time_unit", "s") == "s" else 1.0
    stats = agg.get("stats") or {}
    def pct(name, qs):
        s = stats.get(name) or {}
        return [None if s.get(q) is None else s[q] * scale for q in qs]
    for code, n in (agg.get("error_codes_frequency") or {}).items():
        errors[str(code)] = errors.get(str(code), 0) + n
    if agg["scenario"] not in scenarios:
        scenarios.append(agg["scenario"])
    raw.append([
        scenarios.index(agg["scenario"]), agg.get("num_concurrency"), agg.get("num_completed_requests"),
        agg.get("num_error_requests"), agg.get("requests_per_second") or 0.0,
        agg.get("mean_output_throughput_tokens_per_s") or 0.0,
        pct("ttft", ("p50", "p90", "p99")), pct("tpot", ("p50", "p99")), pct("e2e_latency", ("p50", "p99")),
    ])
def rounded(v, digits):
    if isinstance(v, list):
        return [rounded(x, digits) for x in v]
    if isinstance(v, float):
        return round(v, digits) if digits else int(round(v))
    return v
for digits in (1, 0):  # 0.1 ms first; whole numbers when that does not fit in the termination message
    runs = [r[:4] + [round(r[4], 3)] + [rounded(x, digits) for x in r[5:]] for r in raw]
    line = json.dumps({"format": "@FORMAT@", "scenarios": scenarios, "runs": runs}, separators=(",", ":"))
    if len(line.encode()) <= 4096:
        break
with open(os.environ["@SUMMARY_ENV@"], "w") as f:
    f.write(line)
print(line, flush=True)
if not runs:
    sys.exit("genai-bench left no results in " + folder)
if not any(r[2] for r in runs):
    sys.exit("every request failed (HTTP status: count) " + json.dumps(errors))
""".replace("@FORMAT@", SUMMARY_FORMAT).replace("@SUMMARY_ENV@", BENCH_SUMMARY_ENV)


class GenaiBench:
    """The ``genai-bench`` benchmark tool."""

    name = "genai-bench"
    image = IMAGE

    def unsupported(self, request: BenchmarkRequest) -> str | None:
        if request.request_rates:
            return (
                "genai-bench has no request-rate load (it runs fixed concurrency levels, each user sending its next "
                "request when the last one ends); set spec.concurrency instead of spec.requestRates, or spec.tool "
                "to a tool plugin that takes rates"
            )
        return None

    def command(self, request: BenchmarkRequest) -> BenchmarkCommand:
        minutes = NO_BOUND_MINUTES if request.max_duration_s is None else max(1, math.ceil(request.max_duration_s / 60))
        argv = [
            "genai-bench", "benchmark",
            "--api-backend", "openai",
            "--api-base", request.endpoint,
            "--task", "text-to-text",
            "--api-model-name", request.model,
            "--model-tokenizer", request.tokenizer,
            "--max-requests-per-run", str(request.max_requests or NO_BOUND_REQUESTS),
            "--max-time-per-run", str(minutes),
        ]  # fmt: skip
        for scenario in request.scenarios:
            argv += ["--traffic-scenario", scenario]
        for level in request.concurrency:
            argv += ["--num-concurrency", str(level)]
        if request.report_uri:  # s3://BUCKET/PREFIX: genai-bench uploads the folder itself (boto3 in the image)
            bucket, _, prefix = request.report_uri.removeprefix("s3://").partition("/")
            key = "/".join(p for p in (prefix.strip("/"), request.name) if p)
            argv += ["--upload-results", "--storage-provider", "aws", "--storage-bucket", bucket]
            argv += ["--storage-prefix", key]
        report = f'"${BENCH_REPORT_DIR_ENV}"'
        folder = f'"${BENCH_REPORT_DIR_ENV}/{request.name}"'
        key = f'"${BENCH_API_KEY_ENV}"' if request.has_api_key else "none"
        script = "\n".join(
            [
                "set -e",
                f"{shlex.join(argv)} --api-key {key} --experiment-base-dir {report}"
                f" --experiment-folder-name {shlex.quote(request.name)} --log-dir {folder}",
                f"exec python3 -c {shlex.quote(SUMMARIZE)} {folder}",
            ]
        )
        return BenchmarkCommand(
            command=["/bin/sh", "-c", script], env={"HF_HUB_DISABLE_TELEMETRY": "1", "COLUMNS": "160"}
        )

    def parse(self, summary: str, request: BenchmarkRequest) -> Sequence[BenchmarkResult]:
        data = _summary_line(summary)
        runs = data.get("runs")
        if not isinstance(runs, list) or not runs:
            raise BenchmarkReportError("the genai-bench summary holds no runs")
        try:
            return [_result(run, data.get("scenarios") or []) for run in runs]
        except (TypeError, ValueError, IndexError) as exc:
            raise BenchmarkReportError(f"a run in the genai-bench summary is malformed: {exc}") from None


def _summary_line(summary: str) -> dict[str, Any]:
    """The last line of ``summary`` that is our JSON (a log tail may precede it)."""
    for line in reversed(summary.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("format") == SUMMARY_FORMAT:
            return data
    head = summary.strip()[:200] or "(empty)"
    raise BenchmarkReportError(f"no {SUMMARY_FORMAT} summary line in the container's termination message: {head}")


def _percentiles(values: Any) -> Percentiles | None:
    """``[p50, p90, p99]`` or ``[p50, p99]`` (the summary keeps p90 of TTFT only, to fit in 4 KiB)."""
    if values is None:
        return None
    numbers = [None if v is None else float(v) for v in values]
    if len(numbers) == 2:
        return Percentiles(p50=numbers[0], p99=numbers[1])
    p50, p90, p99 = numbers
    return Percentiles(p50=p50, p90=p90, p99=p99)


def _result(run: list[Any], scenarios: list[Any]) -> BenchmarkResult:
    scenario, concurrency, completed, failed, rps, otps, ttft, tpot, e2e = run
    if isinstance(scenario, int) and not isinstance(scenario, bool):
        scenario = scenarios[scenario]
    if not isinstance(scenario, str):
        raise TypeError(f"scenario {scenario!r} is not a string")
    return BenchmarkResult(
        scenario=scenario,
        concurrency=None if concurrency is None else int(concurrency),
        completed_requests=None if completed is None else int(completed),
        failed_requests=None if failed is None else int(failed),
        requests_per_second=float(rps),
        output_tokens_per_second=float(otps),
        ttft_ms=_percentiles(ttft),
        inter_token_latency_ms=_percentiles(tpot),
        e2e_latency_ms=_percentiles(e2e),
    )
