"""Kubernetes and Gateway API types embedded in the AIM CRDs.

Only the parts the AIM schemas embed are modelled: container environment
variables, resource requirements, local object references, node affinity,
``metav1.Condition`` and the Gateway API ``ParentReference``.
"""

import attrs

from aim_core.api.fields import field, optional, schema

QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]"
    r"|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
"""Regular expression a Kubernetes resource quantity must match."""

_DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"


def quantity(**kw):
    """An optional Kubernetes quantity field (int or string)."""
    return optional(int_or_string=True, pattern=QUANTITY_PATTERN, **kw)


def env_list(**kw):
    """An optional list of :class:`EnvVar`, keyed by ``name``."""
    return optional(list_type="map", list_map_keys=("name",), **kw)


# --- environment variables ------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Picks one key of a ConfigMap.", map_type="atomic")
class ConfigMapKeySelector:
    key: str = field(description="Key to read from the ConfigMap.")
    name: str | None = optional(description="ConfigMap name.", schema_default="")
    optional: bool | None = optional(description="Allow the ConfigMap or key to be missing.")


@attrs.define(kw_only=True)
@schema(description="Picks one key of a Secret in the pod's namespace.", map_type="atomic")
class SecretKeySelector:
    key: str = field(description="Key to read from the Secret.")
    name: str | None = optional(description="Secret name.", schema_default="")
    optional: bool | None = optional(description="Allow the Secret or key to be missing.")


@attrs.define(kw_only=True)
@schema(description="Picks a field of the pod, such as metadata.name.", map_type="atomic")
class ObjectFieldSelector:
    api_version: str | None = optional(description="Schema version of field_path; v1 when unset.")
    field_path: str = field(description="Path of the pod field to read.")


@attrs.define(kw_only=True)
@schema(description="Picks a resource limit or request of a container.", map_type="atomic")
class ResourceFieldSelector:
    container_name: str | None = optional(description="Container to read; optional for env vars.")
    divisor: str | int | None = quantity(description="Unit the value is expressed in; 1 when unset.")
    resource: str = field(description="Resource to read, e.g. limits.cpu.")


@attrs.define(kw_only=True)
@schema(description="Picks one key of an env file in a volume.", map_type="atomic")
class FileKeySelector:
    key: str = field(description="Key inside the env file.")
    path: str = field(description="Relative path of the env file inside the volume.")
    volume_name: str = field(description="Volume mount holding the env file.")
    optional: bool | None = optional(description="Allow the file or key to be missing.", schema_default=False)


@attrs.define(kw_only=True)
@schema(description="Where an environment variable takes its value from.")
class EnvVarSource:
    config_map_key_ref: ConfigMapKeySelector | None = optional(description="A ConfigMap key.")
    field_ref: ObjectFieldSelector | None = optional(description="A field of the pod.")
    file_key_ref: FileKeySelector | None = optional(description="A key of an env file.")
    resource_field_ref: ResourceFieldSelector | None = optional(description="A container resource limit or request.")
    secret_key_ref: SecretKeySelector | None = optional(description="A Secret key.")


@attrs.define(kw_only=True)
@schema(description="An environment variable of a container.")
class EnvVar:
    name: str = field(description="Variable name.")
    value: str | None = optional(description="Literal value; $(VAR) references are expanded.")
    value_from: EnvVarSource | None = optional(description="Source of the value; not allowed together with value.")


# --- resources and references ---------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Use of one entry of the pod's resourceClaims.")
class ResourceClaim:
    name: str = field(description="Name of the pod resourceClaims entry.")
    request: str | None = optional(description="Request inside the claim; the whole claim when unset.")


@attrs.define(kw_only=True)
@schema(description="Compute resources of a container.")
class ResourceRequirements:
    claims: list[ResourceClaim] | None = optional(
        description="Dynamic resource claims used by the container.",
        list_type="map",
        list_map_keys=("name",),
    )
    limits: dict[str, str | int] | None = optional(
        description="Maximum resources per resource name (quantities).",
        int_or_string=True,
        pattern=QUANTITY_PATTERN,
    )
    requests: dict[str, str | int] | None = optional(
        description="Minimum resources per resource name (quantities).",
        int_or_string=True,
        pattern=QUANTITY_PATTERN,
    )


@attrs.define(kw_only=True)
@schema(description="Names an object in the same namespace.", map_type="atomic")
class LocalObjectReference:
    name: str | None = optional(description="Name of the object.", schema_default="")


# --- node affinity -------------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="A label or field selector: key, operator and values.")
class NodeSelectorRequirement:
    key: str = field(description="Label or field key.")
    operator: str = field(description="One of In, NotIn, Exists, DoesNotExist, Gt, Lt.")
    values: list[str] | None = optional(
        description="Values; one integer for Gt/Lt, none for Exists/DoesNotExist.",
        list_type="atomic",
    )


@attrs.define(kw_only=True)
@schema(description="Requirements that must all hold for a node to match.", map_type="atomic")
class NodeSelectorTerm:
    match_expressions: list[NodeSelectorRequirement] | None = optional(
        description="Requirements on node labels.", list_type="atomic"
    )
    match_fields: list[NodeSelectorRequirement] | None = optional(
        description="Requirements on node fields.", list_type="atomic"
    )


@attrs.define(kw_only=True)
@schema(description="Terms of which at least one must match a node.", map_type="atomic")
class NodeSelector:
    node_selector_terms: list[NodeSelectorTerm] = field(description="Node selector terms, ORed.", list_type="atomic")


@attrs.define(kw_only=True)
@schema(description="A weighted node preference.")
class PreferredSchedulingTerm:
    preference: NodeSelectorTerm = field(description="Nodes this preference applies to.")
    weight: int = field(description="Weight from 1 to 100.", format="int32")


