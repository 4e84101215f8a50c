"""AIMService: a running inference endpoint for one model and template."""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    CACHING_MODES,
    METRICS,
    PRECISIONS,
    SOURCE_URI_PATTERN,
    AIMHardwareRequirements,
    AIMMeasuredPreference,
    AIMModelSource,
    AIMResolvedReference,
    AIMStorageConfig,
    affinity_field,
    conditions_field,
    node_selector_field,
    observed_generation_field,
    runtime_config_name_field,
    status_field,
    tolerations_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import (
    Affinity,
    Condition,
    EnvVar,
    LocalObjectReference,
    ResourceRequirements,
    Toleration,
    env_list,
)
from aim_core.api.routing import AIMRuntimeRoutingConfig

SERVICE_STATUS_VALUES = ("Pending", "Starting", "Running", "Degraded", "Failed")

_CACHING_ALIASES = {"Always": "Shared", "Auto": "Shared", "Never": "Dedicated"}

# --- model selection -------------------------------------------------------


@attrs.define(kw_only=True)
@schema(
    description="A model defined inline by base image, sources and hardware.",
    cel=[("size(self.modelSources) >= 1", "at least one model source must be specified")],
)
class AIMServiceModelCustom:
    base_image: str = field(description="AIM base image used for the created model.")
    model_sources: list[AIMModelSource] = field(description="The model weights to serve.", min_items=1, max_items=1)
    hardware: AIMHardwareRequirements = field(description="Hardware of the created model.")


@attrs.define(kw_only=True)
@schema(
    description="Which model to serve: by name, by image, or defined inline.",
    cel=[
        (
            "(has(self.name) ? 1 : 0) + (has(self.image) ? 1 : 0) + (has(self.custom) ? 1 : 0) == 1",
            "exactly one of name, image, or custom must be specified",
        )
    ],
)
class AIMServiceModel:
    name: str | None = optional(description="An AIMModel, else an AIMClusterModel, of this name.")
    image: str | None = optional(description="A model image; a model is found or created for it.")
    custom: AIMServiceModelCustom | None = optional(description="An inline custom model.")


@attrs.define(kw_only=True)
@schema(description="Template choice for a service.")
class AIMServiceTemplateConfig:
    name: str | None = optional(description="Template to use; chosen automatically when unset.")
    allow_unoptimized: bool | None = optional(description="Let automatic selection pick unoptimized templates.")
    prefer_measured: AIMMeasuredPreference | None = optional(
        description="Let automatic selection prefer the template that measured best (opt-in; overrides the "
        "runtime config's templateSelection.preferMeasured)."
    )


@attrs.define(kw_only=True)
@schema(description="Caching behaviour of a service.")
class AIMServiceCachingConfig:
    mode: str | None = optional(
        description="Shared reuses cache assets, Dedicated owns them; Always/Auto/Never are legacy.",
        enum=CACHING_MODES,
        schema_default="Shared",
    )


@attrs.define(kw_only=True)
@schema(description="Template parameters overridden by a service.")
class AIMServiceOverrides:
    metric: str | None = optional(description="Optimisation goal.", enum=METRICS, immutable="metric is immutable")
    precision: str | None = optional(
        description="Numeric precision.", enum=PRECISIONS, immutable="precision is immutable"
    )
    hardware: AIMHardwareRequirements | None = optional(
        description="Hardware per replica.", immutable="hardware is immutable"
    )


# --- autoscaling -----------------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Which per-pod metric to collect and from where.")
class AIMServicePodMetric:
    backend: str | None = optional(
        description="Metrics backend.", enum=("opentelemetry",), schema_default="opentelemetry"
    )
    server_address: str | None = optional(description="Address of the metrics backend.")
    metric_names: list[str] | None = optional(description="Metrics pods send to the backend.")
    query: str | None = optional(description="Backend query returning the metric value.")
    operation_over_time: str | None = optional(description="Aggregation over time, e.g. last_one, avg, max.")


@attrs.define(kw_only=True)
@schema(description="Target value the autoscaler keeps the metric at.")
class AIMServiceMetricTarget:
    type: str = field(description="How to read the target.", enum=("Value", "AverageValue", "Utilization"))
    value: str | None = optional(description="Absolute target (quantity) for type Value.")
    average_value: str | None = optional(description="Per-pod average target (quantity).")
    average_utilization: int | None = optional(description="Per-pod average target in percent.", format="int32")


