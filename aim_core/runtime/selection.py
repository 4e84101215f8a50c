"""What of a resource the operator asks the API server for: label and field selectors of a watch stream.

A controller that reads only some objects of a resource (pull secrets among
every Secret of the cluster, its own pods among every Pod) says so in
:meth:`~aim_core.runtime.controller.Controller.selections`: one
:class:`Selection` per stream. The API server then filters before it encodes,
and the operator decodes only what it keeps (Helm keeps releases of up to
1 MiB in Secrets). Selectors take the server's syntax; the few forms used here
(``key``, ``key=value``, ``key!=value``, comma for AND) are also matched
client-side, by :meth:`Selection.matches`, to tell which stream an object
belongs to when several streams feed one table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs


@attrs.frozen
class Selection:
    """One stream's selectors (both optional; none: the whole resource)."""

    label_selector: str | None = None
    field_selector: str | None = None

    def matches(self, obj: Mapping[str, Any]) -> bool:
        """Whether the API server would send ``obj`` to this stream."""
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        for req in _requirements(self.label_selector):
            key, op, value = _split(req)
            if op is None:
                negate = key.startswith("!")
                if (key.lstrip("!") in labels) == negate:
                    return False
            elif (labels.get(key) == value) != (op != "!="):
                return False
        for req in _requirements(self.field_selector):
            key, op, value = _split(req)
            if (_field(obj, key) == value) != (op != "!="):
                return False
        return True

    def __str__(self) -> str:
        return ", ".join(s for s in (self.field_selector, self.label_selector) if s) or "all"


EVERYTHING = Selection()


def _requirements(selector: str | None) -> list[str]:
    return [part.strip() for part in (selector or "").split(",") if part.strip()]


def _split(req: str) -> tuple[str, str | None, str]:
    for op in ("!=", "==", "="):
        if op in req:
            key, _, value = req.partition(op)
            return key.strip(), op, value.strip()
    return req, None, ""


def _field(obj: Mapping[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def union(declared: Iterable[list[Selection] | None]) -> list[Selection]:
    """The streams of a resource several controllers read: each controller's selections, or the
    whole resource when any of them needs it whole (``None`` or an empty list)."""
    streams: dict[Selection, None] = {}
    for selections in declared:
        if not selections:
            return [EVERYTHING]
        streams.update(dict.fromkeys(selections))
    return list(streams) or [EVERYTHING]
