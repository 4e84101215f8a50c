"""What the AMD vendor knows without asking a node: device IDs, memory sizes, ranking.

The device-ID and memory tables follow the upstream operator (spec 2.10). IDs
are PCI device IDs in lower case without ``0x``.
"""

from __future__ import annotations

GIB = 1024**3

DEVICE_MODELS: dict[str, str] = {
    "738c": "MI100",
    "738e": "MI100",
    "7408": "MI250X",
    "740c": "MI250X",
    "740f": "MI210",
    "7410": "MI210",
    "74a0": "MI300A",
    "74a1": "MI300X",
    "74a9": "MI300X",
    "74b5": "MI300X",
    "74bd": "MI300X",
    "74a2": "MI308X",
    "74a8": "MI308X",
    "74b6": "MI308X",
    "74a5": "MI325X",
    "74b9": "MI325X",
    "75a0": "MI350X",
    "75b0": "MI350X",
    "75a3": "MI355X",
    "75b3": "MI355X",
    "7460": "V710",
    "7461": "V710",
    "7448": "W7900",
    "744a": "W7900",
    "7449": "W7800",
    "745e": "W7800",
    "73a2": "W6900X",
    "73a3": "W6800",
    "73ab": "W6800X",
    "73a1": "V620",
    "73ae": "V620",
    "7550": "RX9070",
    "744c": "RX7900",
    "73af": "RX6900",
    "73bf": "RX6800",
}
"""PCI device ID -> model."""

MODELS: frozenset[str] = frozenset(DEVICE_MODELS.values())

STATIC_VRAM: dict[str, int] = {
    model: gib * GIB
    for model, gib in {
        "MI355X": 288,
        "MI350X": 288,
        "MI325X": 256,
        "MI308X": 128,
        "MI300X": 192,
        "MI300A": 128,
        "MI250X": 128,
        "MI210": 64,
        "MI100": 32,
        "V710": 32,
        "W7900": 48,
        "W7800": 32,
        "W6900X": 32,
        "W6800": 32,
        "W6800X": 32,
        "V620": 32,
        "RX9070": 16,
        "RX7900": 24,
        "RX6900": 16,
        "RX6800": 16,
    }.items()
}
"""Memory of one device when the node does not label it."""

PREFERENCE: tuple[str, ...] = ("MI325X", "MI300X", "MI250X", "MI210")
"""Best first, exactly upstream's order (2.11); every other model (MI355X,
MI350X, MI308X, MI300A, MI100, workstation cards) ranks last, all equal, as
upstream. Clusters that want newer GPUs first set the operator's GPU
preference (``--gpu-preference`` / ``AIM_GPU_PREFERENCE``), which replaces
this order."""


def device_ids(model: str) -> set[str]:
    """Every known PCI device ID of ``model``."""
    return {device_id for device_id, known in DEVICE_MODELS.items() if known == model}