@attrs.define(kw_only=True)
@schema(description="A metric measured on every pod of the service.")
class AIMServicePodMetricSource:
    metric: AIMServicePodMetric = field(description="Metric identification and backend.")
    target: AIMServiceMetricTarget = field(description="Target value.")


@attrs.define(kw_only=True)
@schema(description="One autoscaling metric.")
class AIMServiceMetricsSpec:
    type: str = field(description="Metric source type.", enum=("PodMetric",))
    pod_metric: AIMServicePodMetricSource | None = optional(
        description="Per-pod metric, for type PodMetric.", json_name="podmetric"
    )


@attrs.define(kw_only=True)
@schema(description="KEDA autoscaling on custom metrics.")
class AIMServiceAutoScaling:
    metrics: list[AIMServiceMetricsSpec] | None = optional(description="Metrics to scale on.")


# --- LoRA adapters ---------------------------------------------------------

#: An adapter's name is a model name of the OpenAI API: clients select it with ``"model": NAME``.
#: Letters, digits and ``. _ : / -``, starting and ending with a letter or digit, at most 128 characters
#: (no ``=``: vLLM's ``--lora-modules`` reads ``NAME=PATH``; no spaces: request bodies and logs).
ADAPTER_NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._:/-]*[A-Za-z0-9])?$"
#: The values vLLM accepts for ``--max-lora-rank``.
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
MAX_ADAPTERS = 32


@attrs.define(kw_only=True)
@schema(description="A LoRA adapter served beside the base model under its own model name.")
class AIMServiceAdapter:
    name: str = field(
        description="Model name that selects the adapter in OpenAI API requests; unique in the service "
        "and different from the base model's name.",
        min_length=1,
        max_length=128,
        pattern=ADAPTER_NAME_PATTERN,
    )
    source_uri: str = field(
        description="Where the adapter's weights are: hf://org/adapter or s3://bucket/key.",
        min_length=1,
        pattern=SOURCE_URI_PATTERN,
    )
    env: list[EnvVar] | None = env_list(description="Environment for the download, e.g. HF_TOKEN or AWS credentials.")
    retention_priority: int | None = optional(
        description="Retention priority of the adapter's artifact when the service creates it.",
        minimum=0,
        format="int32",
    )


@attrs.define(kw_only=True)
@schema(description="vLLM limits for the adapters of a service; derived from the adapters when unset.")
class AIMServiceAdapterLimits:
    max_loaded: int | None = optional(
        description="Adapters loaded on the GPU at once (vLLM --max-loras); the number of adapters when unset.",
        minimum=1,
        format="int32",
    )
    max_rank: int | None = optional(
        description="Highest LoRA rank accepted (vLLM --max-lora-rank); the highest rank of the adapters when unset.",
        enum=LORA_RANKS,
        format="int32",
    )


# --- spec ------------------------------------------------------------------


