"""Go's ``encoding/json``, as far as upstream's name hashes and merged env values need it (spec 2.5).

Names hash their inputs the way the Go operator encodes them, so a Python
port must encode byte for byte alike: compact separators, raw UTF-8, Go's
HTML-safe escapes (``<``, ``>``, ``&``, U+2028/U+2029), Go's float format,
and ``corev1.EnvVar`` struct field order with empty fields omitted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

_GO_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
# Go struct field order of corev1.EnvVar and the selectors under valueFrom.
_ENV_ORDER = (
    "name",
    "value",
    "valueFrom",
    "fieldRef",
    "resourceFieldRef",
    "configMapKeyRef",
    "secretKeyRef",
    "apiVersion",
    "fieldPath",
    "containerName",
    "resource",
    "divisor",
    "key",
    "optional",
)


def _go_string(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif code < 0x20:
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:  # lone surrogate: invalid UTF-8 to Go
            out.append("\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _go_float(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"Go's encoding/json rejects {value!r}")
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        return re.sub(r"e([+-])0*(\d)", r"e\1\2", repr(value))
    return format(Decimal(repr(value)), "f")


def _is_empty(value: Any) -> bool:
    return value is None or value is False or (isinstance(value, (str, Mapping, list, tuple)) and not value)


def _go_struct(entry: Mapping[str, Any]) -> str:
    keys = [k for k in _ENV_ORDER if k in entry] + sorted(k for k in entry if k not in _ENV_ORDER)
    fields = []
    for key in keys:
        value = entry[key]
        if key != "name" and _is_empty(value):
            continue
        encoded = _go_struct(value) if isinstance(value, Mapping) else go_marshal(value)
        fields.append(f"{_go_string(key)}:{encoded}")
    return "{" + ",".join(fields) + "}"


def go_json(value: Any) -> str:
    """Encode one hash input as upstream does before hashing (spec 2.5).

    Scalars as Go's ``encoding/json`` (compact, raw UTF-8, HTML-safe escapes);
    ``None`` and empty lists/maps → ``null``; a mapping → the flat list
    ``[k1, v1, k2, v2, ...]`` sorted by key; a list of ``{"name": ...}`` mappings
    → env vars in ``corev1.EnvVar`` field order with empty fields omitted.
    """
    if isinstance(value, Mapping):
        value = [item for key in sorted(value) for item in (key, value[key])]
    if isinstance(value, (list, tuple)):
        if not value:
            return "null"
        if all(isinstance(v, Mapping) and "name" in v for v in value):
            return "[" + ",".join(_go_struct(v) for v in value) + "]"
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return go_marshal(value)


def go_marshal(value: Any) -> str:
    """``json.Marshal`` of JSON-shaped data: objects with sorted keys, ``[]`` for empty lists."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_go_string(str(k))}:{go_marshal(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_marshal(v) for v in value) + "]"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")
