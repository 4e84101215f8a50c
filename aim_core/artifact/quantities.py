"""Kubernetes quantities as byte counts, and sizes as people read them. Pure.

``parse_bytes`` turns a resource quantity (``100Mi``, ``1.5G``, ``5e9``,
``2048``) into a whole number of bytes, rounding a fraction up; it refuses
what could never be a size (negative, not a quantity, beyond int64).
``display_size`` gives the ``status.displaySize`` text of F75 (binary units,
about two significant digits: ``"42 GiB"``, ``"1.5 TiB"``, ``"0 B"``).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

INT64_MAX = 2**63 - 1
GIB = 1024**3

_BINARY = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "Pi": 1024**5, "Ei": 1024**6}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>[KMGTPE]i|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?$"
)


class QuantityError(ValueError):
    """A value that is not a usable size; the message says why."""


def parse_bytes(value: str | int | float) -> int:
    """Bytes in a quantity, rounded up to a whole byte.

    :raises QuantityError: not a quantity, negative, or more than int64 bytes.
    """
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"{value!r} is not a quantity")
        amount = Decimal(repr(value))
    else:
        text = str(value).strip()
        match = _QUANTITY.match(text)
        if match is None:
            raise QuantityError(f"{text!r} is not a quantity (examples: 500Mi, 20Gi, 1.5T, 1073741824)")
        try:
            amount = Decimal(match["number"])
            if match["suffix"] in _BINARY:
                amount *= _BINARY[match["suffix"]]
            elif match["suffix"] is not None:
                amount *= _DECIMAL[match["suffix"]]
            elif match["exp"] is not None:
                exponent = int(match["exp"])
                if exponent > 30:
                    raise QuantityError(f"{text!r} is larger than any volume can be")
                amount = amount.scaleb(exponent)
        except InvalidOperation as exc:  # pragma: no cover - the pattern admits only numbers
            raise QuantityError(f"{text!r} is not a quantity") from exc
        if match["sign"] == "-":
            amount = -amount
    if amount < 0:
        raise QuantityError(f"{value!r} is negative")
    whole = int(amount.to_integral_value(rounding="ROUND_CEILING"))
    if whole > INT64_MAX:
        raise QuantityError(f"{value!r} is more than {INT64_MAX} bytes")
    return whole


def gib_with_headroom(size_bytes: int, headroom_percent: int) -> int:
    """Whole GiB for ``size_bytes`` plus ``headroom_percent``, rounded up (F71); at least 1."""
    total = size_bytes * (100 + headroom_percent)
    return max(1, -(-total // (100 * GIB)))


_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def display_size(size_bytes: int) -> str:
    """``status.displaySize``: binary units, about two significant digits."""
    if size_bytes <= 0:
        return "0 B"
    value, unit = float(size_bytes), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    if unit == 0:
        return f"{size_bytes} B"
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    if text.endswith(".0"):
        text = text[:-2]
    return f"{text} {_UNITS[unit]}"
