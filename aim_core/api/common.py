"""AIM types shared by several kinds: hardware, model sources, profiles,
image metadata, custom templates, runtime settings and resolved references.
"""

from typing import Any

import attrs

from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import QUANTITY_PATTERN, EnvVar, env_list, quantity

API_GROUP = "aim.eai.amd.com"
API_VERSION = "aim.eai.amd.com/v1alpha1"

# --- enumerations (values as the API server accepts them) ------------------

METRICS = ("latency", "throughput")
PRECISIONS = ("auto", "fp4", "fp8", "fp16", "fp32", "bf16", "int4", "int8")
PROFILE_TYPES = ("optimized", "preview", "unoptimized")
RESOLUTION_SCOPES = ("Namespace", "Cluster", "Merged", "Unknown")
TEMPLATE_SCOPES = ("Namespace", "Cluster", "Unknown")
MODEL_SOURCE_TYPES = ("Image", "Custom")
CACHING_MODES = ("Dedicated", "Shared", "Auto", "Always", "Never")
CACHE_MODES = ("Dedicated", "Shared")

STATUS_VALUES = ("Pending", "Progressing", "Ready", "Degraded", "Failed", "NotAvailable")
"""``status.status`` of models, templates and artifacts."""

MODEL_ID_PATTERN = r"^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$"
SOURCE_URI_PATTERN = r"^(hf|s3)://[^ \t\r\n]+$"
DEFAULT_GPU_RESOURCE = "amd.com/gpu"


def status_field(values: tuple[str, ...] = STATUS_VALUES, default: Any = "Pending"):
    """The ``status.status`` field: an enum with a server-side default."""
    return optional(description="High-level lifecycle state.", enum=values, schema_default=default)


def conditions_field():
    """The ``status.conditions`` list, keyed by condition ``type``."""
    return optional(
        description="Latest observations of the object's state.",
        list_type="map",
        list_map_keys=("type",),
    )


def observed_generation_field():
    return optional(description="Most recent generation seen by the controller.", format="int64")


def node_selector_field(where: str):
    """``nodeSelector`` of the inference pods (and, in a runtime config, of artifact Jobs)."""
    return optional(description=f"Node labels the {where} must run on (PodSpec nodeSelector).")


def tolerations_field(where: str):
    """``tolerations`` of the inference pods (and, in a runtime config, of artifact Jobs)."""
    return optional(
        description=f"Taints the {where} tolerate (PodSpec tolerations); a GPU request tolerates its "
        "resource's taint without being asked.",
        list_type="atomic",
    )


def affinity_field(where: str):
    """``affinity`` of the inference pods (and, in a runtime config, of artifact Jobs)."""
    return optional(
        description=f"Scheduling constraints of the {where} (PodSpec affinity); combined with the "
        "template's GPU node affinity, both must hold."
    )


def runtime_config_name_field():
    return optional(description="Runtime config to use; a namespaced one wins over a cluster one of the same name.")


# --- hardware ------------------------------------------------------------


@attrs.define(kw_only=True)
@schema(
    description="GPU needs of one replica.",
    cel=[
        (
            "!(has(self.model) && size(self.model) > 0 && has(self.minVram))",
            "model and minVram are mutually exclusive; specify either a specific GPU model"
            " OR a minimum VRAM requirement, not both",
        )
    ],
)
class AIMGpuRequirements:
    requests: int | None = optional(
        description="GPUs requested (and limited); 0 targets GPU nodes without consuming GPUs.",
        minimum=0,
        format="int32",
    )
    model: str | None = optional(description="Restrict to one GPU model, e.g. MI300X.", max_length=64)
    min_vram: str | int | None = quantity(description="Restrict to GPUs with at least this VRAM.")
    resource_name: str | None = optional(
        description="Extended resource name of the GPU.", schema_default=DEFAULT_GPU_RESOURCE
    )


@attrs.define(kw_only=True)
@schema(description="CPU needs of one replica.")
class AIMCpuRequirements:
    requests: str | int = field(
        description="CPU cores requested; must be above zero.",
        int_or_string=True,
        pattern=QUANTITY_PATTERN,
    )
    limits: str | int | None = quantity(description="Maximum CPU cores.")


