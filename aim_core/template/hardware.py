"""GPU gating, resolved hardware and node affinity of a template (F39-F41). Pure.

A template *requires a GPU* when ``hardware.gpu`` asks for devices
(``requests > 0``), names a model or sets ``minVram``. Such a template is
checked against the cluster's GPUs as the installed vendors read them off the
Nodes (:class:`~aim_core.reconcile.gpu.GpuInventory`); the core names no vendor. In order:

1. ``minVram`` that is not a quantity -> Failed ``InvalidSpec``;
2. more than :data:`MAX_GPUS_PER_REPLICA` GPUs per replica -> NotAvailable
   ``GPUNotAvailable`` (no node carries that many; an absurd count is a
   status, never an exception);
3. a model that no node has (however it is written: ``mi300x``,
   ``AMD Instinct MI300X``) -> NotAvailable ``GPUNotAvailable``; no model and
   no GPU anywhere -> the same;
4. ``minVram`` larger than the memory of every candidate model -> NotAvailable
   ``VRAMNotAvailable`` (a model whose memory no label or table gives does not
   count);
5. more GPUs per replica than any node with a candidate model advertises as
   allocatable -> NotAvailable ``GPUNotAvailable``. Nodes that advertise no
   count (labels only, as on test clusters) give the benefit of the doubt,
   as upstream counts labels alone;
6. a replica on several nodes (``hardware.nodes``) with fewer nodes carrying
   a candidate model (and, where labels say, enough of them) than that ->
   NotAvailable ``GPUNotAvailable``: each pod of a group needs its own node.

Otherwise ``GPUAvailable``. The resource name is the spec's unless it is the
API default, which the CRD fills in for every GPU block: then the vendor that
owns the matching devices decides (``nvidia.com/gpu`` for an H100).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.common import DEFAULT_GPU_RESOURCE
from aim_core.plugin.providers import GpuVendor
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.obj import Obj, status_of
from aim_core.reconcile.quantities import canonical, canonical_fields
from aim_core.template.quantities import format_binary, parse_bytes

__all__ = [
    "MAX_GPUS_PER_REPLICA",
    "GpuCheck",
    "advertised_counts",
    "check_gpu",
    "hardware_summary",
    "replica_nodes",
    "requires_gpu",
    "resolved_hardware",
]

MAX_GPUS_PER_REPLICA = 64
"""More GPUs than any single node carries today (8 per node is usual, 16 rare)."""

COMPONENT = "GPU"


def _gpu_spec(spec: Obj) -> Obj:
    return ((spec.get("hardware") or {}).get("gpu")) or {}


def _requests(gpu: Obj) -> int | None:
    value = gpu.get("requests")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        text = str(value).strip()
        return int(text) if text.isdigit() else None
    return value if value >= 0 else None


def replica_nodes(spec: Obj | None) -> int:
    """Nodes one replica spans (``hardware.nodes``, 1 when unset or not a whole number above 0)."""
    value = ((spec or {}).get("hardware") or {}).get("nodes")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return 1
    return value


def requires_gpu(spec: Obj) -> bool:
    """Whether the template asks for a GPU: devices, a model or a minimum memory."""
    gpu = _gpu_spec(spec)
    return bool((_requests(gpu) or 0) > 0 or (gpu.get("model") or "").strip() or gpu.get("minVram") is not None)


def advertised_counts(nodes: Iterable[Obj], vendors: Sequence[GpuVendor]) -> dict[str, int]:
    """Per GPU model, the most devices one node offers as allocatable (else capacity) resource.

    Models found only on nodes that advertise no count are absent: their
    count is unknown.
    """
    best: dict[str, int] = {}
    for node in nodes:
        status = status_of(node)
        for vendor in vendors:
            for device in vendor.detect(node):
                for field in ("allocatable", "capacity"):
                    raw = str((status.get(field) or {}).get(device.resource_name, "")).strip()
                    if raw.isdigit():
                        best[device.model] = max(best.get(device.model, 0), int(raw))
                        break
    return best


@attrs.frozen
class GpuCheck:
    """The outcome of gating one template against the cluster's GPUs.

    :ivar health: the ``GPU`` component, ``None`` when the template needs no GPU.
    :ivar models: the models present that satisfy the template (canonical names).
    :ivar resource_name: the extended resource that schedules them.
    :ivar affinity: the ``NodeAffinity`` pinning inference pods to them, or ``None``.
    """

    health: Health | None
    models: tuple[str, ...] = ()
    resource_name: str | None = None
    affinity: dict[str, Any] | None = None

    @property
    def available(self) -> bool:
        return self.health is None or self.health.ready


def _not_available(reason: str, message: str) -> GpuCheck:
    return GpuCheck(Health(State.NOT_AVAILABLE, reason, message, upstream=True))


def _found(inventory: GpuInventory) -> str:
    return ", ".join(f"{n} x {m}" if n > 1 else m for m, n in inventory.counts.items()) or "no GPUs"


def _size(size: int | None) -> str:
    return "unknown memory" if size is None else format_binary(size)


def check_gpu(spec: Obj, inventory: GpuInventory, counts: Mapping[str, int] | None = None) -> GpuCheck:
    """Gate a template spec against the cluster's GPUs (rules in the module docstring)."""
    gpu = _gpu_spec(spec)
    if not requires_gpu(spec):
        resource = gpu.get("resourceName") or None
        return GpuCheck(None, resource_name=resource if gpu else None)
    requests = _requests(gpu)
    if requests is None:
        return GpuCheck(
            Health.error(
                Category.INVALID_SPEC,
                "InvalidSpec",
                f"spec.hardware.gpu.requests {gpu.get('requests')!r} is not a whole number of GPUs",
                upstream=True,
            )
        )
    min_vram = None
    if gpu.get("minVram") is not None:
        min_vram = parse_bytes(gpu["minVram"])
        if min_vram is None:
            return GpuCheck(
                Health.error(
                    Category.INVALID_SPEC,
                    "InvalidSpec",
                    f"spec.hardware.gpu.minVram {gpu['minVram']!r} is not a quantity such as 64Gi or 192G",
                    upstream=True,
                )
            )
    if requests > MAX_GPUS_PER_REPLICA:
        return _not_available(
            "GPUNotAvailable",
            f"the template asks for {requests} GPUs per replica; no node carries "
            f"more than {MAX_GPUS_PER_REPLICA}, so it can never be scheduled",
        )
    model = (gpu.get("model") or "").strip()
    if model:
        canonical = inventory.canonical_model(model)
        if canonical is None:
            return _not_available(
                "GPUNotAvailable", f"GPU model {model} is not present on any node (found: {_found(inventory)})"
            )
        candidates: tuple[str, ...] = (canonical,)
    else:
        candidates = inventory.models
        if not candidates:
            return _not_available(
                "GPUNotAvailable",
                "the template needs a GPU but no node has a GPU that an installed GPU vendor plugin recognises",
            )
    if min_vram is not None:
        sizes = inventory.vram
        enough = tuple(m for m in candidates if (sizes.get(m) or 0) >= min_vram)
        if not enough:
            have = ", ".join(f"{m} {_size(sizes.get(m))}" for m in candidates)
            return _not_available(
                "VRAMNotAvailable",
                f"the template needs GPUs with at least {format_binary(min_vram)} of memory; the cluster has {have}",
            )
        candidates = enough
    known = {m: (counts or {})[m] for m in candidates if m in (counts or {})}
    if requests > 0 and len(known) == len(candidates) and max(known.values()) < requests:
        offered = ", ".join(f"{m}: {n}" for m, n in sorted(known.items()))
        return _not_available(
            "GPUNotAvailable",
            f"the template needs {requests} GPUs on one node; the most any node "
            f"offers is {max(known.values())} ({offered})",
        )
    nodes = replica_nodes(spec)
    if nodes > 1:
        hosts = [d for d in inventory.devices if d.model in candidates and (not d.count or d.count >= requests)]
        if len(hosts) < nodes:
            each = f"{requests} x {'/'.join(candidates)}" if requests > 0 else "/".join(candidates)
            return _not_available(
                "GPUNotAvailable",
                f"the template spans {nodes} nodes with {each} each; only {len(hosts)} "
                f"node{'s' if len(hosts) != 1 else ''} can host such a pod",
            )
    resource = gpu.get("resourceName") or None
    if resource in (None, DEFAULT_GPU_RESOURCE):
        resource = next((r for m in candidates if (r := inventory.resource_name(m))), None) or resource
    affinity = inventory.node_affinity(model or None, min_vram if not model else None)
    what = f"{requests} x " if requests > 1 else ""
    if nodes > 1:
        what = f"{nodes} nodes x {what}"
    wanted = model or (f"GPU with at least {format_binary(min_vram)}" if min_vram is not None else "GPU")
    message = f"{what}{wanted} available (matching: {', '.join(candidates)})"
    return GpuCheck(Health.ok("GPUAvailable", message, upstream=True), candidates, resource, affinity)


