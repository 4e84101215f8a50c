"""The one converter between AIM documents (JSON/YAML dicts) and models.

Renaming (snake_case <-> wire names) and omitting unset fields live here and
nowhere else. Structuring is strict about JSON types (an ``int`` field does not
accept ``"2"`` or ``2.5``, a list does not accept a string) but does not check
enums, bounds or patterns: the API server enforces those from the CRD schema.

Errors are reported as :class:`ModelError` with one message per problem, each
starting with the JSON path in wire names, e.g.
``$.spec.hardware.gpu.requests: expected int, got 'two'`` or
``$.spec.foo: unknown field``.

Unstructuring leaves out exactly the fields that are ``None``; ``false``, ``0``,
``[]`` and ``{}`` are kept (``downloadFilter: {}`` means "download everything").
An explicit ``null`` in a document is read as an absent key: the API server
prunes nulls from non-nullable fields, and no AIM field gives null a meaning of
its own. Free-form values (``dict[str, Any]``, ``Any``) are passed through as is.
"""

import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from aim_core.api.common import API_VERSION
from aim_core.api.fields import json_name
from aim_core.api.kinds import kind_info

T = TypeVar("T")

__all__ = ["ModelError", "converter", "parse", "structure", "unstructure"]


class ModelError(Exception):
    """A document does not fit the model; ``errors`` holds one message per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class _WrongType(TypeError):
    """A value of the wrong JSON type, with the value kept for the message."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(expected, value)
        self.expected = expected
        self.value = value

    def __str__(self) -> str:
        shown = repr(self.value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        return f"expected {self.expected}, got {shown}"


class _UnknownField(Exception):
    def __str__(self) -> str:
        return "unknown field"


# --- primitive and container hooks -----------------------------------------


def _strict(expected: str, check: Callable[[Any], bool]) -> Callable[[Any, Any], Any]:
    def hook(value: Any, _: Any) -> Any:
        if not check(value):
            raise _WrongType(expected, value)
        return value

    return hook


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _union_args(t: Any) -> set[Any]:
    if typing.get_origin(t) in (typing.Union, types.UnionType):
        return set(typing.get_args(t)) - {type(None)}
    return set()


def _is_int_or_string(t: Any) -> bool:
    return _union_args(t) == {str, int}


def _is_list(t: Any) -> bool:
    return t is list or typing.get_origin(t) is list


def _is_dict(t: Any) -> bool:
    return t is dict or typing.get_origin(t) is dict


def _list_hook(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], list]:
    (item_type,) = typing.get_args(t) or (Any,)
    item_hook = conv.get_structure_hook(item_type)

    def hook(value: Any, _: Any) -> list:
        if not isinstance(value, list):
            raise _WrongType("list", value)
        out, errors = [], []
        for index, item in enumerate(value):
            try:
                out.append(item_hook(item, item_type))
            except Exception as exc:  # collected and reported together
                note = IterableValidationNote(f"index {index}", index, item_type)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {t!r}", errors, t)
        return out

    return hook


def _dict_hook(t: Any, conv: cattrs.Converter) -> Callable[[Any, Any], dict]:
    _, value_type = typing.get_args(t) or (str, Any)
    value_hook = conv.get_structure_hook(value_type)

    def hook(value: Any, _: Any) -> dict:
        if not isinstance(value, dict):
            raise _WrongType("object", value)
        out, errors = {}, []
        for key, item in value.items():
            try:
                if not isinstance(key, str):
                    raise _WrongType("string key", key)
                out[key] = value_hook(item, value_type)
            except Exception as exc:
                note = IterableValidationNote(f"key {key!r}", key, value_type)
                exc.__notes__ = [*getattr(exc, "__notes__", []), note]
                errors.append(exc)
        if errors:
            raise IterableValidationError(f"While structuring {t!r}", errors, t)
        return out

    return hook


# --- attrs classes ---------------------------------------------------------


def _structure_attrs(cls: type, conv: cattrs.Converter) -> Callable[[Any, Any], Any]:
    overrides = {a.name: override(rename=json_name(a)) for a in attrs.fields(cls)}
    inner = make_dict_structure_fn(cls, conv, _cattrs_forbid_extra_keys=True, **overrides)

    def hook(value: Any, _: Any) -> Any:
        if not isinstance(value, dict):
            raise _WrongType("object", value)
        return inner(value, cls)

    return hook


