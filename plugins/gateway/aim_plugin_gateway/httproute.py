"""The Gateway API route builder: one ``gateway.networking.k8s.io/v1`` HTTPRoute per service.

The core resolves the route (name, path, parent reference, backend Service,
timeout already spelled as a Gateway API duration); this module places it in
the HTTPRoute shape: one rule that matches the path prefix, strips it with a
``URLRewrite`` filter, and sends the request to the backend Service.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core import Category, Health, KubeObject, ResourceRef, RouteRequest, State

HTTPROUTE = ResourceRef("gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes")

LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "aim-engine"


class HTTPRouteBuilder:
    """Builds a Gateway API HTTPRoute and reads its acceptance back."""

    name = "gateway-api"
    resource = HTTPROUTE

    def build(self, request: RouteRequest) -> KubeObject:
        rule: dict[str, Any] = {
            "matches": [{"path": {"type": "PathPrefix", "value": request.path}}],
            "filters": [
                {
                    "type": "URLRewrite",
                    "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
                }
            ],
            "backendRefs": [
                {
                    "kind": "Service",
                    "name": request.backend_service,
                    "namespace": request.namespace,
                    "port": request.backend_port,
                }
            ],
        }
        if request.request_timeout:
            rule["timeouts"] = {"request": request.request_timeout}
        return {
            "apiVersion": HTTPROUTE.api_version,
            "kind": HTTPROUTE.kind,
            "metadata": {
                "name": request.name,
                "namespace": request.namespace,
                "labels": {**request.labels, LABEL_COMPONENT: "routing", LABEL_MANAGED_BY: MANAGED_BY},
                "annotations": dict(request.annotations),
            },
            "spec": {"parentRefs": [_plain(request.parent_ref)], "rules": [rule]},
        }

    def health(self, live: Mapping[str, Any] | None) -> Health:
        """Route health from ``status.parents`` (F60).

        Any parent that accepted the route makes it Ready. Otherwise a parent
        that refused it (``Accepted=False``) is an invalid spec carrying the
        gateway's reason; unresolved references (``ResolvedRefs=False``,
        typically the backend Service not created yet) mean waiting for a
        child; no verdict yet is ``HTTPRoutePending``.
        """
        if live is None:
            return Health.progressing("HTTPRouteCreating", "Creating the HTTPRoute")
        name = (live.get("metadata") or {}).get("name", "")
        parents = (live.get("status") or {}).get("parents") or ()
        conditions = [
            (_parent_name(p), c) for p in parents for c in p.get("conditions") or () if isinstance(c, Mapping)
        ]
        for parent, cond in conditions:
            if cond.get("type") == "Accepted" and cond.get("status") == "True":
                return Health.ok("HTTPRouteAccepted", f"HTTPRoute {name} is accepted by {parent}")
        for parent, cond in conditions:
            if cond.get("type") == "Accepted" and cond.get("status") == "False":
                return Health.error(
                    Category.INVALID_SPEC,
                    cond.get("reason") or "NotAccepted",
                    _join(f"{parent} did not accept HTTPRoute {name}", cond.get("message")),
                )
        for parent, cond in conditions:
            if cond.get("type") == "ResolvedRefs" and cond.get("status") == "False":
                return Health.error(
                    Category.MISSING_DOWNSTREAM,
                    cond.get("reason") or "RefsNotResolved",
                    _join(f"{parent} cannot resolve the references of HTTPRoute {name}", cond.get("message")),
                    state=State.PROGRESSING,
                )
        return Health.progressing("HTTPRoutePending", f"HTTPRoute {name} is waiting for a gateway to accept it")


def _join(text: str, detail: str | None) -> str:
    return f"{text}: {detail}" if detail else text


def _parent_name(parent_status: Mapping[str, Any]) -> str:
    ref = parent_status.get("parentRef") or {}
    kind = ref.get("kind", "Gateway")
    where = f"{ref['namespace']}/" if ref.get("namespace") else ""
    return f"{kind} {where}{ref.get('name', '?')}"


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
