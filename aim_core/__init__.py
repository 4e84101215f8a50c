"""AIM Engine core: API models, hook specs, reconcile pipeline.

Plugins import only the names listed in ``__all__``.
"""

from aim_core.durations import to_gateway_duration
from aim_core.health import Category, Health, State
from aim_core.hookspecs import hookimpl
from aim_core.inspect import inspect_job, inspect_pods, inspect_pvc
from aim_core.providers import (
    Autoscaler,
    GpuDevice,
    GpuVendor,
    KubeObject,
    RegistryClient,
    RegistryCredentials,
    ReplicaStatus,
    ResourceRef,
    RouteBuilder,
    RouteRequest,
    RuntimeBuilder,
    RuntimeRequest,
    ScalingRequest,
)

__all__ = [
    "Autoscaler",
    "Category",
    "GpuDevice",
    "GpuVendor",
    "Health",
    "KubeObject",
    "RegistryClient",
    "RegistryCredentials",
    "ReplicaStatus",
    "ResourceRef",
    "RouteBuilder",
    "RouteRequest",
    "RuntimeBuilder",
    "RuntimeRequest",
    "ScalingRequest",
    "State",
    "hookimpl",
    "inspect_job",
    "inspect_pods",
    "inspect_pvc",
    "to_gateway_duration",
]
