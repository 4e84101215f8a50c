"""GPU nodes as the installed GPU vendor plugins see them (through :mod:`aim_core.reconcile.gpu`).

Pure: takes Nodes as read and the vendors from the ``aim_gpu_vendors`` hook,
so a third-party vendor plugin is checked like the shipped ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.plugin.providers import Finding, GpuVendor
from aim_core.reconcile.gpu import GpuInventory

__all__ = ["gpu_findings"]

VENDOR_PLUGINS = "install a GPU vendor plugin (e.g. pip install ./plugins/gpu_amd); see docs/plugins.md"


def gpu_findings(nodes: Sequence[Mapping[str, Any]], vendors: Sequence[GpuVendor]) -> list[Finding]:
    """Nodes and GPUs per model per vendor; nodes with a GPU resource that no vendor can name."""
    if not vendors:
        return [Finding.fail("no GPU vendor plugin is installed: templates cannot be matched to GPUs", VENDOR_PLUGINS)]
    findings: list[Finding] = []
    any_gpus = False
    for vendor in sorted(vendors, key=lambda v: v.name):
        per_model: dict[str, tuple[set[str], int]] = {}
        unlabelled: list[str] = []
        for node in nodes:
            name = (node.get("metadata") or {}).get("name", "?")
            devices = GpuInventory.from_nodes([node], [vendor]).devices
            for device in devices:
                names, count = per_model.get(device.model, (set(), 0))
                per_model[device.model] = (names | {name}, count + device.count)
            resources = _gpu_resources(node, vendor)
            if resources and not devices:
                unlabelled.append(f"{name} ({', '.join(f'{k}: {v}' for k, v in resources.items())})")
        if per_model:
            any_gpus = True
            counts = "; ".join(
                f"{model}: {count} GPU{'s' if count != 1 else ''} on {len(names)} node{'s' if len(names) != 1 else ''}"
                for model, (names, count) in sorted(per_model.items())
            )
            findings.append(Finding.ok(f"{vendor.name} GPUs: {counts}"))
        if unlabelled:
            findings.append(
                Finding.warn(
                    f"{vendor.name}: nodes with a GPU resource but no GPU model labels the {vendor.name} plugin "
                    f"reads, so templates cannot use them: {', '.join(unlabelled)}",
                    f"deploy the {vendor.name} node labeller on them (the GPU operator's node feature labels), "
                    f"then check: kubectl get node <name> --show-labels",
                )
            )
    if not any_gpus:
        findings.append(
            Finding.warn(
                f"no node has GPUs that the installed vendor plugins ({', '.join(sorted(v.name for v in vendors))}) "
                "recognise: AIM services stay Pending until GPU nodes join",
                "kubectl get nodes --show-labels  # GPU nodes need their vendor's device plugin and node labeller",
            )
        )
    return findings


def _gpu_resources(node: Mapping[str, Any], vendor: GpuVendor) -> dict[str, int]:
    """Extended resources of ``vendor`` that the node has at least one of."""
    status = node.get("status") or {}
    found: dict[str, int] = {}
    for source in ("capacity", "allocatable"):
        for key, value in (status.get(source) or {}).items():
            if key in found or not vendor.watches_node_key(key):
                continue
            try:
                count = int(str(value))
            except ValueError:
                continue
            if count > 0:
                found[key] = count
    return found
