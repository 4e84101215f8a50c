"""NVIDIA model names as people and GPU Feature Discovery write them.

GFD labels a node ``nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3``: the
product string with spaces turned into dashes, sometimes with ``-SHARED``
(time-slicing) or ``-MIG-...`` appended. The model is the first token that
looks like an NVIDIA part number (``H100``, ``A10G``, ``L40S``, ``GB200``);
consumer and workstation cards keep their ``RTX`` (``RTX4090``).
"""

from __future__ import annotations

import re

_VENDOR_WORDS = frozenset({"NVIDIA", "TESLA", "GEFORCE", "QUADRO"})
_SPLIT = re.compile(r"[-/: ]+")
# A letter series (or GB/GH superchip, RTX card) then a short number and an optional suffix letter or two.
_MODEL_TOKEN = re.compile(r"^(GB|GH|RTX|[A-Z])(\d{1,4})[A-Z]{0,2}$")
# Series letters that are NVIDIA's even without the word NVIDIA. V is left out
# because AMD sells V620/V710; V100 is listed by name instead.
_OWN_SERIES = frozenset({"GB", "GH", "RTX", "B", "H", "A", "L", "T", "P", "K"})
_OWN_MODELS = frozenset({"V100", "V100S"})
_RTX_SUFFIXES = frozenset({"TI", "SUPER", "ADA"})
_MEMORY_TOKEN = re.compile(r"^(\d+)GB$")


def clean(value: str) -> str:
    """Upper case, ``_`` as ``-``, without GFD's ``-SHARED`` suffix."""
    return value.strip().upper().replace("_", "-").removesuffix("-SHARED")


def normalize_model(model: str) -> str | None:
    """Canonical NVIDIA model for a user- or label-written name, ``None`` if not NVIDIA's.

    ``"NVIDIA-H100-80GB-HBM3"``, ``"h100"`` and ``"NVIDIA H100 PCIe"`` give
    ``H100``; ``"NVIDIA-GeForce-RTX-4090"`` gives ``RTX4090``. A product that
    names NVIDIA but no recognisable part keeps its cleaned full name, dashed
    (``NVIDIA-DGX-SPARK``), which is also what :func:`model_for_product` reports.
    """
    text = clean(model)
    tokens = [t for t in _SPLIT.split(text) if t]
    named = bool(_VENDOR_WORDS.intersection(tokens))
    found = _first_model_token(tokens)
    if found is None:
        return "-".join(tokens) if named else None
    candidate, series = found
    if named or series in _OWN_SERIES or candidate in _OWN_MODELS:
        return candidate
    return None


def model_for_product(product: str) -> str:
    """The model a ``nvidia.com/gpu.product`` label value names; never empty."""
    return normalize_model(product) or "-".join(t for t in _SPLIT.split(clean(product)) if t)


def memory_from_product(product: str) -> int | None:
    """Bytes from a ``<n>GB`` token of a product name (``A100-SXM4-80GB``), else ``None``."""
    for token in _SPLIT.split(clean(product)):
        match = _MEMORY_TOKEN.match(token)
        if match:
            return int(match.group(1)) * 1024**3
    return None


def _first_model_token(tokens: list[str]) -> tuple[str, str] | None:
    """``(model, series)`` of the first token that looks like a part number."""
    for i, token in enumerate(tokens):
        if token in _VENDOR_WORDS:
            continue
        if token == "RTX" and i + 1 < len(tokens) and tokens[i + 1].isdigit():
            name = "RTX" + tokens[i + 1]
            if i + 2 < len(tokens) and tokens[i + 2] in _RTX_SUFFIXES:
                name += tokens[i + 2]
            return name, "RTX"
        match = _MODEL_TOKEN.match(token)
        if match:
            return token, match.group(1)
    return None
