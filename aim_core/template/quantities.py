"""Kubernetes resource quantities as byte counts, both ways (pure).

``minVram`` is a quantity (``64Gi``, ``192G``, ``1.5Ti``, ``68719476736``);
discovered model sizes are written back as binary quantities (``16Gi``).
Decimal suffixes are powers of 1000, binary ones powers of 1024, as
Kubernetes reads them. Anything else is ``None``, never an exception.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["format_binary", "parse_bytes"]

_SUFFIXES = {
    "": 1,
    "k": 1000,
    "M": 1000**2,
    "G": 1000**3,
    "T": 1000**4,
    "P": 1000**5,
    "E": 1000**6,
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "Pi": 1024**5,
    "Ei": 1024**6,
    "m": Decimal("0.001"),
}
_QUANTITY = re.compile(r"^\+?((?:\d+(?:\.\d*)?)|(?:\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m))?$")
_BINARY = (("Ei", 1024**6), ("Pi", 1024**5), ("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024))


def parse_bytes(value: object) -> int | None:
    """Bytes in a quantity (rounded up to a whole byte); ``None`` when it is not a non-negative quantity."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    text = str(value if value is not None else "").strip()
    match = _QUANTITY.match(text)
    if not match:
        return None
    number, exponent, suffix = match.groups()
    try:
        amount = Decimal(number)
        if exponent:
            amount *= Decimal(10) ** int(exponent[1:])
        amount *= Decimal(_SUFFIXES[suffix or ""])
    except (InvalidOperation, OverflowError, ValueError):
        return None
    whole = int(amount.to_integral_value(rounding="ROUND_CEILING"))
    return whole if whole < 2**63 else None


def format_binary(size: int) -> str:
    """``size`` bytes as the largest binary quantity that is exact: ``17179869184`` -> ``16Gi``."""
    for suffix, scale in _BINARY:
        if size >= scale and size % scale == 0:
            return f"{size // scale}{suffix}"
    return str(size)
