"""AIMClusterModelSource: creates AIMClusterModels from registry images."""

from typing import Any

import attrs

from aim_core.api.common import API_VERSION, conditions_field, observed_generation_field
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import Condition, LocalObjectReference

SOURCE_STATUS_VALUES = (
    "Pending",
    "Starting",
    "Progressing",
    "Ready",
    "Running",
    "Degraded",
    "NotAvailable",
    "Failed",
)


@attrs.define(kw_only=True)
@schema(description="Images of one repository to sync, with optional tag constraints.")
class ModelSourceFilter:
    image: str = field(
        description="Repository or image reference, optionally with registry and tag.",
        max_length=512,
    )
    exclude: list[str] | None = optional(description="Repository names to skip (exact match, without registry).")
    versions: list[str] | None = optional(description="Semver constraints for this filter; win over the global ones.")


@attrs.define(kw_only=True)
@schema(
    description="Desired state of a model source: images or filters, not both.",
    cel=[
        (
            "(has(self.images) ? 1 : 0) + (has(self.filters) ? 1 : 0) == 1",
            "exactly one of images or filters must be specified",
        )
    ],
)
class AIMClusterModelSourceSpec:
    registry: str | None = optional(
        description="Registry to sync from, e.g. docker.io or ghcr.io.", schema_default="docker.io"
    )
    images: list[str] | None = optional(
        description="Explicit images: org/repo, org/repo:tag or registry/org/repo:tag.",
        min_items=1,
    )
    filters: list[ModelSourceFilter] | None = optional(
        description="Repository filters with per-filter versions and exclusions.",
        min_items=1,
        max_items=100,
    )
    versions: list[str] | None = optional(description="Semver constraints for all entries.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(
        description="Registry credentials, read from the operator namespace."
    )
    sync_interval: str | None = optional(
        description="How often to sync, as a duration such as 1h or 30m.", schema_default="1h"
    )
    max_models: int | None = optional(
        description="Most models this source creates.",
        schema_default=100,
        minimum=1,
        maximum=10000,
    )


@attrs.define(kw_only=True)
@schema(description="Observed state of a model source.")
class AIMClusterModelSourceStatus:
    status: str | None = optional(description="High-level state of the source.", enum=SOURCE_STATUS_VALUES)
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = observed_generation_field()
    discovered_models: int | None = optional(description="AIMClusterModels owned by this source.")
    available_models: int | None = optional(description="Matching images found in the registry.")
    models_limit_reached: bool | None = optional(description="Whether maxModels stopped model creation.")
    last_sync_time: str | None = optional(description="Time of the last registry sync.", format="date-time")


@attrs.define(kw_only=True)
@schema(description="Syncs AIM model images from a registry into AIMClusterModels.")
class AIMClusterModelSource:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMClusterModelSource", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMClusterModelSourceSpec = field(description="Desired state.")
    status: AIMClusterModelSourceStatus | None = optional(description="Observed state.")
