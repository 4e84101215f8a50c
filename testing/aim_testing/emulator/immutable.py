"""Fields a real API server refuses to change once an object exists (422 Invalid).

Only what the operator's children touch:

* Job ``spec.template`` and ``spec.selector`` (batch/v1 validation: "field is immutable");
* RoleBinding and ClusterRoleBinding ``roleRef`` ("cannot change roleRef");
* PersistentVolumeClaim ``spec`` other than ``resources.requests`` (and the
  volume attributes class), and ``resources.requests.storage`` never shrinks
  as written (the API server compares quantities; we compare the text only
  when it changes, which is enough to catch a re-sized claim being re-applied).

And the AIM kinds' transition rules: every ``x-kubernetes-validations`` rule
``self == oldSelf`` in our CRDs (``spec.model`` and ``spec.template`` of an
AIMService, a template's ``modelName``, ``metric``, ``precision``,
``hardware``, ...). As for CEL transition rules on a real API server, a rule
applies only when the field exists both before and after the update (adding
``spec.template`` to a service that had none is allowed).

Status writes are not checked; neither is seeding with ``put_object``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import yaml

from aim_core.api.crds import CRDS_FILE
from aim_testing.emulator.errors import api_error

_AIM_CRDS = CRDS_FILE  # the CRDs as the operator ships them
_UNCHANGED = "self == oldSelf"
_MISSING = object()


@functools.cache
def _transition_rules() -> dict[str, tuple[tuple[tuple[str, ...], str], ...]]:
    """Per AIM kind, the object paths whose value may not change once set, with the rule's message."""
    rules: dict[str, list[tuple[tuple[str, ...], str]]] = {}

    def walk(kind: str, schema: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for rule in schema.get("x-kubernetes-validations") or ():
            if (rule.get("rule") or "").strip() == _UNCHANGED:
                rules.setdefault(kind, []).append((path, rule.get("message") or "field is immutable"))
        for name, child in (schema.get("properties") or {}).items():
            walk(kind, child, path + (name,))

    # libyaml's loader when there is one: the pure-Python one took seconds here, blocking the emulator's
    # event loop at the first update of a test run (every client's request waited, leases ran out)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for crd in yaml.load_all(_AIM_CRDS.read_text(), Loader=loader):
        if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
            continue
        kind = crd["spec"]["names"]["kind"]
        for version in crd["spec"].get("versions") or ():
            walk(kind, (version.get("schema") or {}).get("openAPIV3Schema") or {}, ())
    return {kind: tuple(found) for kind, found in rules.items()}


def _at(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(obj, Mapping) or key not in obj:
            return _MISSING
        obj = obj[key]
    return obj


def _transition_problems(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    problems = []
    for path, message in _transition_rules().get(kind, ()):
        before, after = _at(old, path), _at(new, path)
        if before is not _MISSING and after is not _MISSING and before != after:
            problems.append(f'{".".join(path)}: Invalid value: "object": {message}')
    return problems


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _problems(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    if kind == "Job":
        return [
            f"spec.{f}: Invalid value: field is immutable"
            for f in ("template", "selector")
            if f in _spec(old) and _spec(old).get(f) != _spec(new).get(f)
        ]
    if kind in ("RoleBinding", "ClusterRoleBinding"):
        return ["roleRef: Invalid value: cannot change roleRef"] if old.get("roleRef") != new.get("roleRef") else []
    if kind == "PersistentVolumeClaim":

        def fixed(obj: Mapping[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in _spec(obj).items() if k not in ("resources", "volumeAttributesClassName")}

        if fixed(old) != fixed(new):
            return [
                "spec: Forbidden: spec is immutable after creation except resources.requests and "
                "volumeAttributesClassName for bound claims"
            ]
    return []


def check_immutable(kind: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """422 Invalid, as the API server answers, when ``new`` changes an immutable field of ``old``."""
    problems = _problems(kind, old, new) + _transition_problems(kind, old, new)
    if problems:
        name = (new.get("metadata") or {}).get("name") or ""
        raise api_error(422, "Invalid", f'{kind} "{name}" is invalid: ' + ", ".join(problems), name=name, kind=kind)
