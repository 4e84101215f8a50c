"""The provider protocols and value types that plugins implement and return.

Hooks in :mod:`aim_core.plugin.hookspecs` return *providers*: small objects with a
``name`` and a few methods. The host picks providers by name and rejects
duplicates. Everything here is plain data or a Protocol; plugins import these
names from :mod:`aim_core` and nothing deeper.

Objects exchanged with providers are Kubernetes objects as JSON-like dicts, so
a plugin can build any third-party shape without the core knowing its fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from aim_core.reconcile.devices import GpuDevice as GpuDevice
from aim_core.reconcile.devices import GpuVendor as GpuVendor
from aim_core.reconcile.devices import gpu_resource_names as gpu_resource_names
from aim_core.reconcile.health import Health
from aim_core.reconcile.resources import ResourceRef as ResourceRef

if TYPE_CHECKING:
    from aim_core.plugin.imageref import ImageReference
    from aim_core.plugin.registryerrors import ImageInfo

KubeObject = dict[str, Any]


# ---------------------------------------------------------------------------
# Runtime builders, routing, autoscaling
# ---------------------------------------------------------------------------


@attrs.frozen
class RuntimeRequest:
    """Everything a runtime builder needs to build the serving objects of one service.

    The core resolves AIM semantics (env layering, resources, cache volumes,
    replicas); the builder only maps them onto its serving API.
    """

    service: Mapping[str, Any]  # the AIMService object as read
    name: str  # name of the serving object
    namespace: str
    image: str
    labels: Mapping[str, str]
    env: Sequence[Mapping[str, Any]]
    resources: Mapping[str, Any]
    volumes: Sequence[Mapping[str, Any]] = ()
    volume_mounts: Sequence[Mapping[str, Any]] = ()
    node_affinity: Mapping[str, Any] | None = None  # ``affinity.nodeAffinity`` (GPU and user combined)
    image_pull_secrets: Sequence[Mapping[str, Any]] = ()
    service_account_name: str | None = None
    priority_class_name: str | None = None
    replicas: int | None = None  # fixed replicas; None when an autoscaler decides
    min_replicas: int | None = None
    max_replicas: int | None = None
    live: Mapping[str, Any] | None = None  # the serving object currently on the server
    #: the pod's whole ``affinity`` (node affinity as in ``node_affinity``, plus the user's pod
    #: (anti-)affinity); a builder that knows only ``node_affinity`` still places the GPU part
    affinity: Mapping[str, Any] | None = None
    node_selector: Mapping[str, str] | None = None
    tolerations: Sequence[Mapping[str, Any]] = ()
    # Volumes (and their mounts) whose names start with one of these are the request's alone: the
    # builder carries none of them over from ``live`` (a LoRA adapter removed from the service goes).
    owned_volume_prefixes: tuple[str, ...] = ()
    #: nodes one replica spans (``hardware.nodes``); above 1 only for a builder whose ``max_nodes`` allows it
    nodes: int = 1
    #: the engine layout of a replica on several nodes, ``None`` for one node
    layout: EngineLayout | None = None


@attrs.frozen
class EngineLayout:
    """How one replica's engine splits the model over its GPUs: resolved and checked by the core.

    ``tensor_parallel`` x ``pipeline_parallel`` = ``nodes`` x ``gpus_per_node``. ``engine_args`` is
    the ``AIM_ENGINE_ARGS`` value the core would set (the template's and the service's arguments
    with the layout filled in); a multi-node builder adds what each pod needs to find its group.
    """

    nodes: int
    gpus_per_node: int
    tensor_parallel: int
    pipeline_parallel: int
    engine_args: Mapping[str, Any] = attrs.field(factory=dict)


def max_nodes(builder: Any) -> int:
    """The most nodes one replica may span in what ``builder`` makes (its optional ``max_nodes``, else 1)."""
    value = getattr(builder, "max_nodes", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 1


#: The model server's HTTP port in AIM images (vLLM's OpenAI server).
MODEL_PORT = 8000


@attrs.frozen
class ServingEndpoint:
    """Where a runtime's model server pods are: the labels that select exactly them, and their model port.

    The route builder gets it in :class:`RouteRequest`, so a route that addresses pods (an
    InferencePool) follows whatever workload serves the model.
    """

    pod_selector: Mapping[str, str]
    port: int = MODEL_PORT


@runtime_checkable
class RuntimeBuilder(Protocol):
    """Turns a resolved service into serving objects and reads their health back.

    A builder may return objects of several kinds. Besides ``resource`` (the main object's), it
    declares every other kind its ``build`` may return in an optional ``kinds`` attribute (a
    sequence of :class:`ResourceRef`). The core applies them owned by the service, watches them,
    grants the operator the RBAC for them, and deletes an object of a declared kind that the
    service owns when the builder no longer returns it. An object of an undeclared kind is
    reported (``UnsupportedRuntimeObject``) and never applied.

    Optional too: ``endpoint(name) -> ServingEndpoint`` (else the pods of ``pod_selector(name)``
    on port 8000).

    Optional: ``max_nodes`` (an int, 1 when absent), the most nodes one replica may span in what
    the builder makes. A service whose resolved ``hardware.nodes`` is above 1 is built by the
    first installed builder whose ``max_nodes`` reaches it; every other service by the preferred
    builder, as before. A builder with ``max_nodes`` above 1 gets ``RuntimeRequest.nodes`` and
    ``RuntimeRequest.layout``.

    Optional: ``pod_label`` (a label key), the label whose value is the serving object's name on
    every pod it runs; the service controller watches and indexes pods by it.
    """

    name: str
    resource: ResourceRef

    def build(self, request: RuntimeRequest) -> list[KubeObject]:
        """The serving objects for ``request``; the first one is the main object (of kind ``resource``)."""

    def health(
        self, live: Mapping[str, Any] | None, pods: Sequence[Mapping[str, Any]], events: Sequence[Mapping[str, Any]]
    ) -> Health:
        """Health of the main serving object as read from the server."""

    def backend_service(self, name: str) -> str:
        """Name of the Service that receives traffic for serving object ``name``."""

    def pod_selector(self, name: str) -> Mapping[str, str]:
        """Labels that select the pods of serving object ``name``."""


@attrs.frozen
class RouteRequest:
    """A resolved route for one service."""

    service: Mapping[str, Any]
    name: str
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    parent_ref: Mapping[str, Any]
    path: str
    backend_service: str
    backend_port: int = 80
    request_timeout: str | None = None
    #: the model server pods of the service's runtime and their port (see :class:`ServingEndpoint`)
    endpoint: ServingEndpoint = ServingEndpoint({})
    #: the routing settings, the service's over its runtime config's, field by field (wire names)
    settings: Mapping[str, Any] = attrs.field(factory=dict)


@runtime_checkable
class RouteBuilder(Protocol):
    """Builds the route object of a service and reads its health.

    Like a runtime builder, it may return several objects (the route first) and declares the
    other kinds in an optional ``kinds`` attribute; the core owns, watches, grants and prunes
    them the same way.
    """

    name: str
    resource: ResourceRef

    def build(self, request: RouteRequest) -> KubeObject | list[KubeObject]:
        """The route object for ``request``, or a list whose first object is the route."""

    def health(self, live: Mapping[str, Any] | None) -> Health:
        """Route health from the object's ``status``."""


def declared_kinds(builder: Any) -> tuple[ResourceRef, ...]:
    """Every resource a runtime or route builder may return: its main ``resource`` first, then ``kinds``."""
    kinds = [builder.resource]
    for ref in getattr(builder, "kinds", ()) or ():
        if ref not in kinds:
            kinds.append(ref)
    return tuple(kinds)


def serving_endpoint(builder: Any, name: str) -> ServingEndpoint:
    """The model server pods of serving object ``name`` as ``builder`` builds them."""
    endpoint = getattr(builder, "endpoint", None)
    if callable(endpoint):
        found = endpoint(name)
        if isinstance(found, ServingEndpoint):
            return found
    return ServingEndpoint(dict(builder.pod_selector(name)), MODEL_PORT)


@attrs.frozen
class ScalingRequest:
    """The autoscaling spec of a service (``spec.autoScaling`` plus bounds)."""

    min_replicas: int
    max_replicas: int
    metrics: Sequence[Mapping[str, Any]] = ()


@attrs.frozen
class ReplicaStatus:
    """Replica counts read back from the scaler."""

    min_replicas: int
    max_replicas: int
    current_replicas: int
    desired_replicas: int


@runtime_checkable
class Autoscaler(Protocol):
    """Applies an autoscaling spec to serving objects and reads the scaler back."""

    name: str

    def apply(self, objects: list[KubeObject], request: ScalingRequest | None) -> None:
        """Mutate ``objects`` in place; ``request`` is ``None`` for fixed replicas."""

    def scaler(self, serving_name: str) -> tuple[ResourceRef, str]:
        """The resource and name of the object that reports scaling (e.g. an HPA)."""

    def health(self, live: Mapping[str, Any] | None, runtime_ready: bool) -> Health:
        """Scaler health."""

    def replicas(self, live: Mapping[str, Any]) -> ReplicaStatus | None:
        """Replica counts from the scaler object, ``None`` if it reports none."""


@attrs.frozen
class Described:
    """What ``aim-engine describe`` shows of one object: its health and a few facts (JSON values)."""

    health: Health
    details: Mapping[str, Any] = attrs.field(factory=dict)


@runtime_checkable
class DescribesRelated(Protocol):
    """Optional for an :class:`Autoscaler`: objects between the serving object and the scaler that the
    operator does not create (KEDA's ScaledObject, which KServe builds), for ``aim-engine describe``."""

    def related(self, serving_name: str) -> Sequence[tuple[ResourceRef, str]]:
        """The resource and name of each, the one nearest the serving object first."""

    def describe(self, live: Mapping[str, Any]) -> Described:
        """What to show of one of them, as read from the server."""


# ---------------------------------------------------------------------------
# Registry listing
# ---------------------------------------------------------------------------


@attrs.frozen
class RegistryCredentials:
    """Credentials for one registry host, from image pull secrets.

    Their repr hides the password and token, so a log line or traced hook call that
    shows one never shows the secret.
    """

    username: str | None = None
    password: str | None = attrs.field(default=None, repr=lambda value: "<hidden>" if value else repr(value))
    token: str | None = attrs.field(default=None, repr=lambda value: "<hidden>" if value else repr(value))


@runtime_checkable
class RegistryClient(Protocol):
    """Reads image metadata and lists tags and repositories on one registry host.

    Failures raise :class:`aim_core.registry.RegistryError`; controllers reach
    clients only through the :mod:`aim_core.registry` facade.
    """

    name: str

    async def image_info(self, image: ImageReference, credentials: RegistryCredentials | None) -> ImageInfo:
        """Digest, config labels and platform of ``image`` (linux/amd64 of an index)."""

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        """Repositories (``org/repo``) matching a ``*`` glob."""

    async def list_tags(self, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        """All tags of ``repository``."""


# ---------------------------------------------------------------------------
# Cluster checks (``aim-engine doctor``)
# ---------------------------------------------------------------------------

OK = "ok"
WARN = "warn"
FAIL = "fail"


@attrs.frozen
class Finding:
    """One result of a cluster check, as ``aim-engine doctor`` prints it.

    ``level`` is :data:`OK`, :data:`WARN` (works, but something a user may
    hit) or :data:`FAIL` (AIM services will not work). ``fix`` says how to
    put it right: the exact command, or a link to the docs.
    """

    level: str
    message: str
    fix: str = ""

    @classmethod
    def ok(cls, message: str) -> Finding:
        return cls(OK, message)

    @classmethod
    def warn(cls, message: str, fix: str = "") -> Finding:
        return cls(WARN, message, fix)

    @classmethod
    def fail(cls, message: str, fix: str = "") -> Finding:
        return cls(FAIL, message, fix)


@runtime_checkable
class ClusterReader(Protocol):
    """Read-only access to the cluster a check looks at.

    Failures raise :class:`aim_core.reconcile.errors.ApiError` (the server
    refused, e.g. ``status == 403``) or ``NetworkError``; the doctor turns a
    raising check into a finding of its own.
    """

    async def get(self, ref: ResourceRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        """One object, ``None`` when it does not exist."""

    async def list(self, ref: ResourceRef, namespace: str | None = None) -> list[dict[str, Any]]:
        """Every object of a resource (in one namespace, or all)."""


@runtime_checkable
class DoctorCheck(Protocol):
    """Checks what a plugin needs from the cluster (third-party CRDs, their configuration)."""

    name: str
    title: str  # the heading its findings are printed under, e.g. "KServe"

    async def run(self, cluster: ClusterReader) -> Sequence[Finding]:
        """What is there and what is missing, each missing thing with its fix."""
