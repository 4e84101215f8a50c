"""Hook specifications: the seven capabilities a plugin can provide.

Every hook name starts with ``aim_``. Provider hooks return objects that the
host selects by ``name`` (see :mod:`aim_core.plugin.manager`); duplicates are
rejected naming both plugins. Plugins mark implementations with
:data:`hookimpl`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

PROJECT = "aim_engine"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

if TYPE_CHECKING:
    from aim_core.plugin.benchtools import BenchmarkTool
    from aim_core.plugin.providers import (
        Autoscaler,
        DoctorCheck,
        GpuVendor,
        RegistryClient,
        RouteBuilder,
        RuntimeBuilder,
    )


# ---------------------------------------------------------------------------
# Runtime builders
# ---------------------------------------------------------------------------


@hookspec
def aim_runtime_builders() -> Iterable[RuntimeBuilder]:
    """Return the runtime builders this plugin provides.

    A runtime builder turns a resolved AIMService into the serving objects
    (for example a KServe InferenceService) and reads their health back.
    Return an empty iterable when the plugin provides none.
    """


# ---------------------------------------------------------------------------
# Routing
# ---------------------------------------------------------------------------


@hookspec
def aim_route_builders() -> Iterable[RouteBuilder]:
    """Return the route builders this plugin provides.

    A route builder makes the object that exposes a service through a gateway
    (for example a Gateway API HTTPRoute) and reads the route's health back.
    Return an empty iterable when the plugin provides none.
    """


# ---------------------------------------------------------------------------
# Autoscaling
# ---------------------------------------------------------------------------


@hookspec
def aim_autoscalers() -> Iterable[Autoscaler]:
    """Return the autoscalers this plugin provides.

    An autoscaler applies a service's autoscaling spec to the serving objects
    a runtime builder produced, and reads replica counts back from the scaler.
    Return an empty iterable when the plugin provides none.
    """


# ---------------------------------------------------------------------------
# Registry listing
# ---------------------------------------------------------------------------


@hookspec(firstresult=True)
def aim_registry_client(registry: str) -> RegistryClient | None:
    """Return a client for the container registry host ``registry``.

    Return ``None`` when this plugin does not handle that host, so the next
    plugin is asked; a generic OCI client answers last.
    Stops at first non-None result.

    :param registry: a registry host such as ``docker.io`` or ``ghcr.io``,
        with port when one was given.
    """


# ---------------------------------------------------------------------------
# GPU detection
# ---------------------------------------------------------------------------


@hookspec
def aim_gpu_vendors() -> Iterable[GpuVendor]:
    """Return the GPU vendors this plugin can detect on Nodes.

    A vendor reads GPU models, counts, VRAM and resource names from a Node's
    labels, and knows its model names, their preference order and the node
    affinity that pins pods to them. Return an empty iterable for none.
    """


# ---------------------------------------------------------------------------
# Cluster checks
# ---------------------------------------------------------------------------


@hookspec
def aim_doctor_checks() -> Iterable[DoctorCheck]:
    """Return the checks ``aim-engine doctor`` runs for what this plugin needs from a cluster.

    A check reads the cluster (third-party CRDs installed, Established and
    serving the version the plugin builds; their controllers' settings) and
    returns findings, each failure with the command that fixes it.
    Return an empty iterable when the plugin needs nothing from the cluster.
    """


# ---------------------------------------------------------------------------
# Benchmark tools
# ---------------------------------------------------------------------------


@hookspec
def aim_benchmark_tools() -> Iterable[BenchmarkTool]:
    """Return the benchmark tools this plugin provides.

    A benchmark tool names its image, builds the container command of an
    AIMBenchmark run from the spec (endpoint, scenarios, load levels, bounds)
    and parses the compact summary its container leaves as the termination
    message into per-scenario results. Return an empty iterable for none.
    """
