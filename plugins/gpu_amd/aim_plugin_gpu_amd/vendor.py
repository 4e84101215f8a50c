"""The AMD :class:`~aim_core.GpuVendor`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import GpuDevice
from aim_plugin_gpu_amd import names, tables
from aim_plugin_gpu_amd.detect import DEVICE_ID_LABEL, PREFIXES, RESOURCE, VENDOR, devices_on


class AmdGpuVendor:
    """AMD Instinct and Radeon GPUs, told apart by PCI device ID."""

    name = VENDOR
    #: the extended resources this vendor's device plugin advertises; a pod requesting one
    #: tolerates that resource's taint (ExtendedResourceToleration, issue 20)
    resource_names = (RESOURCE,)

    def detect(self, node: Mapping[str, Any]) -> Sequence[GpuDevice]:
        return devices_on(node)

    def normalize_model(self, model: str) -> str | None:
        return names.normalize_model(model)

    def preference(self) -> Sequence[str]:
        return tables.PREFERENCE

    def node_affinity_terms(
        self, model: str | None, min_vram_bytes: int | None, inventory: Sequence[GpuDevice]
    ) -> list[dict[str, Any]] | None:
        """``amd.com/gpu.device-id In <IDs>`` for a model, or for every model with enough memory.

        A model selects all its known device IDs (present in the cluster or
        not, as upstream) plus any unknown ID the inventory saw for it. A
        minimum memory selects the IDs of the models in ``inventory`` whose
        devices have at least that much. ``None`` when neither is asked or
        nothing matches. IDs are sorted (upstream's order is random).
        """
        own = [d for d in inventory if d.vendor == self.name]
        if model and model.strip():
            canonical = names.normalize_model(model) or model.strip().upper()
            models = {canonical}
        elif min_vram_bytes is not None:
            models = {d.model for d in own if d.vram_bytes is not None and d.vram_bytes >= min_vram_bytes}
        else:
            return None
        ids: set[str] = set()
        for wanted in models:
            ids |= tables.device_ids(wanted)
            ids |= {d.product_id for d in own if d.model == wanted and d.product_id}
        if not ids:
            return None
        return [{"key": DEVICE_ID_LABEL, "operator": "In", "values": sorted(ids)}]

    def watches_node_key(self, key: str) -> bool:
        return key.startswith(PREFIXES)

    def __repr__(self) -> str:
        return "AmdGpuVendor()"
