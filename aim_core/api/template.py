"""AIMServiceTemplate and AIMClusterServiceTemplate: runtime profiles of a model."""

from typing import Any

import attrs

from aim_core.api.benchmark import AIMBenchmarkResult
from aim_core.api.common import (
    API_VERSION,
    METRICS,
    PRECISIONS,
    PROFILE_TYPES,
    AIMCustomProfile,
    AIMHardwareRequirements,
    AIMModelSource,
    AIMProfile,
    AIMResolvedReference,
    conditions_field,
    observed_generation_field,
    runtime_config_name_field,
    status_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import (
    Condition,
    EnvVar,
    LocalObjectReference,
    NodeAffinity,
    ResourceRequirements,
    env_list,
)


@attrs.define(kw_only=True)
@schema(description="Desired state shared by namespaced and cluster templates.")
class AIMServiceTemplateSpecCommon:
    model_name: str = field(
        description="Name of the AIMModel or AIMClusterModel this template serves.",
        min_length=1,
        immutable="model name is immutable",
    )
    metric: str | None = optional(description="Optimisation goal.", enum=METRICS, immutable="metric is immutable")
    precision: str | None = optional(
        description="Numeric precision.", enum=PRECISIONS, immutable="precision is immutable"
    )
    hardware: AIMHardwareRequirements | None = optional(
        description="Hardware per replica.", immutable="hardware is immutable"
    )
    type: str | None = optional(description="Optimisation level.", enum=PROFILE_TYPES)
    profile_id: str | None = optional(description="AIM profile to use; discovery looks it up directly.")
    aim_id: str | None = optional(description="AIM product family, e.g. org/name.")
    model_id: str | None = optional(description="Model or Hugging Face repo id of the weights.")
    custom_profile: AIMCustomProfile | None = optional(description="Inline engine profile.")
    model_sources: list[AIMModelSource] | None = optional(
        description="Model weights this template needs; skips discovery when given."
    )
    env: list[EnvVar] | None = env_list(description="Inference container environment.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(
        description="Secrets for pulling container images."
    )
    service_account_name: str | None = optional(description="Service account of workloads run for this template.")
    resources: ResourceRequirements | None = optional(
        description="Default container resources of services using this template."
    )
    runtime_config_name: str | None = runtime_config_name_field()


@attrs.define(kw_only=True)
@schema(description="Model caching of a namespaced template.")
class AIMServiceTemplateCachingConfig:
    enabled: bool | None = optional(description="Cache the model weights for this template.", schema_default=False)
    env: list[EnvVar] | None = env_list(description="Environment for the cache downloads.")


@attrs.define(kw_only=True)
@schema(description="Desired state of a namespaced service template.")
class AIMServiceTemplateSpec(AIMServiceTemplateSpecCommon):
    caching: AIMServiceTemplateCachingConfig | None = optional(description="Model caching for this template.")


@attrs.define(kw_only=True)
@schema(description="Desired state of a cluster-wide service template (no caching).")
class AIMClusterServiceTemplateSpec(AIMServiceTemplateSpecCommon):
    pass


@attrs.define(kw_only=True)
@schema(description="Retry bookkeeping of the discovery job.")
class AIMDiscoveryState:
    attempts: int | None = optional(description="Discovery jobs started so far.", format="int32")
    last_attempt_time: str | None = optional(
        description="When the latest discovery job was created.", format="date-time"
    )
    last_failure_reason: str | None = optional(description="Why the latest discovery failed.")
    spec_hash: str | None = optional(description="Hash of the discovery inputs; a change resets the backoff.")


@attrs.define(kw_only=True)
@schema(description="The latest measured results of a template at one scenario and load level.")
class AIMTemplateBenchmarkSummary(AIMBenchmarkResult):
    replicas: int | None = optional(description="Replicas of the service during the run.", format="int32")
    benchmark: str | None = optional(description="The AIMBenchmark the numbers come from.")
    namespace: str | None = optional(description="Namespace of that AIMBenchmark.")
    completion_time: str | None = optional(description="When that run finished.", format="date-time")


@attrs.define(kw_only=True)
@schema(description="Observed state of a service template.")
class AIMServiceTemplateStatus:
    status: str | None = status_field()
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    hardware_summary: str | None = optional(description="Hardware display text, e.g. 2 x MI300X.")
    profile: AIMProfile | None = optional(description="Profile found by discovery.")
    model_sources: list[AIMModelSource] | None = optional(description="Model weights the template needs.")
    resolved_hardware: AIMHardwareRequirements | None = optional(
        description="Hardware after merging spec, profile and defaults."
    )
    resolved_node_affinity: NodeAffinity | None = optional(description="Node affinity computed for GPU scheduling.")
    resolved_model: AIMResolvedReference | None = optional(description="Model in use.")
    resolved_runtime_config: AIMResolvedReference | None = optional(description="Runtime config in use.")
    resolved_cache: AIMResolvedReference | None = optional(description="Template cache in use.")
    discovery: AIMDiscoveryState | None = optional(description="Discovery retry state.")
    discovery_job: AIMResolvedReference | None = optional(description="The discovery job.")
    benchmarks: list[AIMTemplateBenchmarkSummary] | None = optional(
        description="Latest results of the Succeeded AIMBenchmarks that ran this template, per scenario and "
        "load level (kept by the template controller; read by measured ranking).",
        max_items=20,
        list_type="atomic",
    )
    benchmarks_note: str | None = optional(
        description="Which AIMBenchmarks status.benchmarks comes from, and what was left out: runs from namespaces "
        "the cluster runtime config does not trust (cluster templates), measurements over the 20-entry cap."
    )


@attrs.define(kw_only=True)
@schema(description="A namespaced runtime profile of an AIM model.")
class AIMServiceTemplate:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMServiceTemplate", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMServiceTemplateSpec = field(description="Desired state.")
    status: AIMServiceTemplateStatus | None = optional(description="Observed state.")


@attrs.define(kw_only=True)
@schema(description="A cluster-wide runtime profile of an AIM model.")
class AIMClusterServiceTemplate:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMClusterServiceTemplate", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMClusterServiceTemplateSpec = field(description="Desired state.")
    status: AIMServiceTemplateStatus | None = optional(description="Observed state.")
