"""Field and class metadata shared by the converter and the CRD generator.

Models are plain snake_case attrs classes. Everything the wire format or the
OpenAPI schema needs to know beyond the Python type lives in field metadata,
written through :func:`field`, and in class metadata, written through
:func:`schema`. The converter reads ``json_name``; the CRD generator reads the
rest. Nothing here imports the converter or the generator.

Conventions:

* Optional fields default to ``None`` and are omitted when unstructured, so a
  document round-trips unchanged. API-server defaults (F4) are declared with
  ``schema_default`` and never applied by the model itself: the API server
  applies them, code reads effective values through small accessors.
* Required fields have no Python default (or ``required=True``).
* Free-form JSON is typed ``dict[str, Any]`` and marked ``preserve_unknown``.
* Kubernetes quantities are ``str | int`` and marked ``int_or_string``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

_META = "aim"
_CLASS_META = "__aim_schema__"

T = TypeVar("T")


@attrs.frozen
class FieldMeta:
    """What a field declares beyond its Python type."""

    description: str = ""
    json_name: str | None = None
    schema_default: Any = attrs.field(factory=lambda: attrs.NOTHING)  # NOTHING = no default
    enum: tuple[Any, ...] | None = None
    minimum: int | float | None = None
    maximum: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    pattern: str | None = None
    format: str | None = None
    int_or_string: bool = False
    preserve_unknown: bool = False
    immutable: str | None = None  # message of a `self == oldSelf` rule
    cel: tuple[tuple[str, str], ...] = ()  # (rule, message)
    list_type: str | None = None  # x-kubernetes-list-type
    list_map_keys: tuple[str, ...] = ()
    deprecated: bool = False
    required: bool = False
    nullable: bool = False


def field(
    *,
    default: Any = attrs.NOTHING,
    factory: Callable[[], Any] | None = None,
    description: str = "",
    json_name: str | None = None,
    schema_default: Any = attrs.NOTHING,
    enum: tuple[Any, ...] | list[Any] | None = None,
    minimum: int | float | None = None,
    maximum: int | float | None = None,
    min_length: int | None = None,
    max_length: int | None = None,
    min_items: int | None = None,
    max_items: int | None = None,
    min_properties: int | None = None,
    pattern: str | None = None,
    format: str | None = None,
    int_or_string: bool = False,
    preserve_unknown: bool = False,
    immutable: str | None = None,
    cel: tuple[tuple[str, str], ...] | list[tuple[str, str]] = (),
    list_type: str | None = None,
    list_map_keys: tuple[str, ...] = (),
    deprecated: bool = False,
    required: bool = False,
    nullable: bool = False,
) -> Any:
    """Declare an attrs field with AIM metadata.

    A field with neither ``default`` nor ``factory`` is required on the wire.
    """
    meta = FieldMeta(
        description=description,
        json_name=json_name,
        schema_default=schema_default,
        enum=tuple(enum) if enum is not None else None,
        minimum=minimum,
        maximum=maximum,
        min_length=min_length,
        max_length=max_length,
        min_items=min_items,
        max_items=max_items,
        min_properties=min_properties,
        pattern=pattern,
        format=format,
        int_or_string=int_or_string,
        preserve_unknown=preserve_unknown,
        immutable=immutable,
        cel=tuple(cel),
        list_type=list_type,
        list_map_keys=tuple(list_map_keys),
        deprecated=deprecated,
        required=required or (default is attrs.NOTHING and factory is None),
        nullable=nullable,
    )
    kwargs: dict[str, Any] = {"metadata": {_META: meta}}
    if factory is not None:
        kwargs["factory"] = factory
    elif default is not attrs.NOTHING:
        kwargs["default"] = default
    return attrs.field(**kwargs)


def optional(**kw: Any) -> Any:
    """Shorthand for an optional field that defaults to ``None``."""
    return field(default=None, **kw)


def meta_of(a: attrs.Attribute) -> FieldMeta:
    """Return the AIM metadata of an attrs attribute (empty metadata if none)."""
    return a.metadata.get(_META) or FieldMeta(required=a.default is attrs.NOTHING)


def json_name(a: attrs.Attribute) -> str:
    """The wire name of an attribute: explicit ``json_name`` or camelCase."""
    explicit = meta_of(a).json_name
    if explicit:
        return explicit
    head, *rest = a.name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


@attrs.frozen
class ClassMeta:
    """Schema facts that belong to an object type rather than a field."""

    description: str = ""
    cel: tuple[tuple[str, str], ...] = ()
    min_properties: int | None = None
    preserve_unknown: bool = False
    map_type: str | None = None  # x-kubernetes-map-type, e.g. "atomic"


def schema(
    *,
    description: str = "",
    cel: tuple[tuple[str, str], ...] | list[tuple[str, str]] = (),
    min_properties: int | None = None,
    preserve_unknown: bool = False,
    map_type: str | None = None,
) -> Callable[[type[T]], type[T]]:
    """Class decorator attaching :class:`ClassMeta` to a model class."""

    def wrap(cls: type[T]) -> type[T]:
        setattr(
            cls,
            _CLASS_META,
            ClassMeta(
                description=description,
                cel=tuple(cel),
                min_properties=min_properties,
                preserve_unknown=preserve_unknown,
                map_type=map_type,
            ),
        )
        return cls

    return wrap


def class_meta(cls: type) -> ClassMeta:
    """Return the :class:`ClassMeta` declared on ``cls`` (not inherited)."""
    return cls.__dict__.get(_CLASS_META) or ClassMeta()