@attrs.define(kw_only=True)
@schema(description="Node affinity scheduling rules.")
class NodeAffinity:
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = optional(
        description="Soft preferences, summed by weight.", list_type="atomic"
    )
    required_during_scheduling_ignored_during_execution: NodeSelector | None = optional(
        description="Hard requirements checked at scheduling time."
    )


# --- status conditions ---------------------------------------------------


CONDITION_STATUSES = ("True", "False", "Unknown")


@attrs.define(kw_only=True)
@schema(description="One observed aspect of the object's state.")
class Condition:
    type: str = field(
        description="Condition type in CamelCase, optionally domain-prefixed.",
        max_length=316,
        pattern=(
            r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
        ),
    )
    status: str = field(description="True, False or Unknown.", enum=CONDITION_STATUSES)
    observed_generation: int | None = optional(
        description="Generation the condition was computed from.", minimum=0, format="int64"
    )
    last_transition_time: str = field(description="When the status last changed.", format="date-time")
    reason: str = field(
        description="Machine-readable CamelCase reason.",
        min_length=1,
        max_length=1024,
        pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
    )
    message: str = field(description="Human-readable details; may be empty.", max_length=32768)


# --- Gateway API -----------------------------------------------------------


@attrs.define(kw_only=True)
@schema(description="Reference to a Gateway API parent resource, normally a Gateway.")
class ParentReference:
    group: str | None = optional(
        description="API group of the parent.",
        schema_default="gateway.networking.k8s.io",
        max_length=253,
        pattern=r"^$|" + _DNS_SUBDOMAIN,
    )
    kind: str | None = optional(
        description="Kind of the parent.",
        schema_default="Gateway",
        min_length=1,
        max_length=63,
        pattern=r"^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$",
    )
    name: str = field(description="Name of the parent.", min_length=1, max_length=253)
    namespace: str | None = optional(
        description="Namespace of the parent; the route's namespace when unset.",
        min_length=1,
        max_length=63,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    )
    port: int | None = optional(
        description="Port of the parent the route attaches to.",
        minimum=1,
        maximum=65535,
        format="int32",
    )
    section_name: str | None = optional(
        description="Section of the parent, e.g. a listener name.",
        min_length=1,
        max_length=253,
        pattern=_DNS_SUBDOMAIN,
    )


# --- pod placement (PodSpec tolerations and affinity) ------------------------

TOLERATION_OPERATORS = ("Exists", "Equal")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@attrs.define(kw_only=True)
@schema(description="Lets a pod schedule onto (or stay on) nodes with a matching taint.")
class Toleration:
    key: str | None = optional(description="Taint key; empty with operator Exists matches every taint.")
    operator: str | None = optional(
        description="Exists (any value) or Equal (the value below); Equal when unset.",
        enum=TOLERATION_OPERATORS,
    )
    value: str | None = optional(description="Taint value for operator Equal.")
    effect: str | None = optional(description="Taint effect to match; every effect when unset.", enum=TAINT_EFFECTS)
    toleration_seconds: int | None = optional(
        description="For NoExecute: how long the pod stays after the taint appears.", format="int64"
    )


@attrs.define(kw_only=True)
@schema(description="A label selector requirement: key, operator and values.")
class LabelSelectorRequirement:
    key: str = field(description="Label key.")
    operator: str = field(description="One of In, NotIn, Exists, DoesNotExist.")
    values: list[str] | None = optional(description="Values; none for Exists/DoesNotExist.", list_type="atomic")


@attrs.define(kw_only=True)
@schema(description="Selects objects by their labels.", map_type="atomic")
class LabelSelector:
    match_labels: dict[str, str] | None = optional(description="Labels that must all be equal.")
    match_expressions: list[LabelSelectorRequirement] | None = optional(
        description="Requirements that must all hold.", list_type="atomic"
    )


@attrs.define(kw_only=True)
@schema(description="Pods that must (or must not) run in the same topology domain.")
class PodAffinityTerm:
    label_selector: LabelSelector | None = optional(description="The pods this term is about.")
    namespace_selector: LabelSelector | None = optional(description="Namespaces the pods are looked for in, by label.")
    namespaces: list[str] | None = optional(
        description="Namespaces the pods are looked for in; the pod's own when both are unset.",
        list_type="atomic",
    )
    topology_key: str = field(description="Node label whose value defines a topology domain.")
    match_label_keys: list[str] | None = optional(
        description="Pod label keys whose values are added to labelSelector (Kubernetes 1.29+).",
        list_type="atomic",
    )
    mismatch_label_keys: list[str] | None = optional(
        description="Pod label keys whose values are excluded through labelSelector (Kubernetes 1.29+).",
        list_type="atomic",
    )


@attrs.define(kw_only=True)
@schema(description="A weighted pod (anti-)affinity preference.")
class WeightedPodAffinityTerm:
    pod_affinity_term: PodAffinityTerm = field(description="The term.")
    weight: int = field(description="Weight from 1 to 100.", format="int32")


@attrs.define(kw_only=True)
@schema(description="Pod affinity or anti-affinity rules.")
class PodAffinity:
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = optional(
        description="Soft preferences, summed by weight.", list_type="atomic"
    )
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = optional(
        description="Hard requirements checked at scheduling time.", list_type="atomic"
    )


@attrs.define(kw_only=True)
@schema(description="Scheduling constraints of a pod (Kubernetes PodSpec affinity).")
class Affinity:
    node_affinity: NodeAffinity | None = optional(description="Node affinity rules.")
    pod_affinity: PodAffinity | None = optional(description="Co-location with other pods.")
    pod_anti_affinity: PodAffinity | None = optional(description="Separation from other pods.")
