"""The cluster's GPUs, as the installed GPU vendors read them off Nodes.

Pure: takes Node dicts already read and the vendors from the
``aim_gpu_vendors`` hook, and answers the questions template gating (F40),
node affinity (F41), node-change filtering (F42) and template selection
(2.11) ask. The core knows no vendor or model name; everything model-specific
comes from the vendors.

Vendors are consulted in order of their ``name``, so answers do not depend on
plugin load order. Where two vendors claim the same user-written model, the
one that has it in the cluster wins, then the first by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.reconcile.devices import GpuDevice, GpuVendor

__all__ = ["GpuInventory", "node_gpu_facts"]


@attrs.frozen
class GpuInventory:
    """GPUs found on a set of Nodes, with the vendors that found them.

    ``devices`` holds one entry per model per node. Model names are the
    vendors' canonical ones (``MI300X``, ``H100``).
    """

    devices: tuple[GpuDevice, ...] = ()
    vendors: tuple[GpuVendor, ...] = attrs.field(default=(), converter=lambda vs: tuple(sorted(vs, key=_name)))
    #: the operator's GPU preference (best first), replacing the vendors' own; empty: the vendors'
    preference: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    # answers already given (the inventory never changes; template selection asks the same per service)
    _memo: dict[Any, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False, hash=False)

    @classmethod
    def from_nodes(
        cls, nodes: Iterable[Mapping[str, Any]], vendors: Iterable[GpuVendor], preference: Iterable[str] = ()
    ) -> GpuInventory:
        """Ask every vendor about every node.

        :param preference: GPU models best first, as an operator wrote them
            (``--gpu-preference``); replaces the vendors' preference lists.
        """
        ordered = tuple(sorted(vendors, key=_name))
        devices = tuple(device for node in nodes for vendor in ordered for device in vendor.detect(node))
        return cls(devices, ordered, tuple(preference))

    # -- what is there -----------------------------------------------------

    @property
    def models(self) -> tuple[str, ...]:
        """Every model present, sorted."""
        found = self._memo.get("models")
        if found is None:
            found = self._memo["models"] = tuple(sorted({d.model for d in self.devices}))
        return found

    @property
    def has_gpus(self) -> bool:
        """Whether any node has any GPU the vendors recognise."""
        return bool(self.devices)

    @property
    def counts(self) -> dict[str, int]:
        """Devices per model over all nodes."""
        totals: dict[str, int] = {}
        for d in self.devices:
            totals[d.model] = totals.get(d.model, 0) + d.count
        return dict(sorted(totals.items()))

    @property
    def vram(self) -> dict[str, int | None]:
        """Memory of one device per model: the largest seen, ``None`` when no node says.

        The largest, because one model can come in several sizes (A100 40 and
        80 GB) and gating asks whether *some* GPU is big enough.
        """
        sizes: dict[str, int | None] = {}
        for d in self.devices:
            known = [v for v in (sizes.get(d.model), d.vram_bytes) if v is not None]
            sizes[d.model] = max(known) if known else None
        return dict(sorted(sizes.items()))

    def models_with_vram_at_least(self, min_bytes: int) -> tuple[str, ...]:
        """Models present whose devices have at least ``min_bytes`` of memory, sorted."""
        return tuple(m for m, size in self.vram.items() if size is not None and size >= min_bytes)

    # -- user-written model names -----------------------------------------

    def canonical_model(self, model: str) -> str | None:
        """The name under which the cluster has ``model``, ``None`` if it has none.

        ``"mi300x"``, ``"AMD Instinct MI300X"`` and ``"MI300X"`` all give
        ``MI300X`` when such nodes exist.
        """
        key = ("canonical", model)
        if key not in self._memo:
            present = set(self.models)
            self._memo[key] = next((c for _vendor, c in self._claims(model) if c in present), None)
        return self._memo[key]  # type: ignore[no-any-return]

    def has_model(self, model: str) -> bool:
        """Whether the cluster has ``model``, however the user wrote it."""
        return self.canonical_model(model) is not None

    def resource_name(self, model: str) -> str | None:
        """The extended resource that schedules ``model`` here, ``None`` if absent."""
        canonical = self.canonical_model(model)
        return next((d.resource_name for d in self.devices if d.model == canonical), None)

    # -- preference ---------------------------------------------------------

    def preference_order(self) -> tuple[str, ...]:
        """The operator's preference if set (names made canonical by the vendors), else all vendors'
        preference lists, one after the other in vendor-name order."""
        found = self._memo.get("preference_order")
        if found is None:
            found = self._memo["preference_order"] = self._preference_order()
        return found

    def _preference_order(self) -> tuple[str, ...]:
        order: dict[str, None] = {}
        if self.preference:
            for written in self.preference:
                claims = self._claims(written)
                order.update(dict.fromkeys([claims[0][1]] if claims else [written.strip().upper()]))
            return tuple(m for m in order if m)
        for vendor in self.vendors:
            order.update(dict.fromkeys(vendor.preference()))
        return tuple(order)

    def unknown_preferences(self) -> tuple[str, ...]:
        """Entries of the operator's preference that no installed vendor recognises (a likely typo)."""
        return tuple(w for w in self.preference if w.strip() and not self._claims(w))

    def preference_rank(self, model: str | None) -> int:
        """Position of ``model`` in :meth:`preference_order`; lower is better.

        Unknown, blank or unranked models all rank last (the length of the
        order), as upstream ranks "others" equal.
        """
        order = self.preference_order()
        ranks = [order.index(c) for _v, c in self._claims(model or "") if c in order]
        return min(ranks, default=len(order))

    # -- scheduling ---------------------------------------------------------

    def node_affinity(self, model: str | None = None, min_vram: int | None = None) -> dict[str, Any] | None:
        """A ``NodeAffinity`` that requires nodes with the asked-for GPUs, or ``None``.

        A model asks the vendor that owns it (preferring one that has it in the
        cluster); a minimum memory asks every vendor and ORs their terms, one
        ``nodeSelectorTerm`` per vendor. A model wins over ``min_vram`` (the
        CRD forbids both). ``None`` when neither is given or no vendor can pin.
        """
        terms: list[list[dict[str, Any]]] = []
        if model and model.strip():
            claims = sorted(self._claims(model), key=lambda claim: not self._has(*claim))
            for vendor, canonical in claims:
                found = vendor.node_affinity_terms(canonical, None, self._devices_of(vendor))
                if found:
                    terms.append(found)
                    break
        elif min_vram is not None:
            for vendor in self.vendors:
                found = vendor.node_affinity_terms(None, min_vram, self._devices_of(vendor))
                if found:
                    terms.append(found)
        if not terms:
            return None
        selector_terms = [{"matchExpressions": expressions} for expressions in terms]
        return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": selector_terms}}

    def watches_node_key(self, key: str) -> bool:
        """Whether a node label or resource key carries GPU facts of any vendor."""
        return any(vendor.watches_node_key(key) for vendor in self.vendors)

    # -- helpers ------------------------------------------------------------

    def _claims(self, model: str) -> tuple[tuple[GpuVendor, str], ...]:
        """``(vendor, canonical name)`` for each vendor that recognises ``model``.

        A name a vendor detected but cannot normalise back (a driver family
        such as ``AI``) is matched as written, upper-cased.
        """
        key = ("claims", model)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = tuple(self._find_claims(model))
        return found

    def _find_claims(self, model: str) -> list[tuple[GpuVendor, str]]:
        claims = []
        for vendor in self.vendors:
            canonical = vendor.normalize_model(model)
            if canonical:
                claims.append((vendor, canonical))
        written = model.strip().upper()
        claimed = {c for _v, c in claims}
        for vendor in self.vendors:
            if written and written not in claimed and self._has(vendor, written):
                claims.append((vendor, written))
                claimed.add(written)
        return claims

    def _has(self, vendor: GpuVendor, model: str) -> bool:
        return any(d.model == model for d in self._devices_of(vendor))

    def _devices_of(self, vendor: GpuVendor) -> list[GpuDevice]:
        return [d for d in self.devices if d.vendor == vendor.name]


def node_gpu_facts(node: Mapping[str, Any], vendors: Sequence[GpuVendor]) -> dict[str, str]:
    """The labels and resources of ``node`` that some vendor watches (F42).

    Keys are ``label:<key>``, ``capacity:<key>`` and ``allocatable:<key>``; two
    versions of a node differ in their GPUs exactly when these dicts differ.
    """
    metadata = node.get("metadata") or {}
    status = node.get("status") or {}
    sources = {
        "label": metadata.get("labels") or {},
        "capacity": status.get("capacity") or {},
        "allocatable": status.get("allocatable") or {},
    }
    return {
        f"{kind}:{key}": str(value)
        for kind, values in sources.items()
        for key, value in sorted(values.items())
        if any(vendor.watches_node_key(key) for vendor in vendors)
    }


def _name(vendor: GpuVendor) -> str:
    return vendor.name
