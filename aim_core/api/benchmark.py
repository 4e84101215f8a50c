"""AIMBenchmark: one benchmark run against an AIMService or an OpenAI-compatible endpoint.

A run is a Job that runs a benchmark tool (a plugin, see ``aim_bench_*`` hooks) over
every scenario x load level of the spec. Its results land in ``status.results``; the
full report is kept where ``spec.report.uri`` says. A run is immutable: the spec cannot
change, and a finished run never changes its results. Re-running is a new object.
"""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    METRICS,
    TEMPLATE_SCOPES,
    conditions_field,
    observed_generation_field,
    status_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import (
    Condition,
    EnvVar,
    LocalObjectReference,
    ResourceRequirements,
    SecretKeySelector,
    env_list,
)

BENCHMARK_STATUS_VALUES = ("Pending", "Running", "Succeeded", "Failed")
BENCHMARK_FINISHED = ("Succeeded", "Failed")

# genai-bench's traffic notation: D(in,out) fixed lengths; N(mean_in,std_in)/(mean_out,std_out)
# normal; U(min_in,max_in)/(min_out,max_out) uniform. Token counts.
SCENARIO_PATTERN = r"^(D\([0-9]+,[0-9]+\)|[NU]\([0-9]+,[0-9]+\)/\([0-9]+,[0-9]+\))$"
# Go duration groups, each at most 7 digits (Go's longest duration is 2562047h; the operator checks the
# exact bound and reports the field), at most 32 characters in all.
DURATION_PATTERN = r"^([0-9]{1,7}(\.[0-9]{1,9})?(ms|s|m|h))+$"
DURATION_MAX_LENGTH = 32
REPORT_URI_PATTERN = r"^(pvc://[a-z0-9]([-a-z0-9.]*[a-z0-9])?|s3://[a-z0-9][-a-z0-9.]{1,61}[a-z0-9])(/[^ \t\r\n]*)?$"
DEFAULT_HISTORY_LIMIT = 5
MAX_RUNS = 40


@attrs.define(kw_only=True)
@schema(
    description="What to benchmark: an AIMService of the same namespace, or an OpenAI-compatible endpoint.",
    cel=[
        (
            "has(self.serviceName) != has(self.endpoint)",
            "exactly one of serviceName or endpoint must be set",
        ),
        ("!has(self.endpoint) || has(self.model)", "model is required with an explicit endpoint"),
    ],
)
class AIMBenchmarkTargetSpec:
    service_name: str | None = optional(
        description="AIMService of the same namespace; the run waits until it is Ready.",
        min_length=1,
        max_length=253,
    )
    endpoint: str | None = optional(
        description="Base URL of an OpenAI-compatible server (without /v1), e.g. http://llm.example:8000.",
        pattern=r"^https?://[^ \t\r\n]+$",
    )
    model: str | None = optional(
        description="Model name sent in requests; for a service, the model it serves when unset.",
        min_length=1,
    )


@attrs.define(kw_only=True)
@schema(description="Where the full report of the tool is kept.")
class AIMBenchmarkReportSpec:
    uri: str = field(
        description="pvc://CLAIM/PATH (a PersistentVolumeClaim of the namespace and a directory in it) or "
        "s3://BUCKET/PREFIX (the tool uploads; AWS_* credentials and AWS_ENDPOINT_URL from spec.env); "
        "the run's report goes under PATH/<run name>/ or PREFIX/<run name>/.",
        pattern=REPORT_URI_PATTERN,
    )


@attrs.define(kw_only=True)
@schema(
    description="Desired benchmark run; immutable.",
    cel=[
        (
            "has(self.concurrency) != has(self.requestRates)",
            "exactly one of concurrency or requestRates must be set",
        ),
        (
            "has(self.maxRequests) || has(self.maxDuration)",
            "at least one of maxRequests or maxDuration must bound each run",
        ),
        (
            f"size(self.scenarios) * (has(self.concurrency) ? size(self.concurrency) : size(self.requestRates))"
            f" <= {MAX_RUNS}",
            f"scenarios x load levels must be at most {MAX_RUNS}",
        ),
    ],
)
class AIMBenchmarkSpec:
    target: AIMBenchmarkTargetSpec = field(description="Service or endpoint to benchmark.")
    tool: str | None = optional(
        description="Benchmark tool plugin, e.g. guidellm; the operator's default tool when unset.",
        pattern=r"^[a-z0-9][-a-z0-9_]*$",
    )
    image: str | None = optional(description="Image of the tool; the plugin's default when unset.")
    tokenizer: str | None = optional(
        description="Tokenizer for synthetic prompts and token counts: a Hugging Face id or a directory "
        "in the image; the target's model when unset."
    )
    scenarios: list[str] = field(
        description="Traffic scenarios in genai-bench notation (token counts): D(in,out) fixed, "
        "N(mean_in,std_in)/(mean_out,std_out) normal, U(min_in,max_in)/(min_out,max_out) uniform.",
        min_items=1,
        max_items=10,
        pattern=SCENARIO_PATTERN,
        list_type="atomic",
    )
    concurrency: list[int] | None = optional(
        description="Concurrency levels (requests in flight); one run per scenario and level.",
        min_items=1,
        max_items=10,
        minimum=1,
        format="int32",
        list_type="atomic",
    )
    request_rates: list[float] | None = optional(
        description="Request rates in requests per second (Poisson arrivals); one run per scenario and rate.",
        min_items=1,
        max_items=10,
        minimum=0,
        list_type="atomic",
    )
    max_requests: int | None = optional(
        description="Requests per run (scenario x load level).", minimum=1, format="int32"
    )
    max_duration: str | None = optional(
        description="Duration bound per run, e.g. 60s or 5m (at most 2562047h).",
        pattern=DURATION_PATTERN,
        max_length=DURATION_MAX_LENGTH,
    )
    timeout: str | None = optional(
        description="Deadline of the whole run from the Job's start (its activeDeadlineSeconds), e.g. 2h; past it "
        "the Job is stopped and the run fails with reason DeadlineExceeded. Unset: scenarios x load levels x "
        "(maxDuration rounded up to a minute, plus a minute; 24h without maxDuration), plus 15m for start-up "
        "and upload. At most 2562047h.",
        pattern=DURATION_PATTERN,
        max_length=DURATION_MAX_LENGTH,
    )
    api_key_secret_ref: SecretKeySelector | None = optional(
        description="Secret key holding the bearer token the endpoint expects."
    )
    hf_token_secret_ref: SecretKeySelector | None = optional(
        description="Secret key holding a Hugging Face token, for a gated tokenizer."
    )
    report: AIMBenchmarkReportSpec | None = optional(
        description="Where to keep the full report; only the summary in status when unset."
    )
    env: list[EnvVar] | None = env_list(description="Extra environment of the tool container.")
    resources: ResourceRequirements | None = optional(description="Resources of the tool container.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(
        description="Secrets for pulling the tool image, added to the target service's."
    )
    history_limit: int | None = optional(
        description="Finished runs kept per target and namespace; when a run finishes, the oldest "
        "finished runs of the same target beyond this are deleted (the newest run's limit applies).",
        minimum=1,
        format="int32",
        schema_default=DEFAULT_HISTORY_LIMIT,
    )


