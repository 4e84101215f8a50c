"""Routing settings of runtime configs and services: the Gateway API route and model-aware routing."""

import attrs

from aim_core.api.fields import field, optional, schema
from aim_core.api.k8s import ParentReference, ResourceRequirements

REQUEST_TIMEOUT_PATTERN = r"^\+?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(h|m|s|ms|us|ns))+)$"

# The two InferencePool APIs of the Gateway API Inference Extension: gateways in the field speak one or
# the other, so the user picks (the GA one by default).
INFERENCE_POOL_API_VERSIONS = ("inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2")
ENDPOINT_PICKER_FAILURE_MODES = ("FailClose", "FailOpen")


@attrs.define(kw_only=True)
@schema(description="A ConfigMap key in the service's namespace.", map_type="atomic")
class AIMConfigMapKeyRef:
    name: str = field(description="ConfigMap name.", min_length=1)
    key: str = field(description="Key of the ConfigMap.", min_length=1)


# No server-side defaults below: the service's settings win over the runtime config's field by
# field, and a defaulted field would always win (a service naming only an image would turn the pool
# off). The defaults are applied when the pool is built (see docs/routing.md).
@attrs.define(kw_only=True)
@schema(description="The endpoint picker (EPP) that chooses a model server pod for each request.")
class AIMEndpointPickerConfig:
    image: str | None = optional(
        description="EPP image; default: the operator's (--endpoint-picker-image), a pinned GAIE release.",
        min_length=1,
    )
    replicas: int | None = optional(description="EPP replicas (default 1).", minimum=1, format="int32")
    failure_mode: str | None = optional(
        description="What the gateway does when the picker does not answer: FailClose (default) refuses the "
        "request, FailOpen sends it to any pod.",
        enum=ENDPOINT_PICKER_FAILURE_MODES,
    )
    config_ref: AIMConfigMapKeyRef | None = optional(
        description="A ConfigMap key holding an EndpointPickerConfig to use instead of the default scorers."
    )
    resources: ResourceRequirements | None = optional(description="Resources of the picker container.")


@attrs.define(kw_only=True)
@schema(description="Model-aware routing: an InferencePool and its endpoint picker as the route's backend.")
class AIMInferencePoolConfig:
    enabled: bool | None = optional(description="Route through an InferencePool (default false).")
    api_version: str | None = optional(
        description="InferencePool API the gateway speaks (default inference.networking.k8s.io/v1).",
        enum=INFERENCE_POOL_API_VERSIONS,
    )
    endpoint_picker: AIMEndpointPickerConfig | None = optional(description="The endpoint picker.")


@attrs.define(kw_only=True)
@schema(description="HTTP routing through the Gateway API.")
class AIMRuntimeRoutingConfig:
    enabled: bool | None = optional(description="Manage an HTTPRoute for inference services.")
    gateway_ref: ParentReference | None = optional(description="Gateway that receives the routes.")
    path_template: str | None = optional(
        description="Route path template with {jsonpath} placeholders over the service."
    )
    request_timeout: str | None = optional(
        description="Request timeout of the route, a duration such as 60s, 5m or 1h30m.",
        # Go's duration spelling (what upstream parses), without a sign: anything else can never be a timeout
        pattern=REQUEST_TIMEOUT_PATTERN,
    )
    annotations: dict[str, str] | None = optional(description="Annotations for the HTTPRoutes.")
    inference_pool: AIMInferencePoolConfig | None = optional(
        description="Model-aware routing through an InferencePool and endpoint picker (off by default)."
    )
