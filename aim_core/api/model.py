"""AIMModel and AIMClusterModel: catalog entries for AIM model images."""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    MODEL_SOURCE_TYPES,
    AIMCustomModelSpec,
    AIMCustomTemplate,
    AIMImageMetadata,
    AIMModelSource,
    AIMResolvedReference,
    conditions_field,
    observed_generation_field,
    runtime_config_name_field,
    status_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import Condition, EnvVar, LocalObjectReference, ResourceRequirements, env_list

_HARDWARE_FOR_SOURCES = (
    "!has(self.modelSources) || size(self.modelSources) == 0"
    " || (has(self.custom) && has(self.custom.hardware))"
    " || !has(self.customTemplates) || size(self.customTemplates) == 0"
    " || self.customTemplates.all(t, has(t.hardware) || (has(self.custom) && has(self.custom.hardware)))"
)


@attrs.define(kw_only=True)
@schema(description="Discovery behaviour of a model.")
class AIMModelDiscoveryConfig:
    extract_metadata: bool | None = optional(
        description="Read the image labels to learn about the model.", schema_default=True
    )
    create_service_templates: bool | None = optional(
        description="Create service templates from the recommended deployments.",
        schema_default=True,
    )


@attrs.define(kw_only=True)
@schema(
    description="Desired state of a model (namespaced or cluster-scoped).",
    cel=[
        (
            _HARDWARE_FOR_SOURCES,
            "when using modelSources, hardware must be specified: set custom.hardware"
            " (inherited by all templates) or set hardware on each template individually",
        )
    ],
)
class AIMModelSpec:
    image: str = field(description="Container image of the AIM model.", min_length=1)
    discovery: AIMModelDiscoveryConfig | None = optional(
        description="Discovery behaviour; runtime config defaults when unset."
    )
    default_service_template: str | None = optional(description="Template to prefer for services of this model.")
    custom: AIMCustomModelSpec | None = optional(description="Template defaults for models with inline sources.")
    custom_templates: list[AIMCustomTemplate] | None = optional(
        description="Templates created directly, without a discovery job.", max_items=16
    )
    model_sources: list[AIMModelSource] | None = optional(
        description="Inline model weights; makes this a custom model.", max_items=1
    )
    image_metadata: AIMImageMetadata | None = optional(
        description="Metadata given by hand instead of read from the image."
    )
    env: list[EnvVar] | None = env_list(
        description="Environment for discovery and metadata extraction, e.g. credentials."
    )
    image_pull_secrets: list[LocalObjectReference] | None = optional(description="Secrets for pulling the model image.")
    service_account_name: str | None = optional(description="Service account of workloads run for this model.")
    resources: ResourceRequirements | None = optional(
        description="Default container resources of services using this model."
    )
    runtime_config_name: str | None = runtime_config_name_field()


@attrs.define(kw_only=True)
@schema(description="The image that status.imageMetadata describes.")
class AIMResolvedImage:
    image: str | None = optional(description="spec.image when the metadata was taken.")
    digest: str | None = optional(description="Manifest digest the metadata was read from (registry only).")
    source: str | None = optional(
        description="Registry when read from the image, Spec when given in spec.imageMetadata.",
        enum=("Registry", "Spec"),
    )


@attrs.define(kw_only=True)
@schema(description="Observed state of a model.")
class AIMModelStatus:
    status: str | None = status_field()
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    source_type: str | None = optional(
        description="Image when discovered from the image, Custom for inline sources.",
        enum=MODEL_SOURCE_TYPES,
    )
    image_metadata: AIMImageMetadata | None = optional(description="Metadata read from the image.")
    resolved_image: AIMResolvedImage | None = optional(
        description="The image the metadata was read for; a different spec.image is read again."
    )
    resolved_runtime_config: AIMResolvedReference | None = optional(description="Runtime config in use.")


@attrs.define(kw_only=True)
@schema(description="A namespaced AIM model catalog entry.")
class AIMModel:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMModel", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMModelSpec = field(description="Desired state.")
    status: AIMModelStatus | None = optional(description="Observed state.")


@attrs.define(kw_only=True)
@schema(description="A cluster-wide AIM model catalog entry, usable from every namespace.")
class AIMClusterModel:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMClusterModel", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMModelSpec = field(description="Desired state.")
    status: AIMModelStatus | None = optional(description="Observed state.")
