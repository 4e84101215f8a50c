"""Reading AMD GPUs off a Node's labels and resources.

The labels come from the AMD GPU operator's node labeller (``amd.com/gpu.*``)
or its older form (``beta.amd.com/gpu.*``), either as plain labels
(``amd.com/gpu.device-id=74a1``) or count-encoded ones
(``amd.com/gpu.device-id.74a1=8``). Labels alone decide that a node has GPUs,
as upstream does; the ``amd.com/gpu`` resource only supplies a count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aim_core import GpuDevice
from aim_plugin_gpu_amd.names import device_id, family_model, model_for_device, parse_vram
from aim_plugin_gpu_amd.tables import STATIC_VRAM

VENDOR = "amd"
RESOURCE = "amd.com/gpu"
PREFIXES = ("amd.com/", "beta.amd.com/")
DEVICE_ID_LABEL = "amd.com/gpu.device-id"


def devices_on(node: Mapping[str, Any]) -> list[GpuDevice]:
    """One :class:`GpuDevice` per AMD model found on ``node``; empty when none.

    The model comes from the first of these that says anything (F39): the
    plain device-ID label, its beta twin, the count-encoded device-ID labels
    (amd then beta), then the same four for ``gpu.family``. Count-encoded
    labels can name several models on one node; each becomes a device.
    """
    labels: Mapping[str, str] = (node.get("metadata") or {}).get("labels") or {}
    found = _read(labels, "device-id", model_for_device, device_id) or _read(
        labels, "family", family_model, lambda _: None
    )
    if not found:
        return []
    vram = _labelled_vram(labels) if len(found) == 1 else None
    resource_count = _resource_count(node)
    devices = []
    for model, product_id, label_count in found:
        count = label_count if label_count is not None else resource_count
        devices.append(
            GpuDevice(
                vendor=VENDOR,
                model=model,
                count=1 if count is None else count,
                resource_name=RESOURCE,
                vram_bytes=vram if vram is not None else STATIC_VRAM.get(model),
                product_id=product_id,
            )
        )
    return devices


def _read(
    labels: Mapping[str, str],
    prop: str,
    to_model: Callable[[str], str],
    to_product: Callable[[str], str | None],
) -> list[tuple[str, str | None, int | None]]:
    """``(model, product_id, count from the label)`` for one label property, in F39 order."""
    for prefix in PREFIXES:
        value = labels.get(f"{prefix}gpu.{prop}", "").strip()
        if value:
            return [(to_model(value), to_product(value), None)]
    for prefix in PREFIXES:
        encoded = _count_encoded(labels, f"{prefix}gpu.{prop}.")
        if encoded:
            return [(to_model(suffix), to_product(suffix), count) for suffix, count in encoded]
    return []


def _count_encoded(labels: Mapping[str, str], stem: str) -> list[tuple[str, int]]:
    """``(suffix, count)`` of labels ``<stem><suffix>`` whose value is set and not ``0``, by suffix."""
    found = []
    for key, value in labels.items():
        suffix = key[len(stem) :] if key.startswith(stem) else ""
        value = value.strip()
        if suffix and value and value != "0":
            found.append((suffix, int(value) if value.isdigit() else 1))
    return sorted(found)


def _labelled_vram(labels: Mapping[str, str]) -> int | None:
    """Per-device memory from ``gpu.vram`` (amd, beta, then a lone count-encoded value)."""
    for prefix in PREFIXES:
        parsed = parse_vram(labels.get(f"{prefix}gpu.vram", ""))
        if parsed is not None:
            return parsed
    for prefix in PREFIXES:
        encoded = _count_encoded(labels, f"{prefix}gpu.vram.")
        if len(encoded) == 1:
            return parse_vram(encoded[0][0])
    return None


def _resource_count(node: Mapping[str, Any]) -> int | None:
    """Devices the node advertises as ``amd.com/gpu``: allocatable, else capacity."""
    status = node.get("status") or {}
    for field in ("allocatable", "capacity"):
        value = str((status.get(field) or {}).get(RESOURCE, "")).strip()
        if value.isdigit():
            return int(value)
    return None
