"""What a structural CRD schema does to a custom resource on every write, before validation.

The API server stores a custom resource in the shape its schema allows:

* fields the schema does not know are dropped (*pruned*), except under
  ``x-kubernetes-preserve-unknown-fields: true`` or ``additionalProperties``
  (:func:`unknown_fields` names them, as the API server's warnings do);
* ``null`` is dropped where the schema does not say ``nullable: true``;
* a ``default`` fills a field that is absent while the object holding it is
  present, and defaults apply again inside a value that was just defaulted;
* ``apiVersion``, ``kind`` and ``metadata`` are kept at the root and in embedded
  resources; everything else follows the schema.

Shared by the tests' API emulator and ``aim-engine render``; validation follows on the stored form
(:mod:`aim_core.api.validation`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["prune_and_default", "unknown_fields"]

_ENVELOPE = ("apiVersion", "kind", "metadata")


def prune_and_default(obj: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` as the API server would store it under the structural ``schema`` (a new object)."""
    return _object(obj, schema, envelope=True)


def _value(value: Any, schema: Mapping[str, Any]) -> Any:
    if isinstance(value, Mapping):
        return _object(value, schema, envelope=bool(schema.get("x-kubernetes-embedded-resource")))
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, Mapping):
            return copy.deepcopy(value)
        return [_value(item, items) for item in value if item is not None or items.get("nullable")]
    return value


def _object(value: Mapping[str, Any], schema: Mapping[str, Any], *, envelope: bool) -> dict[str, Any]:
    props: Mapping[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    untyped = "type" not in schema and not props and extra is None  # e.g. int-or-string: leave it be
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if envelope and key in _ENVELOPE:
            out[key] = copy.deepcopy(sub)
            continue
        child = props.get(key)
        if child is None and isinstance(extra, Mapping):
            child = extra
        if child is None:
            if preserve or untyped or extra is True:
                out[key] = copy.deepcopy(sub)
            continue  # pruned
        if sub is None:
            if child.get("nullable"):
                out[key] = None
            continue
        out[key] = _value(sub, child)
    for key, child in props.items():
        if key not in out and "default" in child and not (envelope and key in _ENVELOPE):
            out[key] = _value(copy.deepcopy(child["default"]), child)
    return out


def unknown_fields(obj: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """The paths of fields in ``obj`` that pruning would drop (``spec.adaptors``), as the API server warns."""
    found: list[str] = []

    def walk(value: Any, sub: Mapping[str, Any], path: str, envelope: bool) -> None:
        if isinstance(value, list):
            items = sub.get("items")
            if isinstance(items, Mapping):
                for i, item in enumerate(value):
                    walk(item, items, f"{path}[{i}]", False)
            return
        if not isinstance(value, Mapping):
            return
        props: Mapping[str, Any] = sub.get("properties") or {}
        extra = sub.get("additionalProperties")
        open_ended = sub.get("x-kubernetes-preserve-unknown-fields") or extra is True
        untyped = "type" not in sub and not props and extra is None
        for key, child_value in value.items():
            if envelope and key in _ENVELOPE:
                continue
            child = props.get(key)
            if child is None and isinstance(extra, Mapping):
                child = extra
            where = f"{path}.{key}" if path else key
            if child is None:
                if not (open_ended or untyped):
                    found.append(where)
                continue
            walk(child_value, child, where, bool(child.get("x-kubernetes-embedded-resource")))

    walk(obj, schema, "", True)
    return found
