"""AMD model names, device IDs and memory sizes as people and node labels write them."""

from __future__ import annotations

import re

from aim_plugin_gpu_amd.tables import DEVICE_MODELS, MODELS

UNKNOWN_PREFIX = "AMD-"

_VENDOR_WORDS = frozenset({"AMD", "INSTINCT", "RADEON"})
_SKIPPED = _VENDOR_WORDS | {"PRO"}
_SPLIT = re.compile(r"[-/: ]+")
# An optional letter prefix (MI, RX, W, V, ...) then digits, e.g. MI300X, RX7900, W7900, V620.
_MODEL_TOKEN = re.compile(r"^[A-Z]{0,3}\d+[A-Z]*$")
# A prefix written apart from its number: "RX 7900", "MI 300X".
_SEPARATE_PREFIXES = frozenset({"MI", "RX", "W", "V"})
_NUMBER = re.compile(r"^\d+[A-Z]*$")
_OWN_PREFIX = re.compile(r"^(MI|RX|W)\d")
_UNKNOWN = re.compile(r"^AMD-([0-9A-F]+)$")
_VRAM = re.compile(r"^(\d+(?:\.\d+)?)\s*([GT]I?)?$")


def device_id(value: str) -> str:
    """A PCI device ID as the tables key it: trimmed, lower case, no ``0x``."""
    value = value.strip().lower()
    return value[2:] if value.startswith("0x") else value


def model_for_device(value: str) -> str:
    """The model of a PCI device ID; unknown IDs become ``AMD-<ID upper>``."""
    key = device_id(value)
    return DEVICE_MODELS.get(key) or UNKNOWN_PREFIX + key.upper()


def normalize_model(model: str) -> str | None:
    """Canonical AMD model for a user- or label-written name, ``None`` if not AMD's.

    ``"AMD Instinct MI300X"`` and ``"mi300x"`` give ``MI300X``; ``"Radeon RX 7900
    XTX"`` gives ``RX7900``; ``"AMD-7FFF"`` (an unknown device ID) stays itself.
    A name is AMD's when it mentions AMD/Instinct/Radeon, is a known model, or
    starts with MI, RX or W followed by digits (so ``V100`` stays NVIDIA's).
    """
    text = model.strip().upper().replace("_", "-")
    unknown = _UNKNOWN.match(text)
    if unknown:
        return model_for_device(unknown.group(1))
    tokens = [t for t in _SPLIT.split(text) if t]
    candidate = _first_model_token(tokens)
    if candidate is None:
        return None
    if candidate in MODELS or _OWN_PREFIX.match(candidate) or _VENDOR_WORDS.intersection(tokens):
        return candidate
    return None


def family_model(value: str) -> str:
    """The model named by a ``gpu.family`` label value.

    The AMD node labeller writes driver families such as ``AI`` there, which
    name no model; those are kept upper-cased so the node still counts as a GPU
    node.
    """
    return normalize_model(value) or value.strip().upper()


def _first_model_token(tokens: list[str]) -> str | None:
    for i, token in enumerate(tokens):
        if token in _SKIPPED:
            continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in _SEPARATE_PREFIXES and _NUMBER.match(following):
            return token + following
        if _MODEL_TOKEN.match(token):
            return token
    return None


def parse_vram(value: str) -> int | None:
    """Bytes in a ``gpu.vram`` label value, ``None`` when it is not one.

    ``<n>G`` is GiB and ``<n>T`` TiB (``Gi``/``Ti`` accepted too); a bare
    number is bytes, as upstream's code reads it. The upstream admin doc calls
    the label MiB (``196608``), but the AMD node labeller writes ``192G`` and a
    bare number is read as bytes here too, so a hand-written MiB value is tiny.
    """
    match = _VRAM.match(value.strip().upper())
    if not match:
        return None
    number, unit = float(match.group(1)), (match.group(2) or "")[:1]
    scale = {"": 1, "G": 1024**3, "T": 1024**4}[unit]
    return int(number * scale)
