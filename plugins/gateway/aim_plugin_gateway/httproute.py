"""The Gateway API route builder: one ``gateway.networking.k8s.io/v1`` HTTPRoute per service.

The core resolves the route (name, path, parent reference, backend Service,
timeout already spelled as a Gateway API duration); this module places it in
the HTTPRoute shape: one rule that matches the path prefix, strips it with a
``URLRewrite`` filter, and sends the request to the backend Service, or, with
``routing.inferencePool.enabled``, to an InferencePool and its endpoint picker
(:mod:`aim_plugin_gateway.inferencepool`), built beside the route.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core import Category, Health, KubeObject, ResourceRef, RouteRequest, State, plain_copy
from aim_plugin_gateway import inferencepool

HTTPROUTE = ResourceRef("gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes")

LABEL_COMPONENT = "app.kubernetes.io/component"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "aim-engine"


class HTTPRouteBuilder:
    """Builds a Gateway API HTTPRoute (and, when asked, its InferencePool and endpoint picker) and reads
    their health back."""

    name = "gateway-api"
    resource = HTTPROUTE
    kinds = inferencepool.KINDS
    #: what the Roles it builds grant (the operator must hold it too)
    grants = inferencepool.PICKER_RULES

    def build(self, request: RouteRequest) -> KubeObject | list[KubeObject]:
        """The HTTPRoute alone, exactly as without inference pools, unless ``routing.inferencePool`` is
        enabled: then the route (its backend the pool) followed by the pool and the picker's objects."""
        route = self._route(request)
        pool = inferencepool.pool_settings(request.settings)
        if pool is None:
            return route
        route["spec"]["rules"][0]["backendRefs"] = [inferencepool.backend_ref(request, pool)]
        labels = {**request.labels, LABEL_MANAGED_BY: MANAGED_BY}
        pool_labels = {**labels, LABEL_COMPONENT: "routing"}
        picker_labels = {**labels, LABEL_COMPONENT: inferencepool.PICKER_COMPONENT}
        pool_obj, *picker = inferencepool.build_pool_objects(request, pool, picker_labels)
        pool_obj["metadata"]["labels"] = pool_labels
        return [route, pool_obj, *picker]

    def health_of(self, live: Mapping[str, Any] | None, owned: Mapping[Any, Any]) -> Health:
        """Route health, and with an InferencePool backend the pool's and the picker's too."""
        health = self.health(live)
        if live is None:
            return health
        return inferencepool.pool_health(live, health, owned)

    def not_served_hint(self, ref: ResourceRef) -> str | None:
        if ref.kind != "InferencePool":
            return None
        return (
            f"routing.inferencePool asks for {ref.api_version}: install the Gateway API Inference Extension "
            "CRDs (kubectl apply -f https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/"
            "download/v1.3.0/manifests.yaml), set routing.inferencePool.apiVersion to the one your gateway and "
            "cluster serve, or set routing.inferencePool.enabled to false."
        )

    def _route(self, request: RouteRequest) -> KubeObject:
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
            "spec": {"parentRefs": [plain_copy(request.parent_ref)], "rules": [rule]},
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
