"""The NVIDIA :class:`~aim_core.GpuVendor`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import GpuDevice
from aim_plugin_gpu_nvidia import names
from aim_plugin_gpu_nvidia.detect import PREFIX, PRODUCT_LABEL, RESOURCE, VENDOR, devices_on

PREFERENCE: tuple[str, ...] = (
    "GB300",
    "B300",
    "GB200",
    "B200",
    "H200",
    "GH200",
    "H100",
    "A100",
    "L40S",
    "L40",
    "A10G",
    "A10",
    "L4",
    "V100",
    "T4",
)
"""Best first: newest generation and most memory first (Blackwell Ultra,
Blackwell, Hopper, Ampere), then the inference cards (Ada L40S/L40, Ampere
A10G/A10, Ada L4), then the older V100 and T4. Other models rank last."""


class NvidiaGpuVendor:
    """NVIDIA GPUs as GPU Feature Discovery labels them."""

    name = VENDOR
    #: the extended resources this vendor's device plugin advertises; a pod requesting one
    #: tolerates that resource's taint (ExtendedResourceToleration, issue 20)
    resource_names = (RESOURCE,)

    def detect(self, node: Mapping[str, Any]) -> Sequence[GpuDevice]:
        return devices_on(node)

    def normalize_model(self, model: str) -> str | None:
        return names.normalize_model(model)

    def preference(self) -> Sequence[str]:
        return PREFERENCE

    def node_affinity_terms(
        self, model: str | None, min_vram_bytes: int | None, inventory: Sequence[GpuDevice]
    ) -> list[dict[str, Any]] | None:
        """``nvidia.com/gpu.product In <product labels>`` seen in ``inventory``.

        NVIDIA has no device-ID label, and one model has many product strings
        (``NVIDIA-H100-80GB-HBM3``, ``NVIDIA-H100-PCIe``, ``...-SHARED``), so
        the values are the exact product labels of the matching devices in the
        cluster: those of the model, or those with at least ``min_vram_bytes``
        each. ``None`` when neither is asked or no node matches.
        """
        own = [d for d in inventory if d.vendor == self.name and d.product_id]
        if model and model.strip():
            canonical = names.normalize_model(model) or names.model_for_product(model)
            products = {d.product_id for d in own if d.model == canonical}
        elif min_vram_bytes is not None:
            products = {d.product_id for d in own if d.vram_bytes is not None and d.vram_bytes >= min_vram_bytes}
        else:
            return None
        if not products:
            return None
        return [{"key": PRODUCT_LABEL, "operator": "In", "values": sorted(products)}]

    def watches_node_key(self, key: str) -> bool:
        return key.startswith(PREFIX)

    def __repr__(self) -> str:
        return "NvidiaGpuVendor()"
