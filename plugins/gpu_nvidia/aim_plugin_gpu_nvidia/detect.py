"""Reading NVIDIA GPUs off a Node's GPU Feature Discovery labels.

GFD (part of the NVIDIA GPU operator) labels every GPU node with
``nvidia.com/gpu.product``, ``nvidia.com/gpu.memory`` (MiB per device) and
``nvidia.com/gpu.count``. A node without a product label is not counted: the
``nvidia.com/gpu`` resource alone does not say which GPU it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core import GpuDevice
from aim_plugin_gpu_nvidia.names import memory_from_product, model_for_product

VENDOR = "nvidia"
RESOURCE = "nvidia.com/gpu"
PREFIX = "nvidia.com/"
PRODUCT_LABEL = "nvidia.com/gpu.product"
MEMORY_LABEL = "nvidia.com/gpu.memory"
COUNT_LABEL = "nvidia.com/gpu.count"

GIB = 1024**3


def devices_on(node: Mapping[str, Any]) -> list[GpuDevice]:
    """The NVIDIA GPUs on ``node`` (GFD labels one product per node); empty when none.

    Count: ``nvidia.com/gpu.count``, else the ``nvidia.com/gpu`` resource
    (allocatable, then capacity; with time-slicing that is the number of
    shares), else 1. Memory: ``nvidia.com/gpu.memory`` in MiB rounded up to
    whole GiB, else a ``<n>GB`` part of the product name, else unknown.

    The rounding is deliberate: GFD reports what the driver leaves usable
    (an "80GB" H100 shows 81559 MiB, under 80 GiB), while users write
    ``minVram`` in the sizes NVIDIA sells. AMD's table is nominal too.
    """
    labels: Mapping[str, str] = (node.get("metadata") or {}).get("labels") or {}
    product = labels.get(PRODUCT_LABEL, "").strip()
    if not product:
        return []
    count = _number(labels.get(COUNT_LABEL))
    if count is None:
        count = _resource_count(node)
    memory = _number(labels.get(MEMORY_LABEL))
    return [
        GpuDevice(
            vendor=VENDOR,
            model=model_for_product(product),
            count=1 if count is None else count,
            resource_name=RESOURCE,
            vram_bytes=_whole_gib(memory) if memory else memory_from_product(product),
            product_id=product,
        )
    ]


def _whole_gib(mib: int) -> int:
    return -(-mib // 1024) * GIB


def _number(value: object) -> int | None:
    text = str(value if value is not None else "").strip()
    return int(text) if text.isdigit() else None


def _resource_count(node: Mapping[str, Any]) -> int | None:
    status = node.get("status") or {}
    for field in ("allocatable", "capacity"):
        count = _number((status.get(field) or {}).get(RESOURCE))
        if count is not None:
            return count
    return None
