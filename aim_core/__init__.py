"""AIM Engine core: API models, hook specs, reconcile pipeline.

Plugins import only the names listed in ``__all__``.
"""

from aim_core.doctor.crds import check_crd
from aim_core.plugin.benchtools import (
    BENCH_API_KEY_ENV,
    BENCH_REPORT_DIR_ENV,
    BENCH_SUMMARY_ENV,
    BenchmarkCommand,
    BenchmarkReportError,
    BenchmarkRequest,
    BenchmarkResult,
    BenchmarkTool,
    Percentiles,
)
from aim_core.plugin.builders import carry_over_storage, plain_copy
from aim_core.plugin.hookspecs import hookimpl
from aim_core.plugin.providers import (
    Autoscaler,
    ClusterReader,
    Described,
    DescribesRelated,
    DoctorCheck,
    EngineLayout,
    Finding,
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
    ServingEndpoint,
    max_nodes,
)
from aim_core.reconcile.durations import to_gateway_duration
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.naming import derived_name
from aim_core.reconcile.workloads import inspect_job, inspect_pods, inspect_pvc
from aim_core.registry import (
    ImageInfo,
    ImageReference,
    InvalidImageReference,
    InvalidPullSecret,
    RegistryError,
    credentials_for,
    repository_matches,
)
from aim_core.registry.credentials import credentials_fingerprint
from aim_core.registry.oci import OciRegistryClient
from aim_core.registry.settings import RegistrySettings
from aim_core.registry.transport import Challenge, RegistryTransport, parse_link_next
from aim_core.registry.vendor import VendorRegistryClient

__all__ = [
    "BENCH_API_KEY_ENV",
    "BENCH_REPORT_DIR_ENV",
    "BENCH_SUMMARY_ENV",
    "Autoscaler",
    "BenchmarkCommand",
    "BenchmarkReportError",
    "BenchmarkRequest",
    "BenchmarkResult",
    "BenchmarkTool",
    "Category",
    "Challenge",
    "ClusterReader",
    "Described",
    "DescribesRelated",
    "DoctorCheck",
    "Finding",
    "GpuDevice",
    "GpuVendor",
    "Health",
    "ImageInfo",
    "ImageReference",
    "InvalidImageReference",
    "InvalidPullSecret",
    "KubeObject",
    "OciRegistryClient",
    "Percentiles",
    "RegistryClient",
    "RegistryCredentials",
    "RegistryError",
    "RegistrySettings",
    "RegistryTransport",
    "ReplicaStatus",
    "ResourceRef",
    "RouteBuilder",
    "RouteRequest",
    "RuntimeBuilder",
    "RuntimeRequest",
    "ScalingRequest",
    "ServingEndpoint",
    "EngineLayout",
    "max_nodes",
    "State",
    "VendorRegistryClient",
    "carry_over_storage",
    "check_crd",
    "credentials_fingerprint",
    "credentials_for",
    "derived_name",
    "hookimpl",
    "inspect_job",
    "inspect_pods",
    "inspect_pvc",
    "parse_link_next",
    "plain_copy",
    "repository_matches",
    "to_gateway_duration",
]