def _unstructure_attrs(cls: type, conv: cattrs.Converter) -> Callable[[Any], dict]:
    # Omit only fields left at a None default: false, 0, [] and {} are kept.
    overrides = {a.name: override(rename=json_name(a), omit_if_default=a.default is None) for a in attrs.fields(cls)}
    return make_dict_unstructure_fn(cls, conv, **overrides)


def _build() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    conv.register_structure_hook(str, _strict("str", lambda v: isinstance(v, str)))
    conv.register_structure_hook(int, _strict("int", _is_int))
    conv.register_structure_hook(bool, _strict("bool", lambda v: isinstance(v, bool)))
    conv.register_structure_hook(float, _strict("number", lambda v: _is_int(v) or isinstance(v, float)))
    conv.register_structure_hook_func(
        _is_int_or_string,
        _strict("int or str", lambda v: _is_int(v) or isinstance(v, str)),
    )
    conv.register_structure_hook_factory(_is_list, _list_hook)
    conv.register_structure_hook_factory(_is_dict, _dict_hook)
    conv.register_structure_hook_factory(attrs.has, _structure_attrs)
    conv.register_unstructure_hook_factory(attrs.has, _unstructure_attrs)
    return conv


converter = _build()
"""The converter. Prefer :func:`structure`, :func:`unstructure` and :func:`parse`."""


# --- error messages --------------------------------------------------------


def _wire_names(exc: BaseException) -> BaseException:
    """Rebuild a cattrs error tree so paths use wire names and unknown keys
    become one error each."""
    if isinstance(exc, ClassValidationError):
        names = {a.name: json_name(a) for a in attrs.fields(exc.cl)} if attrs.has(exc.cl) else {}
        children: list[Exception] = []
        for sub in exc.exceptions:
            if isinstance(sub, ForbiddenExtraKeysError):
                for key in sorted(sub.extra_fields):
                    unknown = _UnknownField()
                    unknown.__notes__ = [AttributeValidationNote(key, key, None)]
                    children.append(unknown)
                continue
            notes = getattr(sub, "__notes__", [])
            new = _wire_names(sub)
            new.__notes__ = [
                AttributeValidationNote(str(n), names.get(n.name, n.name), n.type)
                if isinstance(n, AttributeValidationNote)
                else n
                for n in notes
            ]
            children.append(new)
        return ClassValidationError(exc.message, children, exc.cl)
    if isinstance(exc, IterableValidationError):
        children = []
        for sub in exc.exceptions:
            new = _wire_names(sub)
            new.__notes__ = getattr(sub, "__notes__", [])
            children.append(new)
        return IterableValidationError(exc.message, children, exc.cl)
    return exc


def _describe(exc: BaseException, _type: Any) -> str:
    if isinstance(exc, (_WrongType, _UnknownField)):
        return str(exc)
    if isinstance(exc, KeyError):
        return "required field missing"
    return f"invalid value ({exc})"


def _messages(exc: BaseException, root: str = "$") -> list[str]:
    out = []
    for line in cattrs.transform_error(_wire_names(exc), path=root, format_exception=_describe):
        message, _, path = line.rpartition(" @ ")
        out.append(f"{path}: {message}")
    return out


# --- public API ------------------------------------------------------------


def structure(cls: type[T], data: Any) -> T:
    """Build a ``cls`` from JSON-like ``data``; raise :class:`ModelError` if it does not fit."""
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, _WrongType) as exc:
        raise ModelError(_messages(exc)) from exc


def unstructure(obj: Any) -> dict[str, Any]:
    """Turn a model back into a JSON-like dict with wire names; unset fields are left out."""
    return converter.unstructure(obj)


def parse(document: Any) -> Any:
    """Build the top-level model matching ``document['kind']``.

    Raises :class:`ModelError` for documents that are not AIM objects, of an
    unknown kind or version, or that do not fit the kind's model.
    """
    if not isinstance(document, dict):
        raise ModelError([f"$: {_WrongType('object', document)}"])
    kind = document.get("kind")
    info = kind_info(kind) if isinstance(kind, str) else None
    if info is None:
        raise ModelError([f"$.kind: unknown kind {kind!r}"])
    version = document.get("apiVersion")
    if version != API_VERSION:
        raise ModelError([f"$.apiVersion: expected {API_VERSION!r}, got {version!r}"])
    return structure(info.cls, document)
