"""AIMTemplateCache: pre-downloads the model artifacts of a template."""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    CACHE_MODES,
    TEMPLATE_SCOPES,
    AIMDownloadFilter,
    AIMModelSource,
    AIMResolvedReference,
    conditions_field,
    observed_generation_field,
    runtime_config_name_field,
    status_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import Condition, EnvVar, LocalObjectReference, env_list

TEMPLATE_CACHE_STATUS_VALUES = ("Pending", "Progressing", "Ready", "Failed", "Degraded", "NotAvailable")


@attrs.define(kw_only=True)
@schema(description="Desired state of a template cache.")
class AIMTemplateCacheSpec:
    template_name: str = field(description="AIMServiceTemplate or AIMClusterServiceTemplate to cache.", min_length=1)
    template_scope: str = field(
        description="Whether the template is namespaced or cluster-scoped.", enum=TEMPLATE_SCOPES
    )
    mode: str | None = optional(
        description="Dedicated: artifacts owned by this cache; Shared: artifacts outlive it.",
        enum=CACHE_MODES,
        schema_default="Shared",
    )
    model_sources: list[AIMModelSource] | None = optional(description="Model weights to cache.")
    storage_class_name: str | None = optional(
        description="Storage class of the cache volumes; cluster default when unset."
    )
    download_image: str | None = optional(description="Image that downloads the artifacts.")
    env: list[EnvVar] | None = env_list(description="Environment for the downloads, e.g. tokens.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(
        description="Secrets for pulling the download image."
    )
    runtime_config_name: str | None = runtime_config_name_field()
    download_filter: AIMDownloadFilter | None = optional(
        description="Which files its artifacts download; wins over the runtime config filter."
    )
    pvc_headroom_percent: int | None = optional(
        description="Extra volume space of its artifacts in percent; wins over the runtime config's.",
        minimum=0,
        format="int32",
    )


@attrs.define(kw_only=True)
@schema(description="The artifact that caches one model of the template.")
class AIMResolvedArtifact:
    name: str = field(description="Name of the AIMArtifact.")
    uid: str = field(description="UID of the AIMArtifact.")
    model: str = field(description="Model the artifact holds.")
    status: str = field(description="Status of the artifact.")
    persistent_volume_claim: str | None = optional(description="Volume claim of the artifact.")
    mount_point: str | None = optional(description="Where the artifact is mounted.")


@attrs.define(kw_only=True)
@schema(description="Observed state of a template cache.")
class AIMTemplateCacheStatus:
    status: str | None = status_field(TEMPLATE_CACHE_STATUS_VALUES)
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    artifacts: dict[str, AIMResolvedArtifact] | None = optional(description="Artifacts by artifact name.")
    resolved_template_kind: str | None = optional(description="AIMServiceTemplate or AIMClusterServiceTemplate.")
    resolved_runtime_config: AIMResolvedReference | None = optional(description="Runtime config in use.")


@attrs.define(kw_only=True)
@schema(description="Pre-downloads the model artifacts of a service template.")
class AIMTemplateCache:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMTemplateCache", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMTemplateCacheSpec = field(description="Desired state.")
    status: AIMTemplateCacheStatus | None = optional(description="Observed state.")
