"""The one alias for a Kubernetes object as controllers read it, and its three parts.

Objects come from the API server or the store as plain maps; code that reads them takes ``Obj``
(never mutates it) and code that builds one returns ``dict[str, Any]``. :func:`meta_of`,
:func:`spec_of` and :func:`status_of` read a part that may be missing or null as an empty map.
Each kind's ``view`` module turns its own object into a small typed value
(``aim_core.<kind>.view``) with the fields its code reads and their defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


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


__all__ = ["Obj", "meta_of", "pull_secret_names", "spec_of", "status_of"]
