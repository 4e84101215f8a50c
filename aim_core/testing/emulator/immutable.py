"""Fields a real API server refuses to change once an object exists (422 Invalid).

Only what the operator's children touch:

* Job ``spec.template`` and ``spec.selector`` (batch/v1 validation: "field is immutable");
* RoleBinding and ClusterRoleBinding ``roleRef`` ("cannot change roleRef");
* PersistentVolumeClaim ``spec`` other than ``resources.requests`` (and the
  volume attributes class), and ``resources.requests.storage`` never shrinks
  as written (the API server compares quantities; we compare the text only
  when it changes, which is enough to catch a re-sized claim being re-applied).

Status writes are not checked; neither is seeding with ``put_object``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core.testing.emulator.errors import api_error


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _problems(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    if kind == "Job":
        return [f"spec.{f}: Invalid value: field is immutable" for f in ("template", "selector")
                if f in _spec(old) and _spec(old).get(f) != _spec(new).get(f)]
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        return ["roleRef: Invalid value: cannot change roleRef"] if old.get("roleRef") != new.get("roleRef") else []
    if kind == "PersistentVolumeClaim":
        def fixed(obj: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in _spec(obj).items() if k not in ("resources", "volumeAttributesClassName")}

        if fixed(old) != fixed(new):
            return ["spec: Forbidden: spec is immutable after creation except resources.requests and "
                    "volumeAttributesClassName for bound claims"]
    return []


def check_immutable(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """422 Invalid, as the API server answers, when ``new`` changes an immutable field of ``old``."""
    problems = _problems(kind, old, new)
    if problems:
        name = (new.get("metadata") or {}).get("name") or ""
        raise api_error(422, "Invalid", f'{kind} "{name}" is invalid: ' + ", ".join(problems), name=name, kind=kind)
