"""GPUs as the vendor plugins report them: the device type and the vendor protocol (``aim_gpu_vendors``).

Defined here, below the plugin host, so that the GPU inventory (:mod:`aim_core.reconcile.gpu`) can use them
without importing it; :mod:`aim_core.plugin.providers` and :mod:`aim_core` export them to plugins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs


@attrs.frozen
class GpuDevice:
    """GPUs of one model found on one node.

    ``model`` is the vendor's normalised model name (``MI300X``, ``H100``).
    ``vram_bytes`` is the memory of one device, ``None`` when unknown.
    ``resource_name`` is the extended resource that schedules the device.
    ``product_id`` is the vendor's identifier of the device exactly as a node
    label carries it (AMD PCI device ID ``74a1``, NVIDIA product
    ``NVIDIA-H100-80GB-HBM3``), so node affinity can match the label; ``None``
    when the node's labels give only a model name.
    """

    vendor: str
    model: str
    count: int
    resource_name: str
    vram_bytes: int | None = None
    product_id: str | None = None


@runtime_checkable
class GpuVendor(Protocol):
    """Reads one vendor's GPUs from Node objects and speaks for its models.

    Optional attribute ``resource_names``: the extended resources the vendor's
    device plugin advertises (``("amd.com/gpu",)``). A pod that requests one
    tolerates the taint of that key without being asked, as Kubernetes'
    ExtendedResourceToleration admission plugin would add; read through
    :func:`gpu_resource_names`, so a vendor without it still loads.
    """

    name: str

    def detect(self, node: Mapping[str, Any]) -> Sequence[GpuDevice]:
        """GPUs this vendor sees on ``node``; empty when none."""

    def normalize_model(self, model: str) -> str | None:
        """Canonical model name for a user-written one, ``None`` if not this vendor's."""

    def preference(self) -> Sequence[str]:
        """This vendor's models, best first, for template auto-selection."""

    def node_affinity_terms(
        self, model: str | None, min_vram_bytes: int | None, inventory: Sequence[GpuDevice]
    ) -> list[dict[str, Any]] | None:
        """``matchExpressions`` that pin pods to nodes with the requested GPUs, or ``None``."""

    def watches_node_key(self, key: str) -> bool:
        """Whether a node label or resource key carries this vendor's GPU facts (F42)."""


def gpu_resource_names(vendors: Sequence[GpuVendor]) -> frozenset[str]:
    """The extended resource names the vendors own (their optional ``resource_names``)."""
    return frozenset(str(n) for v in vendors for n in (getattr(v, "resource_names", None) or ()) if n)


__all__ = ["GpuDevice", "GpuVendor", "gpu_resource_names"]
