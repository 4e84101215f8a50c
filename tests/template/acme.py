"""A third-party GPU vendor plugin, as a test installs one: the core has never heard of it."""

from __future__ import annotations

from aim_core import GpuDevice, hookimpl


class AcmeVendor:
    """A vendor plugin the core has never heard of: ``acme.example/accel.model`` labels, ``acme.example/accel``."""

    name = "acme"

    def detect(self, node):
        labels = node["metadata"].get("labels") or {}
        model = labels.get("acme.example/accel.model")
        if not model:
            return []
        return [GpuDevice(vendor="acme", model=model.upper(), count=int(labels.get("acme.example/accel.count", "1")),
                          resource_name="acme.example/accel", vram_bytes=96 * 1024**3, product_id=model)]

    def normalize_model(self, model):
        return model.strip().upper() if model.strip().upper().startswith("X") else None

    def preference(self):
        return ("X9",)

    def node_affinity_terms(self, model, min_vram_bytes, inventory):
        values = sorted({d.product_id for d in inventory if d.vendor == "acme" and (not model or d.model == model)})
        return [{"key": "acme.example/accel.model", "operator": "In", "values": values}] if values else None

    def watches_node_key(self, key):
        return key.startswith("acme.example/")


def acme_node(model="x9", count=4):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "acme-1", "labels": {"acme.example/accel.model": model,
                                                      "acme.example/accel.count": str(count)}},
            "status": {"allocatable": {"acme.example/accel": str(count)}}}


class AcmePlugin:
    """The plugin object a test registers with the plugin manager."""

    @hookimpl
    def aim_gpu_vendors(self):
        return [AcmeVendor()]