@attrs.define(kw_only=True)
@schema(
    description="Desired state of an AIMService.",
    cel=[
        (
            "!has(self.adapters) || !has(self.model.name) || self.adapters.all(a, a.name != self.model.name)",
            "an adapter's name must differ from spec.model.name: the model name selects the base model",
        )
    ],
)
class AIMServiceSpec:
    model: AIMServiceModel = field(
        description="Model to serve.", immutable="model selection is immutable after creation"
    )
    template: AIMServiceTemplateConfig | None = optional(
        description="Template selection.",
        immutable="template selection is immutable after creation",
    )
    caching: AIMServiceCachingConfig | None = optional(
        description="Caching behaviour; Shared when unset.",
        immutable="caching mode is immutable after creation",
    )
    cache_model: bool | None = optional(description="Deprecated and ignored; use caching.mode.", deprecated=True)
    replicas: int | None = optional(description="Fixed replica count.", schema_default=1, format="int32")
    min_replicas: int | None = optional(description="Lower autoscaling bound.", minimum=1, format="int32")
    max_replicas: int | None = optional(description="Upper autoscaling bound.", minimum=1, format="int32")
    auto_scaling: AIMServiceAutoScaling | None = optional(description="Metric-based autoscaling.")
    runtime_config_name: str | None = runtime_config_name_field()
    resources: ResourceRequirements | None = optional(
        description="Container resources; win over template and model values."
    )
    overrides: AIMServiceOverrides | None = optional(description="Template parameter overrides.")
    env: list[EnvVar] | None = env_list(description="Inference container environment; wins over all other sources.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(description="Secrets for pulling the AIM images.")
    service_account_name: str | None = optional(description="Service account of the inference pods.")
    priority_class_name: str | None = optional(description="Priority class of the inference pods.")
    node_selector: dict[str, str] | None = node_selector_field("inference pods")
    tolerations: list[Toleration] | None = tolerations_field("inference pods")
    affinity: Affinity | None = affinity_field("inference pods")
    routing: AIMRuntimeRoutingConfig | None = optional(description="Routing settings; win over runtime config values.")
    storage: AIMStorageConfig | None = optional(description="Storage settings; win over runtime config values.")
    adapters: list[AIMServiceAdapter] | None = optional(
        description="LoRA adapters served beside the base model, each under its own model name.",
        max_items=MAX_ADAPTERS,
        list_type="map",
        list_map_keys=("name",),
    )
    adapter_limits: AIMServiceAdapterLimits | None = optional(
        description="vLLM limits for the adapters; derived from the adapters when unset."
    )

    def effective_caching_mode(self) -> str:
        """The caching mode in canonical form: Shared or Dedicated (F5)."""
        mode = (self.caching.mode if self.caching else None) or "Shared"
        return _CACHING_ALIASES.get(mode, mode)

    def effective_replicas(self) -> int:
        """Replica count with the server default applied (1 when unset)."""
        return 1 if self.replicas is None else self.replicas

    def autoscaling_enabled(self) -> bool:
        """Whether replicas are bounded by min/max or metrics instead of fixed."""
        return self.min_replicas is not None or self.max_replicas is not None or self.auto_scaling is not None


# --- status ----------------------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Cache state of a service.")
class AIMServiceCacheStatus:
    template_cache_ref: AIMResolvedReference | None = optional(description="Template cache in use, if any.")
    retry_attempts: int | None = optional(description="Retries of a failed cache so far.")


@attrs.define(kw_only=True)
@schema(description="Routing state of a service.")
class AIMServiceRoutingStatus:
    path: str | None = optional(description="HTTP path prefix of the route.")


@attrs.define(kw_only=True)
@schema(description="Replica counts of the running workload.")
class AIMServiceRuntimeStatus:
    current_replicas: int | None = optional(description="Current replicas.", format="int32")
    desired_replicas: int | None = optional(description="Replicas the HPA wants.", format="int32")
    min_replicas: int | None = optional(description="Autoscaling lower bound.", format="int32")
    max_replicas: int | None = optional(description="Autoscaling upper bound.", format="int32")
    replicas: str | None = optional(description="Replica display text for kubectl.")


@attrs.define(kw_only=True)
@schema(description="State of one LoRA adapter of a service.")
class AIMServiceAdapterStatus:
    name: str = field(description="The adapter's model name.")
    source_uri: str | None = optional(description="Where its weights come from.")
    artifact: str | None = optional(description="The AIMArtifact holding its weights.")
    state: str | None = optional(
        description="Pending, Downloading, Ready (served) or Failed.",
        enum=("Pending", "Downloading", "Ready", "Failed"),
    )
    reason: str | None = optional(description="Why the adapter is in this state.")
    message: str | None = optional(description="What to do about it, when not Ready.")
    base_model: str | None = optional(description="Base model named by its adapter_config.json.")
    rank: int | None = optional(description="LoRA rank from its adapter_config.json.", format="int32")


@attrs.define(kw_only=True)
@schema(description="Observed state of an AIMService.")
class AIMServiceStatus:
    status: str | None = status_field(SERVICE_STATUS_VALUES)
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    resolved_model: AIMResolvedReference | None = optional(description="Model in use.")
    resolved_template: AIMResolvedReference | None = optional(description="Template in use.")
    resolved_runtime_config: AIMResolvedReference | None = optional(description="Runtime config in use.")
    cache: AIMServiceCacheStatus | None = optional(description="Cache state.")
    routing: AIMServiceRoutingStatus | None = optional(description="Routing state.")
    runtime: AIMServiceRuntimeStatus | None = optional(description="Replica counts.")
    adapters: list[AIMServiceAdapterStatus] | None = optional(description="State of each LoRA adapter.")
    adapter_summary: str | None = optional(
        description="Adapters served out of those in spec.adapters, e.g. 2/3 (printer column)."
    )


@attrs.define(kw_only=True)
@schema(description="An AIM inference service for one model and template, run through KServe.")
class AIMService:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMService", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMServiceSpec = field(description="Desired state.")
    status: AIMServiceStatus | None = optional(description="Observed state.")
