"""Structural OpenAPI v3 schema nodes from the attrs models' type hints and field metadata.

How each Python type maps to a schema node is in :mod:`aim_core.api.crds`; this module builds
the nodes (:func:`schema_for`), :mod:`aim_core.api.crds` assembles whole CRDs from them.
"""

from __future__ import annotations

import datetime
import enum
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.fields import ClassMeta, FieldMeta, class_meta, json_name, meta_of


class SchemaError(TypeError):
    """A model type that has no structural-schema equivalent."""


# ---------------------------------------------------------------------------
# Python type -> schema node


def _split_optional(tp: Any) -> tuple[Any, bool]:
    """Strip ``None`` from a union; report whether it was there."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        rest = tuple(a for a in args if a is not type(None))
        if len(rest) != len(args):
            if len(rest) == 1:
                return rest[0], True
            return typing.Union[rest], True  # noqa: UP007 - rebuilding a runtime union
    return tp, False


def _is_int_or_string(tp: Any) -> bool:
    if typing.get_origin(tp) not in (typing.Union, types.UnionType):
        return False
    return set(typing.get_args(tp)) == {str, int}


def _scalar(tp: Any) -> dict[str, Any] | None:
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if tp is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is datetime.date:
        return {"type": "string", "format": "date"}
    return None


def _enum_node(values: Sequence[Any]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    if kinds <= {str}:
        base = "string"
    elif kinds <= {int}:
        base = "integer"
    elif kinds <= {bool}:
        base = "boolean"
    else:
        raise SchemaError(f"enum values of mixed types: {values!r}")
    return {"type": base, "enum": list(values)}


class SchemaBuilder:
    """Walks model types; keeps the stack of classes being expanded to catch cycles."""

    def __init__(self) -> None:
        self._stack: list[type] = []

    # -- types ---------------------------------------------------------------

    def type_node(self, tp: Any, where: str) -> dict[str, Any]:
        tp, _ = _split_optional(tp)
        if tp is Any or tp is object:
            return {"x-kubernetes-preserve-unknown-fields": True}
        if _is_int_or_string(tp):
            return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        scalar = _scalar(tp)
        if scalar is not None:
            return scalar
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return _enum_node([m.value for m in tp])
        if attrs.has(tp):
            return self.class_node(tp)
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is typing.Literal:
            return _enum_node(args)
        if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence):
            if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
                raise SchemaError(f"{where}: fixed-length tuples have no schema; use tuple[X, ...]")
            return {"type": "array", "items": self.type_node(args[0] if args else Any, where + "[]")}
        if origin in (dict, Mapping, typing.Mapping):
            key, value = args if args else (str, Any)
            if key is not str:
                raise SchemaError(f"{where}: map keys must be str, got {key!r}")
            value, _ = _split_optional(value)
            if value is Any or value is object:
                return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            return {"type": "object", "additionalProperties": self.type_node(value, where + "{}")}
        raise SchemaError(f"{where}: no schema for type {tp!r}")

    # -- attrs classes -------------------------------------------------------

    def class_node(self, cls: type, *, skip: Sequence[str] = ()) -> dict[str, Any]:
        if cls in self._stack:
            chain = " -> ".join(c.__name__ for c in [*self._stack, cls])
            raise SchemaError(f"recursive model cannot be expressed structurally: {chain}")
        self._stack.append(cls)
        try:
            hints = typing.get_type_hints(cls)
            cmeta: ClassMeta = class_meta(cls)
            node: dict[str, Any] = {"type": "object"}
            if cmeta.description:
                node["description"] = cmeta.description
            props: dict[str, Any] = {}
            required: list[str] = []
            for a in attrs.fields(cls):
                if a.name in skip:
                    continue
                name = json_name(a)
                meta = meta_of(a)
                props[name] = self.field_node(hints.get(a.name, a.type), meta, f"{cls.__name__}.{a.name}")
                if meta.required:
                    required.append(name)
            if props:
                node["properties"] = props
            if required:
                node["required"] = sorted(required)
            if cmeta.min_properties is not None:
                node["minProperties"] = cmeta.min_properties
            if cmeta.preserve_unknown:
                node["x-kubernetes-preserve-unknown-fields"] = True
            # Not in ClassMeta yet; read it when it appears (upstream marks selectors "atomic").
            map_type = getattr(cmeta, "map_type", None)
            if map_type:
                node["x-kubernetes-map-type"] = map_type
            if cmeta.cel:
                node["x-kubernetes-validations"] = [{"rule": r, "message": m} for r, m in cmeta.cel]
            return node
        finally:
            self._stack.pop()

    def field_node(self, tp: Any, meta: FieldMeta, where: str) -> dict[str, Any]:
        node = self.type_node(tp, where)
        if meta.int_or_string and not _contains_int_or_string(node):
            raise SchemaError(f"{where}: int_or_string set but the type has no str | int")
        if meta.preserve_unknown:
            _leaf(node)["x-kubernetes-preserve-unknown-fields"] = True
        _apply_value_constraints(_leaf(node), meta)
        if meta.description:
            node["description"] = meta.description
        elif meta.deprecated and "description" not in node:
            node["description"] = "Deprecated."
        if meta.schema_default is not attrs.NOTHING:
            node["default"] = meta.schema_default
        if meta.nullable:
            node["nullable"] = True
        _apply_container_constraints(node, meta, where)
        rules = list(node.pop("x-kubernetes-validations", []))
        rules += [{"rule": r, "message": m} for r, m in meta.cel]
        if meta.immutable:
            rules.append({"rule": "self == oldSelf", "message": meta.immutable})
        if rules:
            node["x-kubernetes-validations"] = rules
        return node


def _contains_int_or_string(node: dict[str, Any]) -> bool:
    return bool(_leaf(node).get("x-kubernetes-int-or-string"))


def _leaf(node: dict[str, Any]) -> dict[str, Any]:
    """The value node under any number of list/map wrappers."""
    while True:
        if node.get("type") == "array":
            node = node["items"]
        elif node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return node


def _apply_value_constraints(leaf: dict[str, Any], meta: FieldMeta) -> None:
    if meta.enum is not None:
        leaf["enum"] = list(meta.enum)
    for key, value in (
        ("minimum", meta.minimum),
        ("maximum", meta.maximum),
        ("minLength", meta.min_length),
        ("maxLength", meta.max_length),
        ("pattern", meta.pattern),
        ("format", meta.format),
    ):
        if value is not None:
            leaf[key] = value


def _apply_container_constraints(node: dict[str, Any], meta: FieldMeta, where: str) -> None:
    is_array = node.get("type") == "array"
    if (
        meta.min_items is not None or meta.max_items is not None or meta.list_type or meta.list_map_keys
    ) and not is_array:
        raise SchemaError(f"{where}: list constraints on a field that is not a list")
    if meta.min_items is not None:
        node["minItems"] = meta.min_items
    if meta.max_items is not None:
        node["maxItems"] = meta.max_items
    if meta.min_properties is not None:
        node["minProperties"] = meta.min_properties
    list_type = meta.list_type or ("map" if meta.list_map_keys else None)
    if list_type:
        node["x-kubernetes-list-type"] = list_type
    if meta.list_map_keys:
        node["x-kubernetes-list-map-keys"] = list(meta.list_map_keys)


def schema_for(tp: Any) -> dict[str, Any]:
    """Return the structural schema of a model type (attrs class or any supported hint)."""
    return SchemaBuilder().type_node(tp, getattr(tp, "__name__", repr(tp)))