@attrs.define(kw_only=True)
@schema(
    description="GPU and CPU needs of one replica.",
    cel=[("has(self.gpu) || has(self.cpu)", "at least one of gpu or cpu must be specified")],
)
class AIMHardwareRequirements:
    gpu: AIMGpuRequirements | None = optional(description="GPU needs; none means CPU only.")
    cpu: AIMCpuRequirements | None = optional(description="CPU needs.")
    # No schema default: a defaulted field would appear in every stored object and in
    # status.resolvedHardware, changing single-node objects that never asked for it.
    nodes: int | None = optional(
        description="Nodes one replica spans (default 1); gpu.requests stays per node (per pod), so a replica "
        "holds nodes x requests GPUs. Above 1 the service needs a multi-node runtime (the lws plugin).",
        minimum=1,
        maximum=16,
        format="int32",
    )


# --- model sources and downloads -----------------------------------------


@attrs.define(kw_only=True)
@schema(description="A model artifact to download before serving.")
class AIMModelSource:
    model_id: str = field(
        description="Identifier in org/name form; decides the cache mount path.",
        pattern=MODEL_ID_PATTERN,
    )
    source_uri: str = field(
        description="Where to download from: hf://org/model or s3://bucket/key.",
        pattern=SOURCE_URI_PATTERN,
    )
    size: str | int | None = quantity(description="Expected storage size, used to size volumes.")
    env: list[EnvVar] | None = env_list(description="Credentials for this source, overriding other env settings.")


@attrs.define(kw_only=True)
@schema(
    description=(
        "Which repository files to download: include globs first, then exclude globs."
        " An empty object downloads everything."
    )
)
class AIMDownloadFilter:
    include: list[str] | None = optional(description="Only files matching one of these globs.")
    exclude: list[str] | None = optional(description="Skip files matching any of these globs.")


# --- runtime settings shared by runtime configs and services ----------------


@attrs.define(kw_only=True)
@schema(description="Storage defaults for artifacts and their volumes.")
class AIMStorageConfig:
    default_storage_class_name: str | None = optional(
        description="Storage class for artifact volumes when none is named."
    )
    pvc_headroom_percent: int | None = optional(
        description="Extra volume space in percent on top of the model size.",
        schema_default=10,
        minimum=0,
        format="int32",
    )
    download_filter: AIMDownloadFilter | None = optional(description="Default file filter for artifact downloads.")


@attrs.define(kw_only=True)
@schema(description="Copying of parent labels onto child resources.")
class AIMLabelPropagationConfig:
    enabled: bool | None = optional(description="Propagate matching parent labels to children.", schema_default=False)
    match: list[str] | None = optional(description="Label keys to copy; globs allowed.")


# --- references and profiles ---------------------------------------------


MEASURED_RANKINGS = (
    "outputTokensPerSecond",
    "requestsPerSecond",
    "ttftP50",
    "ttftP90",
    "ttftP99",
    "interTokenLatencyP50",
    "e2eLatencyP50",
)


@attrs.define(kw_only=True)
@schema(description="Rank automatically selected templates by what their AIMBenchmarks measured (opt-in).")
class AIMMeasuredPreference:
    by: str = field(
        description="The measured number that ranks: throughput (higher wins) or a latency percentile "
        "(lower wins), from the templates' status.benchmarks.",
        enum=MEASURED_RANKINGS,
    )
    concurrency: int = field(description="The load level whose results count.", minimum=1, format="int32")
    scenario: str | None = optional(
        description="The traffic scenario whose results count (e.g. D(128,128)); unset: the scenario "
        "measured for the most candidates."
    )


@attrs.define(kw_only=True)
@schema(description="The object that a reference resolved to.")
class AIMResolvedReference:
    name: str | None = optional(description="Name of the object.")
    namespace: str | None = optional(description="Namespace; empty for cluster-scoped objects.")
    kind: str | None = optional(description="Kind of the object, when known.")
    uid: str | None = optional(description="UID of the object, when known.")
    scope: str | None = optional(
        description="Whether the object is namespaced or cluster-scoped.", enum=RESOLUTION_SCOPES
    )


@attrs.define(kw_only=True)
@schema(description="Characteristics of a deployment profile.")
class AIMProfileMetadata:
    engine: str | None = optional(description="Inference engine, e.g. vllm.")
    gpu: str | None = optional(description="GPU model the profile targets.")
    gpu_count: int | None = optional(description="GPUs per replica.", format="int32")
    metric: str | None = optional(description="Optimisation goal.", enum=METRICS)
    precision: str | None = optional(description="Numeric precision.", enum=PRECISIONS)
    type: str | None = optional(description="Optimisation level.", enum=PROFILE_TYPES)


