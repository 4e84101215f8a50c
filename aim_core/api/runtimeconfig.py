"""AIMRuntimeConfig and AIMClusterRuntimeConfig: defaults for AIM resources."""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    AIMLabelPropagationConfig,
    AIMMeasuredPreference,
    AIMStorageConfig,
    affinity_field,
    conditions_field,
    node_selector_field,
    observed_generation_field,
    tolerations_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import Affinity, Condition, EnvVar, Toleration, env_list, quantity
from aim_core.api.routing import AIMRuntimeRoutingConfig


@attrs.define(kw_only=True)
@schema(description="Model creation and discovery defaults.")
class AIMModelConfig:
    auto_discovery: bool | None = optional(description="Run discovery for models by default.")


ADAPTER_RETENTION_PATTERN = r"^(Never|([0-9]+(\.[0-9]+)?(h|m|s))+)$"


@attrs.define(kw_only=True)
@schema(description="Artifact defaults that only make sense per namespace or cluster.")
class AIMArtifactConfig:
    default_retention_priority: int | None = optional(
        description="Retention priority of artifacts that set none.", minimum=0, format="int32"
    )
    unused_adapter_retention: str | None = optional(
        description="How long an artifact the operator created for a service's LoRA adapter is kept once no "
        "service uses it (e.g. 24h, 168h), then deleted with its volume; Never keeps it. Default 168h (7 days). "
        "Artifacts created by users are never deleted this way.",
        pattern=ADAPTER_RETENTION_PATTERN,
    )


@attrs.define(kw_only=True)
@schema(description="Storage limits for artifacts (cluster runtime config only).")
class AIMArtifactStorageQuota:
    cluster_limit: str | int | None = quantity(description="Maximum storage allocated to all artifacts in the cluster.")
    default_namespace_limit: str | int | None = quantity(
        description="Default maximum storage allocated to artifacts per namespace."
    )


@attrs.define(kw_only=True)
@schema(description="Which benchmark runs feed the cluster templates' measurements (cluster runtime config only).")
class AIMBenchmarkTrustConfig:
    trusted_namespaces: list[str] | None = optional(
        description="Namespaces whose Succeeded AIMBenchmarks count in the status.benchmarks of the cluster "
        'templates that use this config (and so in preferMeasured ranking for every namespace); "*" trusts '
        "every namespace. Unset: only the operator's own namespace. Namespaced templates always count the "
        "runs of their own namespace.",
        max_items=256,
        list_type="atomic",
        max_length=63,
    )


@attrs.define(kw_only=True)
@schema(description="Defaults of automatic template selection.")
class AIMTemplateSelectionConfig:
    prefer_measured: AIMMeasuredPreference | None = optional(
        description="Let automatic selection prefer the template that measured best, for services that set "
        "no spec.template.preferMeasured of their own."
    )


@attrs.define(kw_only=True)
@schema(description="Runtime defaults of a namespace.")
class AIMRuntimeConfigSpec:
    env: list[EnvVar] | None = env_list(description="Inference container environment.")
    model: AIMModelConfig | None = optional(description="Model creation and discovery defaults.")
    routing: AIMRuntimeRoutingConfig | None = optional(description="HTTP routing defaults.")
    storage: AIMStorageConfig | None = optional(description="Storage defaults.")
    artifact: AIMArtifactConfig | None = optional(description="Artifact defaults.")
    label_propagation: AIMLabelPropagationConfig | None = optional(
        description="Copying of parent labels onto children."
    )
    template_selection: AIMTemplateSelectionConfig | None = optional(
        description="Defaults of automatic template selection."
    )
    node_selector: dict[str, str] | None = node_selector_field("inference pods and artifact download Jobs")
    tolerations: list[Toleration] | None = tolerations_field("inference pods and artifact download Jobs")
    affinity: Affinity | None = affinity_field("inference pods and artifact download Jobs")
    default_storage_class_name: str | None = optional(
        description="Deprecated; use storage.defaultStorageClassName.", deprecated=True
    )
    pvc_headroom_percent: int | None = optional(
        description="Deprecated; use storage.pvcHeadroomPercent.",
        deprecated=True,
        minimum=0,  # as storage.pvcHeadroomPercent: a negative headroom makes volumes smaller than the model
        format="int32",
    )

    def effective_storage(self) -> AIMStorageConfig:
        """``storage`` with the deprecated top-level fields filled in where unset (F5)."""
        storage = self.storage or AIMStorageConfig()
        return attrs.evolve(
            storage,
            default_storage_class_name=storage.default_storage_class_name or self.default_storage_class_name,
            pvc_headroom_percent=storage.pvc_headroom_percent
            if storage.pvc_headroom_percent is not None
            else self.pvc_headroom_percent,
        )


@attrs.define(kw_only=True)
@schema(description="Runtime defaults of the whole cluster.")
class AIMClusterRuntimeConfigSpec(AIMRuntimeConfigSpec):
    artifact_storage_quota: AIMArtifactStorageQuota | None = optional(
        description="Cluster-wide and per-namespace artifact storage limits."
    )
    benchmarks: AIMBenchmarkTrustConfig | None = optional(
        description="Which namespaces' benchmark runs the cluster templates count."
    )


@attrs.define(kw_only=True)
@schema(description="Observed state of a runtime config.")
class AIMRuntimeConfigStatus:
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    effective_spec: AIMClusterRuntimeConfigSpec | None = optional(
        description="The settings in effect: for a namespaced config, merged over the cluster config of the "
        "same name (fields set here win); deprecated fields moved to their new place."
    )


@attrs.define(kw_only=True)
@schema(description="Namespaced runtime defaults for AIM services, models and templates.")
class AIMRuntimeConfig:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMRuntimeConfig", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMRuntimeConfigSpec | None = optional(description="Desired state.")
    status: AIMRuntimeConfigStatus | None = optional(description="Observed state.")


@attrs.define(kw_only=True)
@schema(description="Cluster-wide runtime defaults for AIM services, models and templates.")
class AIMClusterRuntimeConfig:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMClusterRuntimeConfig", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMClusterRuntimeConfigSpec | None = optional(description="Desired state.")
    status: AIMRuntimeConfigStatus | None = optional(description="Observed state.")
