"""What a benchmark tool plugin implements and exchanges with the core (``aim_benchmark_tools``).

Plain data and a Protocol, like :mod:`aim_core.plugin.providers`; plugins import these
names from :mod:`aim_core`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs

#: Environment of the benchmark container, set by the core (never by the plugin):
BENCH_REPORT_DIR_ENV = "AIM_BENCH_REPORT_DIR"  # directory for the full report (a PVC or an emptyDir)
BENCH_SUMMARY_ENV = "AIM_BENCH_SUMMARY"  # file for the compact summary: the container's termination message
BENCH_API_KEY_ENV = "AIM_BENCH_API_KEY"  # the endpoint's bearer token, when spec.apiKeySecretRef is set


@attrs.frozen
class BenchmarkRequest:
    """One AIMBenchmark run as a tool sees it: the endpoint, the traffic, the bounds.

    ``endpoint`` is a base URL without ``/v1``. Exactly one of ``concurrency`` and
    ``request_rates`` is non-empty. ``max_duration_s`` bounds each scenario x load
    level run, like ``max_requests``; at least one is set. The report directory and the
    summary file are in the environment (:data:`BENCH_REPORT_DIR_ENV`,
    :data:`BENCH_SUMMARY_ENV`), the API key too when there is one
    (:data:`BENCH_API_KEY_ENV`), so a command can be run anywhere by setting them.
    """

    name: str  # the AIMBenchmark's name: a folder name for the report
    endpoint: str
    model: str
    tokenizer: str
    scenarios: tuple[str, ...]  # genai-bench notation: D(in,out), N(..)/(..), U(..)/(..)
    concurrency: tuple[int, ...] = ()
    request_rates: tuple[float, ...] = ()
    max_requests: int | None = None
    max_duration_s: float | None = None
    has_api_key: bool = False
    #: ``s3://BUCKET/PREFIX`` when the report goes to object storage: the tool uploads the report folder to
    #: ``PREFIX/<name>/`` (credentials and ``AWS_ENDPOINT_URL`` are in the environment); None for a volume
    report_uri: str | None = None


@attrs.frozen
class BenchmarkCommand:
    """The tool container's command, args and extra environment (name -> value)."""

    command: Sequence[str]
    args: Sequence[str] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class Percentiles:
    """Latency percentiles in milliseconds; ``None`` where the tool does not report one."""

    p50: float | None = None
    p90: float | None = None
    p99: float | None = None


@attrs.frozen
class BenchmarkResult:
    """Measured results of one scenario at one load level (``status.results[]``)."""

    scenario: str
    concurrency: int | None = None
    request_rate: float | None = None
    completed_requests: int | None = None
    failed_requests: int | None = None
    requests_per_second: float | None = None
    output_tokens_per_second: float | None = None
    ttft_ms: Percentiles | None = None
    inter_token_latency_ms: Percentiles | None = None
    e2e_latency_ms: Percentiles | None = None


class BenchmarkReportError(ValueError):
    """The summary a tool left cannot be read (the run ends with reason ReportUnparsable)."""


@runtime_checkable
class BenchmarkTool(Protocol):
    """Runs a benchmark tool as a Job container and reads its results back.

    The container's last act is writing a compact summary of its report into the file
    named by :data:`BENCH_SUMMARY_ENV` (the operator points it at the termination
    message, 4 KiB at most); the full report goes under :data:`BENCH_REPORT_DIR_ENV`.
    """

    name: str
    image: str  # the default image, e.g. "ghcr.io/org/tool:v1.2.3"

    def unsupported(self, request: BenchmarkRequest) -> str | None:
        """Why this tool cannot run ``request`` (e.g. request rates), or ``None``."""

    def command(self, request: BenchmarkRequest) -> BenchmarkCommand:
        """The container's command line for ``request``."""

    def parse(self, summary: str, request: BenchmarkRequest) -> Sequence[BenchmarkResult]:
        """The results in ``summary``; raises :class:`BenchmarkReportError` when unreadable."""