@attrs.define(kw_only=True)
@schema(description="Deployment profile found by discovery.")
class AIMProfile:
    engine_args: Any = optional(
        description="Engine arguments as free-form JSON.",
        json_name="engine_args",
        preserve_unknown=True,
    )
    env_vars: dict[str, str] | None = optional(
        description="Environment the engine needs for this profile.", json_name="env_vars"
    )
    metadata: AIMProfileMetadata | None = optional(description="Profile characteristics.")
    original_discovery_output: Any = optional(description="Raw discovery output, kept as is.", preserve_unknown=True)


@attrs.define(kw_only=True)
@schema(description="Inline engine profile supplied by the user.")
class AIMCustomProfile:
    engine_args: Any = optional(description="Engine arguments as free-form JSON.", preserve_unknown=True)
    env_vars: dict[str, str] | None = optional(description="Environment for the engine process.")


# --- image metadata --------------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="A deployment the image recommends.")
class AIMRecommendedDeployment:
    gpu_model: str | None = optional(description="GPU model, e.g. MI300X.")
    gpu_count: int | None = optional(description="Number of GPUs.", format="int32")
    precision: str | None = optional(description="Recommended precision.")
    metric: str | None = optional(description="Optimisation goal.")
    description: str | None = optional(description="Notes on this deployment.")
    profile_id: str | None = optional(description="AIM profile this deployment uses.")


@attrs.define(kw_only=True)
@schema(description="AIM-specific labels of a model image.")
class AIMModelMetadata:
    canonical_name: str | None = optional(description="Canonical model id, e.g. org/model.")
    source: str | None = optional(description="URL of the model.")
    title: str | None = optional(description="Display title.")
    description_full: str | None = optional(description="Long description.")
    release_notes: str | None = optional(description="Release notes of this version.")
    tags: list[str] | None = optional(description="Descriptive tags.")
    variants: list[str] | None = optional(description="Model variants.")
    versions: list[str] | None = optional(description="Available versions.")
    hf_token_required: bool | None = optional(description="Whether a Hugging Face token is needed.")
    recommended_deployments: list[AIMRecommendedDeployment] | None = optional(
        description="Deployments the image recommends."
    )


@attrs.define(kw_only=True)
@schema(description="Standard OCI labels of an image.")
class AIMOCIMetadata:
    title: str | None = optional(description="Image title.")
    description: str | None = optional(description="Short description.")
    authors: str | None = optional(description="Authors' contact details.")
    created: str | None = optional(description="Creation timestamp.")
    documentation: str | None = optional(description="Documentation URL.")
    licenses: str | None = optional(description="SPDX license expression.")
    revision: str | None = optional(description="Source revision.")
    source: str | None = optional(description="Source repository URL.")
    vendor: str | None = optional(description="Producing organisation.")
    version: str | None = optional(description="Image version.")


@attrs.define(kw_only=True)
@schema(description="Metadata read from a model image's labels.")
class AIMImageMetadata:
    model: AIMModelMetadata | None = optional(description="AIM model labels.")
    oci: AIMOCIMetadata | None = optional(description="OCI labels.")
    original_labels: dict[str, str] | None = optional(description="All image labels, unchanged.")


# --- custom models and templates ---------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Profile values used to tell templates apart.")
class AIMTemplateProfile:
    metric: str | None = optional(description="Optimisation goal.", enum=METRICS)
    precision: str | None = optional(description="Numeric precision.", enum=PRECISIONS)


@attrs.define(kw_only=True)
@schema(description="Defaults for templates of a model with inline sources.")
class AIMCustomModelSpec:
    hardware: AIMHardwareRequirements | None = optional(description="Hardware inherited by templates that set none.")
    type: str | None = optional(description="Default template type.", enum=PROFILE_TYPES)


@attrs.define(kw_only=True)
@schema(description="A template declared on a model, skipping discovery.")
class AIMCustomTemplate:
    name: str | None = optional(
        description="Template name; derived from the model and profile when unset.", max_length=63
    )
    type: str | None = optional(
        description="Optimisation level; unset: the model's custom.type, else unoptimized.",
        enum=PROFILE_TYPES,
    )
    env: list[EnvVar] | None = env_list(description="Environment used when this template is selected.", max_items=64)
    hardware: AIMHardwareRequirements | None = optional(
        description="Hardware of this template; falls back to custom.hardware."
    )
    profile: AIMTemplateProfile | None = optional(description="Profile values for selection.")
    aim_id: str | None = optional(description="AIM product family, e.g. org/name.")
    model_id: str | None = optional(description="Model or Hugging Face repo id of the weights.")
    custom_profile: AIMCustomProfile | None = optional(description="Inline engine profile.")