def resolved_hardware(spec: Obj, profile: Obj | None, check: GpuCheck) -> dict[str, Any] | None:
    """``status.resolvedHardware``: GPU count and model from the profile when discovery gave them
    (a count of 0 included), else from the spec; resource name and ``minVram`` from the spec (the
    resource name as :func:`check_gpu` resolved it); CPU from the spec. ``None`` when nothing to say."""
    hardware = spec.get("hardware") or {}
    gpu_spec = hardware.get("gpu") or {}
    meta = ((profile or {}).get("metadata")) or {}
    out: dict[str, Any] = {}
    if gpu_spec or meta.get("gpu") or meta.get("gpuCount") is not None:
        gpu: dict[str, Any] = {}
        count = meta.get("gpuCount") if meta.get("gpuCount") is not None else gpu_spec.get("requests")
        if count is not None:
            gpu["requests"] = count
        model = meta.get("gpu") or gpu_spec.get("model")
        if model:
            gpu["model"] = model
        if gpu_spec.get("minVram") is not None:
            gpu["minVram"] = canonical(gpu_spec["minVram"])
        # Never left out: the CRD would default it, and every status write would then differ.
        gpu["resourceName"] = check.resource_name or gpu_spec.get("resourceName") or DEFAULT_GPU_RESOURCE
        if gpu:
            out["gpu"] = gpu
    if hardware.get("cpu"):
        out["cpu"] = canonical_fields(hardware["cpu"], "requests", "limits")  # as Kubernetes prints them (issue 18)
    if replica_nodes(spec) > 1:  # left out for one node, so single-node status stays as it was
        out["nodes"] = replica_nodes(spec)
    return out or None


def hardware_summary(resolved: Obj | None) -> str:
    """``2 x MI300X``; the bare model for 0 requests; ``GPU`` when the model is unknown; ``CPU`` without a GPU.

    A replica on several nodes leads with the node count: ``2 x 8 x MI300X`` (8 GPUs on each of 2 nodes).
    """
    gpu = (resolved or {}).get("gpu")
    nodes = replica_nodes({"hardware": resolved or {}})
    lead = f"{nodes} x " if nodes > 1 else ""
    if not gpu:
        return f"{lead}CPU"
    model = gpu.get("model") or "GPU"
    count = gpu.get("requests") or 0
    return f"{lead}{count} x {model}" if count else f"{lead}{model}"
