"""AIMBenchmarkSweep: benchmark every Ready template of a model and leave a comparison table.

For each template (in turn, or several at once within a GPU budget) the sweep creates a
short-lived AIMService pinned to that template and an AIMBenchmark against it; when the run
finishes, the service is deleted and the next template starts. The runs stay (owned by the
sweep), so every template's ``status.benchmarks`` learns what was measured, and the sweep's
status keeps the comparison table. Immutable: a new sweep is a new object.
"""

from typing import Any

import attrs

from aim_core.api.benchmark import DURATION_MAX_LENGTH, DURATION_PATTERN, AIMBenchmarkResult, AIMBenchmarkSpec
from aim_core.api.common import API_VERSION, TEMPLATE_SCOPES, conditions_field, observed_generation_field, status_field
from aim_core.api.fields import class_meta, field, optional, schema
from aim_core.api.k8s import Condition

SWEEP_STATUS_VALUES = ("Pending", "Running", "Succeeded", "Failed")
SWEEP_TEMPLATE_STATES = ("Waiting", "Deploying", "Benchmarking", "Succeeded", "Failed", "Skipped")
MAX_TEMPLATES = 20


def _without_target() -> type:
    """AIMBenchmarkSpec's fields except ``target``: what every run of the sweep shares (same rules)."""
    fields = {
        a.name: attrs.field(default=a.default, metadata=a.metadata, type=a.type)
        for a in attrs.fields(AIMBenchmarkSpec)
        if a.name != "target"
    }
    cls = attrs.make_class("AIMBenchmarkSweepRunSpec", fields, kw_only=True)
    cls.__module__ = __name__
    rules = class_meta(AIMBenchmarkSpec).cel
    return schema(description="The AIMBenchmark spec every run shares (the target is the sweep's).", cel=rules)(cls)


AIMBenchmarkSweepRunSpec = _without_target()


@attrs.define(kw_only=True)
@schema(description="Settings of the temporary services the sweep creates.")
class AIMBenchmarkSweepServiceSpec:
    runtime_config_name: str | None = optional(description="Runtime config of the temporary services.")
    replicas: int | None = optional(
        description="Replicas of each temporary service (throughput is measured over all of them).",
        minimum=1,
        format="int32",
        schema_default=1,
    )


@attrs.define(kw_only=True)
@schema(
    description="Desired sweep; immutable.",
    cel=[("!has(self.templates) || size(self.templates) > 0", "templates, when set, must name at least one")],
)
class AIMBenchmarkSweepSpec:
    model: str = field(description="AIMModel (else AIMClusterModel) whose templates are compared.", min_length=1)
    templates: list[str] | None = optional(
        description="Only these templates (namespaced first, then cluster), in this order; every Ready "
        "template of the model when unset.",
        max_items=MAX_TEMPLATES,
        list_type="atomic",
    )
    allow_unoptimized: bool | None = optional(
        description="Also sweep preview and unoptimized templates (with templates unset)."
    )
    parallelism: int | None = optional(
        description="Templates benchmarked at once.", minimum=1, maximum=10, format="int32", schema_default=1
    )
    gpu_budget: int | None = optional(
        description="At most this many GPUs held by the sweep's services at once (replicas x the template's "
        "GPUs); a template needing more than the budget is skipped.",
        minimum=1,
        format="int32",
    )
    benchmark: AIMBenchmarkSweepRunSpec = field(  # type: ignore[valid-type]
        description="What every run measures: the AIMBenchmark spec without the target."
    )
    service: AIMBenchmarkSweepServiceSpec | None = optional(description="Settings of the temporary services.")
    deploy_timeout: str | None = optional(
        description="How long a template's service may take to become Ready (and its run to start), e.g. 30m; "
        "past it the template is Failed and the next one starts. Unset: no limit. At most 2562047h.",
        pattern=DURATION_PATTERN,
        max_length=DURATION_MAX_LENGTH,
    )


@attrs.define(kw_only=True)
@schema(description="One template of the sweep and how far it got.")
class AIMBenchmarkSweepTemplate:
    template: str = field(description="Template name.")
    scope: str | None = optional(description="Scope of the template.", enum=TEMPLATE_SCOPES)
    gpu_model: str | None = optional(description="GPU model of the template.")
    gpu_count: int | None = optional(description="GPUs per replica.", format="int32")
    precision: str | None = optional(description="Precision of the template.")
    metric: str | None = optional(description="Optimisation metric of the template.")
    service: str | None = optional(description="The temporary AIMService.")
    benchmark: str | None = optional(description="The AIMBenchmark of this template.")
    start_time: str | None = optional(description="When its service was created.", format="date-time")
    state: str | None = optional(description="How far this template got.", enum=SWEEP_TEMPLATE_STATES)
    message: str | None = optional(description="Why it failed or was skipped.")


@attrs.define(kw_only=True)
@schema(description="One row of the comparison: a template's results at one scenario and load level.")
class AIMBenchmarkSweepRow(AIMBenchmarkResult):
    template: str = field(description="Template name.")
    scope: str | None = optional(description="Scope of the template.", enum=TEMPLATE_SCOPES)
    gpu_model: str | None = optional(description="GPU model of the template.")
    gpu_count: int | None = optional(description="GPUs per replica.", format="int32")
    precision: str | None = optional(description="Precision of the template.")
    metric: str | None = optional(description="Optimisation metric of the template.")
    benchmark: str | None = optional(description="The AIMBenchmark the numbers come from.")


@attrs.define(kw_only=True)
@schema(description="Observed state of a sweep.")
class AIMBenchmarkSweepStatus:
    status: str | None = status_field(SWEEP_STATUS_VALUES)
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    start_time: str | None = optional(description="When the first template started.", format="date-time")
    completion_time: str | None = optional(description="When the last template finished.", format="date-time")
    templates: list[AIMBenchmarkSweepTemplate] | None = optional(
        description="The templates of the sweep, fixed when it starts, in order.", list_type="atomic"
    )
    comparison: list[AIMBenchmarkSweepRow] | None = optional(
        description="The comparison table: per template, scenario and load level, the measured results.",
        list_type="atomic",
    )


@attrs.define(kw_only=True)
@schema(description="A benchmark of every Ready template of a model, one short-lived service at a time.")
class AIMBenchmarkSweep:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMBenchmarkSweep", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMBenchmarkSweepSpec = field(
        description="Desired state.", immutable="spec is immutable; create a new AIMBenchmarkSweep to sweep again"
    )
    status: AIMBenchmarkSweepStatus | None = optional(description="Observed state.")
