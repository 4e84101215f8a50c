"""AIMArtifact: model weights downloaded into a volume."""

from typing import Any

import attrs

from aim_core.api.common import (
    API_VERSION,
    CACHE_MODES,
    MODEL_ID_PATTERN,
    SOURCE_URI_PATTERN,
    AIMDownloadFilter,
    conditions_field,
    runtime_config_name_field,
    status_field,
)
from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import Condition, EnvVar, LocalObjectReference, env_list, quantity

DEFAULT_DOWNLOAD_IMAGE = "ghcr.io/silogen/aim-artifact-downloader:0.2.0"


@attrs.define(kw_only=True)
@schema(description="Desired state of an artifact.")
class AIMArtifactSpec:
    source_uri: str = field(
        description="Where to download from: hf://org/model or s3://bucket/key.",
        min_length=1,
        pattern=SOURCE_URI_PATTERN,
        immutable="sourceUri is immutable",
    )
    model_id: str | None = optional(
        description="Identifier in org/name form; decides the download path.",
        pattern=MODEL_ID_PATTERN,
    )
    size: str | int | None = quantity(description="Size of the volume; discovered when unset.")
    storage_class_name: str | None = optional(description="Storage class of the volume; cluster default when unset.")
    model_download_image: str | None = optional(
        description="Image that downloads the artifact.", schema_default=DEFAULT_DOWNLOAD_IMAGE
    )
    download_filter: AIMDownloadFilter | None = optional(
        description="Which files to download; wins over the runtime config filter."
    )
    pvc_headroom_percent: int | None = optional(
        description="Extra volume space in percent on top of the size; wins over the runtime config's.",
        minimum=0,
        format="int32",
    )
    retention_priority: int | None = optional(
        description="Makes the artifact eligible for automatic eviction.",
        minimum=0,
        format="int32",
    )
    env: list[EnvVar] | None = env_list(description="Environment for the download, e.g. tokens.")
    image_pull_secrets: list[LocalObjectReference] | None = optional(
        description="Secrets for pulling the download image."
    )
    runtime_config_name: str | None = runtime_config_name_field()


@attrs.define(kw_only=True)
@schema(description="Current download attempt, written by the downloader pod.")
class AIMArtifactDownloadState:
    attempt: int | None = optional(description="Current attempt, starting at 1.", format="int32")
    total_attempts: int | None = optional(description="Attempts configured.", format="int32")
    protocol: str | None = optional(description="Protocol in use, e.g. XET or HTTP.")
    protocol_sequence: str | None = optional(description="Protocols to try, in order.")
    message: str | None = optional(description="Message from the downloader.")


@attrs.define(kw_only=True)
@schema(description="Download progress.")
class AIMArtifactProgress:
    percentage: int | None = optional(description="Progress in percent.", minimum=0, maximum=100, format="int32")
    display_percentage: str | None = optional(description="Progress display text, e.g. 45 %.")
    downloaded_bytes: int | None = optional(description="Bytes downloaded.", format="int64")
    total_bytes: int | None = optional(description="Bytes expected.", format="int64")


@attrs.define(kw_only=True)
@schema(description="What the downloader read from a LoRA adapter's adapter_config.json.")
class AIMArtifactAdapterInfo:
    base_model: str | None = optional(description="base_model_name_or_path of the adapter.")
    rank: int | None = optional(description="LoRA rank (r) of the adapter.", format="int32")
    alpha: int | None = optional(description="LoRA alpha of the adapter.", format="int32")
    problem: str | None = optional(description="Why adapter_config.json could not be read, if it could not.")


@attrs.define(kw_only=True)
@schema(description="Observed state of an artifact.")
class AIMArtifactStatus:
    status: str | None = status_field()
    conditions: list[Condition] | None = conditions_field()
    observed_generation: int | None = optional(
        description="Most recent generation seen by the controller.", format="int64"
    )
    mode: str | None = optional(description="Dedicated when owned by one consumer, else Shared.", enum=CACHE_MODES)
    progress: AIMArtifactProgress | None = optional(description="Download progress.")
    download: AIMArtifactDownloadState | None = optional(description="Download attempt state.")
    display_size: str | None = optional(description="Size display text.")
    discovered_size_bytes: int | None = optional(
        description="Size found by the size check when spec.size is unset.", format="int64"
    )
    allocated_size: str | int | None = quantity(description="Size of the volume requested, headroom included.")
    headroom_percent: int | None = optional(description="Headroom applied.", format="int32")
    persistent_volume_claim: str | None = optional(description="Volume claim holding the files.")
    last_used: str | None = optional(description="Last time a deployment used the artifact.", format="date-time")
    adapter: AIMArtifactAdapterInfo | None = optional(
        description="The LoRA adapter configuration found in the files, written by the downloader."
    )


@attrs.define(kw_only=True)
@schema(description="Model weights downloaded into a persistent volume.")
class AIMArtifact:
    api_version: str = field(default=API_VERSION, description="API group and version.")
    kind: str = field(default="AIMArtifact", description="Kind of the object.")
    metadata: dict[str, Any] = field(factory=dict, description="Standard object metadata.")
    spec: AIMArtifactSpec = field(description="Desired state.")
    status: AIMArtifactStatus | None = optional(description="Observed state.")