@attrs.define(kw_only=True)
@schema(description="Percentiles of a latency in milliseconds.")
class AIMBenchmarkPercentiles:
    p50: float | None = optional(description="Median.")
    p90: float | None = optional(description="90th percentile.")
    p99: float | None = optional(description="99th percentile.")


@attrs.define(kw_only=True)
@schema(description="Measured results of one scenario at one load level.")
class AIMBenchmarkResult:
    scenario: str = field(description="The scenario, as written in spec.scenarios.")
    concurrency: int | None = optional(description="Concurrency level of this run.", format="int32")
    request_rate: float | None = optional(description="Request rate of this run (requests per second).")
    completed_requests: int | None = optional(description="Requests that completed.", format="int64")
    failed_requests: int | None = optional(description="Requests that failed.", format="int64")
    requests_per_second: float | None = optional(description="Completed requests per second.")
    output_tokens_per_second: float | None = optional(description="Output tokens per second, all requests.")
    ttft_ms: AIMBenchmarkPercentiles | None = optional(description="Time to first token.")
    inter_token_latency_ms: AIMBenchmarkPercentiles | None = optional(
        description="Inter-token latency (time per output token after the first)."
    )
    e2e_latency_ms: AIMBenchmarkPercentiles | None = optional(description="End-to-end request latency.")


@attrs.define(kw_only=True)
@schema(description="The target as it was when the run started.")
class AIMBenchmarkTargetStatus:
    service_name: str | None = optional(description="AIMService; empty for an explicit endpoint.")
    endpoint: str | None = optional(description="URL the tool was pointed at.")
    model: str | None = optional(description="AIMModel or served model name.")
    template: str | None = optional(description="Template the service ran.")
    template_scope: str | None = optional(description="Scope of the template.", enum=TEMPLATE_SCOPES)
    gpu_model: str | None = optional(description="GPU model of the template.")
    gpu_count: int | None = optional(description="GPUs per replica.", format="int32")
    precision: str | None = optional(description="Precision of the template.")
    metric: str | None = optional(description="Optimisation metric of the template.", enum=METRICS)
    replicas: int | None = optional(description="Replicas of the service.", format="int32")


@attrs.define(kw_only=True)
@schema(description="Where the full report was kept.")
class AIMBenchmarkReportStatus:
    uri: str | None = optional(description="pvc://CLAIM/PATH/<run>/ or s3://BUCKET/PREFIX/<run>/.")


@attrs.define(kw_only=True)
@schema(description="Observed state of a benchmark run.")
class AIMBenchmarkStatus:
    status: str | None = status_field(BENCHMARK_STATUS_VALUES)
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    start_time: str | None = optional(description="When the Job was created.", format="date-time")
    completion_time: str | None = optional(description="When the run finished.", format="date-time")
    tool: str | None = optional(description="Benchmark tool plugin that ran.")
    job_name: str | None = optional(description="Job that runs the benchmark.")
    target: AIMBenchmarkTargetStatus | None = optional(description="Snapshot of the target.")
    results: list[AIMBenchmarkResult] | None = optional(
        description="One entry per scenario x load level.", list_type="atomic"
    )
    report: AIMBenchmarkReportStatus | None = optional(description="Where the full report was kept.")


@attrs.define(kw_only=True)
@schema(description="One benchmark run against an AIMService or an OpenAI-compatible endpoint.")
class AIMBenchmark:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMBenchmark", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMBenchmarkSpec = field(
        description="Desired state.", immutable="spec is immutable; create a new AIMBenchmark to re-run"
    )
    status: AIMBenchmarkStatus | None = optional(description="Observed state.")
