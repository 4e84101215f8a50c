"""The Acme :class:`~aim_core.GpuVendor`: what the core asks a GPU vendor, answered from node labels.

Acme's (fictional) device plugin advertises the extended resource
``acme.example/accel`` and labels each node with the product of its
accelerators:

==============================  =================================================
``acme.example/accel.model``    product id, e.g. ``x9`` (lower case, as the
                                device plugin writes it)
``acme.example/accel.count``    accelerators on the node, used when the node does
                                not (yet) advertise the resource
``acme.example/accel.vram``     memory of one accelerator, e.g. ``96G`` (GiB, as
                                device plugins mean it); the model table below is
                                used when it is missing
==============================  =================================================

The core never names a vendor: it asks every installed vendor what it sees on
each node (:meth:`detect`), whose model names a template's ``hardware.gpu.model``
is (:meth:`normalize_model`), which models to prefer (:meth:`preference`), how
to pin pods (:meth:`node_affinity_terms`) and which node keys matter
(:meth:`watches_node_key`, so a label change re-triggers templates).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import GpuDevice

VENDOR = "acme"
PREFIX = "acme.example/"
RESOURCE = "acme.example/accel"
MODEL_LABEL = "acme.example/accel.model"
COUNT_LABEL = "acme.example/accel.count"
VRAM_LABEL = "acme.example/accel.vram"

GiB = 1024**3

#: Canonical model -> (product id on the label, memory of one accelerator), best first.
MODELS: dict[str, tuple[str, int]] = {
    "X9": ("x9", 96 * GiB),
    "X7": ("x7", 64 * GiB),
    "X5": ("x5", 32 * GiB),
}
_NAME = re.compile(r"^(?:acme[\s_-]*)?(x\d+[a-z]?)$", re.IGNORECASE)
_QUANTITY = re.compile(r"^(\d+)\s*([MGT])i?B?$", re.IGNORECASE)
_UNITS = {"M": 1024**2, "G": 1024**3, "T": 1024**4}  # as device plugins mean them: 96G is 96 GiB


class AcmeGpuVendor:
    """Acme X-series accelerators."""

    name = VENDOR
    #: extended resources Acme's device plugin advertises: a pod requesting one tolerates its taint
    resource_names = (RESOURCE,)

    def detect(self, node: Mapping[str, Any]) -> Sequence[GpuDevice]:
        labels = (node.get("metadata") or {}).get("labels") or {}
        product = (labels.get(MODEL_LABEL) or "").strip()
        if not product:
            return []
        model = self.normalize_model(product) or product.upper()
        count = _count(node, labels)
        if count <= 0:
            return []
        vram = _bytes(labels.get(VRAM_LABEL, "")) or MODELS.get(model, ("", None))[1]
        return [
            GpuDevice(
                vendor=VENDOR, model=model, count=count, resource_name=RESOURCE, vram_bytes=vram, product_id=product
            )
        ]

    def normalize_model(self, model: str) -> str | None:
        """``x9``, ``X9``, ``Acme X9``, ``acme-x9`` -> ``X9``; names of other vendors -> ``None``."""
        match = _NAME.match(model.strip())
        return match.group(1).upper() if match else None

    def preference(self) -> Sequence[str]:
        return tuple(MODELS)

    def node_affinity_terms(
        self, model: str | None, min_vram_bytes: int | None, inventory: Sequence[GpuDevice]
    ) -> list[dict[str, Any]] | None:
        """``acme.example/accel.model In [...]``: the product ids of a model, or of every model with enough memory."""
        own = [d for d in inventory if d.vendor == VENDOR]
        if model and model.strip():
            wanted = {self.normalize_model(model) or model.strip().upper()}
        elif min_vram_bytes is not None:
            wanted = {d.model for d in own if d.vram_bytes is not None and d.vram_bytes >= min_vram_bytes}
        else:
            return None
        products = {MODELS[m][0] for m in wanted if m in MODELS}
        products |= {d.product_id for d in own if d.model in wanted and d.product_id}
        if not products:
            return None
        return [{"key": MODEL_LABEL, "operator": "In", "values": sorted(products)}]

    def watches_node_key(self, key: str) -> bool:
        return key.startswith(PREFIX)

    def __repr__(self) -> str:
        return "AcmeGpuVendor()"


def _count(node: Mapping[str, Any], labels: Mapping[str, str]) -> int:
    """Allocatable resource first (what the scheduler uses), else capacity, else the count label."""
    status = node.get("status") or {}
    for source in (status.get("allocatable") or {}, status.get("capacity") or {}, {RESOURCE: labels.get(COUNT_LABEL)}):
        raw = source.get(RESOURCE)
        if raw is not None and str(raw).strip().isdigit():
            return int(str(raw).strip())
    return 0


def _bytes(text: str) -> int | None:
    match = _QUANTITY.match(text.strip())
    if not match:
        return None
    return int(match.group(1)) * _UNITS[match.group(2).upper()]
