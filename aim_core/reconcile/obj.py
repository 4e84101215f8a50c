"""The one alias for a Kubernetes object as controllers read it, and its three parts.

Objects come from the API server or the store as plain maps; code that reads them takes ``Obj``
(never mutates it) and code that builds one returns ``dict[str, Any]``. :func:`meta_of`,
:func:`spec_of` and :func:`status_of` read a part that may be missing or null as an empty map.
Each kind's ``view`` module turns its own object into a small typed value
(``aim_core.<kind>.view``) with the fields its code reads and their defaults.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import orjson

Obj = Mapping[str, Any]
V = TypeVar("V")


class Stored(dict):  # type: ignore[type-arg]
    """An object as the operator's store holds it: read-only for everyone, so what is derived from
    it (its typed views) is kept with it (:func:`view_of`), and every reader of one version shares it.

    Copies are plain dicts (a copy may be modified: it must not carry the original's views).
    """

    __slots__ = ("_views",)
    _views: tuple[Any, Any] | dict[Any, Any]  # (key, view) of the one view built, else a map of them

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        memo[id(self)] = out
        for key, value in self.items():
            out[key] = copy.deepcopy(value, memo)
        return out

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def clone(value: Any) -> Any:
    """A deep copy of a JSON-shaped value (maps, lists, scalars), for bodies about to be changed and sent.

    Through orjson (a round trip is seven times faster than ``copy.deepcopy`` on an
    InferenceService; tuples come back as lists, as JSON has them); a value orjson
    refuses (keys that are not strings, other types) is copied field by field.
    """
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:
        return _clone(value)


def _clone(value: Any) -> Any:
    cls = value.__class__
    if cls is dict or cls is Stored:
        return {key: item if item.__class__ in _SCALARS else _clone(item) for key, item in value.items()}
    if cls is list:
        return [item if item.__class__ in _SCALARS else _clone(item) for item in value]
    if cls in _SCALARS:
        return value
    return copy.deepcopy(value)


def view_of(key: Any, obj: Any, build: Callable[[Any], V]) -> V:
    """``build(obj)``, once per :class:`Stored` object and ``key`` (every call for other objects)."""
    if obj.__class__ is not Stored:
        return build(obj)
    try:
        views = obj._views
    except AttributeError:  # most objects get one view: a pair, not a map (about 130 bytes each fewer)
        view = build(obj)
        obj._views = (key, view)
        return view
    table: dict[Any, Any]
    if isinstance(views, tuple):
        if views[0] == key:
            found: V = views[1]
            return found
        table = obj._views = {views[0]: views[1]}
    else:
        table = views
    cached: V | None = table.get(key)
    if cached is None:
        cached = table[key] = build(obj)
    return cached


def cached_view(of: Callable[[Any, Any], V]) -> Callable[[Any, Any], V]:
    """For a view class's ``of(cls, obj)`` (under ``@classmethod``): built once per stored object."""

    @functools.wraps(of)
    def wrapper(cls: Any, obj: Any) -> V:
        if obj.__class__ is not Stored:
            return of(cls, obj)
        return view_of(cls, obj, lambda o: of(cls, o))

    return wrapper


def meta_of(obj: Obj | None) -> Obj:
    """``metadata``, or an empty map."""
    return (obj or {}).get("metadata") or {}


def spec_of(obj: Obj | None) -> Obj:
    """``spec``, or an empty map."""
    return (obj or {}).get("spec") or {}


def status_of(obj: Obj | None) -> Obj:
    """``status``, or an empty map."""
    return (obj or {}).get("status") or {}


def pull_secret_names(refs: Any) -> tuple[str, ...]:
    """The names in an ``imagePullSecrets`` list: stripped, blanks dropped, order kept, no repeats."""
    names: list[str] = []
    for ref in refs or ():
        name = str((ref or {}).get("name") or "").strip()
        if name and name not in names:
            names.append(name)
    return tuple(names)


__all__ = ["Obj", "Stored", "cached_view", "clone", "meta_of", "pull_secret_names", "spec_of", "status_of", "view_of"]


def controller_uid(obj: Obj | None) -> str | None:
    """The uid of the object that controls ``obj`` (its owner reference with ``controller: true``), if any."""
    for ref in meta_of(obj).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            uid = ref.get("uid")
            return str(uid) if uid else None
    return None
