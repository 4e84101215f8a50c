"""Resource quantities in the canonical form Kubernetes prints them (pure).

Upstream's types hold quantities as Go's ``resource.Quantity``, which always
serialises in one canonical form: ``2000m`` -> ``"2"``, ``1.5`` -> ``"1500m"``,
``1000`` -> ``"1k"``, ``1.5Gi`` -> ``"1536Mi"``, ``0.5Ki`` -> ``"512"``,
``12e2`` -> ``"1200"``. :func:`canonical` gives the same string for every
quantity the operator writes (issue 18), so what a user reads back (and what
upstream's tests assert) is what ``kubectl`` and upstream show.

The rules, as ``resource.Quantity.String``: the suffix family of the input is
kept (binary ``Ki``..``Ei``, decimal ``n``..``E``, or an ``e`` exponent); the
mantissa is a whole number with the largest suffix (power of 1024, or of 1000)
that keeps it whole; a binary quantity below 1024 or not a whole number falls
back to decimal; precision beyond ``n`` (1e-9) is rounded up.
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal, InvalidOperation
from typing import Any

__all__ = ["canonical", "canonical_fields", "canonical_hardware", "canonical_sources"]

_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>[KMGTPE]i|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?$"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()} | {0: ""}
_BINARY_SUFFIX = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def canonical(value: Any) -> Any:
    """``value`` as the string Kubernetes prints for it; anything that is not a quantity comes back unchanged."""
    if isinstance(value, bool) or value is None:
        return value
    family = "decimal"
    try:
        if isinstance(value, int):
            amount = Decimal(value)
        elif isinstance(value, float):
            amount = Decimal(repr(value))
        elif isinstance(value, str):
            match = _PATTERN.match(value.strip())
            if match is None:
                return value
            amount = Decimal(match["number"])
            suffix, exp = match["suffix"], match["exp"]
            if suffix in _BINARY:
                family = "binary"
                amount *= 1024 ** _BINARY[suffix]
            elif suffix:
                amount = amount.scaleb(_DECIMAL[suffix])
            elif exp is not None:
                family = "exponent"
                if abs(int(exp)) > 40:
                    return value
                amount = amount.scaleb(int(exp))
            if match["sign"] == "-":
                amount = -amount
        else:
            return value
        if not amount.is_finite():
            return value
        nanos = int((amount * 10**9).to_integral_value(rounding=ROUND_UP))
    except (InvalidOperation, OverflowError, ValueError):
        return value
    sign, nanos = ("-" if nanos < 0 else ""), abs(nanos)
    if family == "binary" and nanos >= 1024 * 10**9 and nanos % 10**9 == 0:
        whole, power = nanos // 10**9, 0
        while power < 6 and whole % 1024 == 0:
            whole, power = whole // 1024, power + 1
        return f"{sign}{whole}{_BINARY_SUFFIX[power]}"
    if nanos == 0:
        return "0"
    exponent = -9
    while exponent < 18 and nanos % 1000 == 0:
        nanos, exponent = nanos // 1000, exponent + 3
    if family == "exponent":
        return f"{sign}{nanos}" + (f"e{exponent}" if exponent else "")
    return f"{sign}{nanos}{_DECIMAL_SUFFIX[exponent]}"


def canonical_fields(mapping: Any, *keys: str) -> Any:
    """A copy of ``mapping`` with the quantities under ``keys`` canonical (the others as they are)."""
    if not isinstance(mapping, dict):
        return mapping
    return {k: canonical(v) if k in keys else v for k, v in mapping.items()}


def canonical_hardware(hardware: Any) -> Any:
    """A copy of a ``hardware`` block (AIMHardwareRequirements) with its quantities canonical."""
    if not isinstance(hardware, dict):
        return hardware
    out = dict(hardware)
    if isinstance(out.get("gpu"), dict):
        out["gpu"] = canonical_fields(out["gpu"], "minVram")
    if isinstance(out.get("cpu"), dict):
        out["cpu"] = canonical_fields(out["cpu"], "requests", "limits")
    return out


def canonical_sources(sources: Any) -> Any:
    """Model sources (``modelId``, ``sourceUri``, ``size``, ...) with canonical sizes."""
    if not isinstance(sources, list):
        return sources
    return [canonical_fields(s, "size") for s in sources]
