"""Label and field selectors, on list, watch and deletecollection.

Label selectors take the whole syntax (``=``, ``==``, ``!=``, ``in``, ``notin``,
existence); field selectors take ``=``, ``==`` and ``!=`` on the fields the API
server supports for the resource (custom resources: ``metadata.name`` and
``metadata.namespace`` only; resources not listed here: any dotted path).
Watches turn selector transitions into ADDED/DELETED as the real server does
(see :mod:`~aim_testing.emulator.server`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from aim_testing.emulator.errors import api_error

_SET_REQ = re.compile(r"^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$")
_EQ_REQ = re.compile(r"^([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)$")
_EXISTS_REQ = re.compile(r"^(!?)\s*([^\s!=(),]+)$")

Matcher = Callable[[Mapping[str, Any]], bool]


def _split_requirements(selector: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return [part for part in parts if part]


def label_selector(selector: str) -> Matcher:
    """Compile a label selector: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``."""
    checks: list[Callable[[Mapping[str, str]], bool]] = []
    for req in _split_requirements(selector):
        if m := _SET_REQ.match(req):
            key, op, values = m[1], m[2], {v.strip() for v in m[3].split(",") if v.strip()}
            if op == "in":
                checks.append(lambda labels, k=key, vs=values: labels.get(k) in vs)
            else:
                checks.append(lambda labels, k=key, vs=values: labels.get(k) not in vs)
        elif m := _EQ_REQ.match(req):
            key, op, value = m[1], m[2], m[3]
            if op == "!=":
                checks.append(lambda labels, k=key, v=value: labels.get(k) != v)
            else:
                checks.append(lambda labels, k=key, v=value: labels.get(k) == v)
        elif m := _EXISTS_REQ.match(req):
            negate, key = bool(m[1]), m[2]
            checks.append(lambda labels, k=key, n=negate: (k in labels) != n)
        else:
            raise api_error(400, "BadRequest", f"unable to parse requirement: {req!r}")
    return lambda obj: all(check((obj.get("metadata") or {}).get("labels") or {}) for check in checks)


def field_selector(selector: str) -> Matcher:
    """Compile a field selector: ``path.to.field=value``, ``==``, ``!=`` (any dotted path)."""
    checks: list[Matcher] = []
    for req in _split_requirements(selector):
        m = _EQ_REQ.match(req)
        if not m:
            raise api_error(400, "BadRequest", f"invalid selector: '{selector}'; can't understand '{req}'")
        path, op, value = m[1].split("."), m[2], m[3]
        checks.append(lambda obj, p=path, neg=(op == "!="), v=value: (_field_str(obj, p) == v) != neg)
    return lambda obj: all(check(obj) for check in checks)


def _field_str(obj: Any, path: list[str]) -> str:
    for part in path:
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return "" if obj is None else str(obj).lower() if isinstance(obj, bool) else str(obj)


# The fields the API server accepts in a field selector on core/v1 Events (all kinds take
# metadata.name and metadata.namespace); anything else is refused with 400.
EVENT_FIELDS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    }
)


# The same for the other resources the operator selects by field (kube-apiserver's field label conversion
# functions: pkg/apis/core/v1/conversion.go, batch/v1, rbac: name and namespace only).
_NAMED = frozenset({"metadata.name", "metadata.namespace"})
FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "events"): EVENT_FIELDS,
    ("", "secrets"): _NAMED | {"type"},
    ("", "pods"): _NAMED
    | {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    },
    ("", "persistentvolumeclaims"): _NAMED,
    ("", "namespaces"): _NAMED | {"status.phase"},
    ("", "nodes"): _NAMED | {"spec.unschedulable"},
    ("batch", "jobs"): _NAMED | {"status.successful"},
    ("rbac.authorization.k8s.io", "rolebindings"): _NAMED,
}


def check_field_selector(resource: Any, selector: str | None, *, custom: bool = False) -> None:
    """Refuse a field selector the API server refuses (400): one it cannot parse, or one naming a field it
    does not support for the resource. Known are the resources of :data:`FIELDS` (Events, Secrets, Pods,
    ...) and custom resources (``custom``), which take only ``metadata.name`` and ``metadata.namespace``
    (kube-apiserver 1.24: CRD ``selectableFields`` came in 1.30)."""
    fields = _NAMED if custom else FIELDS.get((getattr(resource, "group", None), getattr(resource, "plural", None)))
    if not selector:
        return
    for req in _split_requirements(selector):
        m = _EQ_REQ.match(req)
        if not m:
            raise api_error(400, "BadRequest", f"invalid selector: '{selector}'; can't understand '{req}'")
        if fields is not None and m[1] not in fields:
            raise api_error(400, "BadRequest", f"field label not supported: {m[1]}")


def request_matcher(params: Mapping[str, str]) -> Matcher:
    """The ``labelSelector`` and ``fieldSelector`` of a request, as one predicate."""
    checks = []
    if params.get("labelSelector"):
        checks.append(label_selector(params["labelSelector"]))
    if params.get("fieldSelector"):
        checks.append(field_selector(params["fieldSelector"]))
    return lambda obj: all(check(obj) for check in checks)
