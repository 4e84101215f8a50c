"""The Gateway API route builder: HTTPRoute shape (wire-facts section 4) and route health (F60)."""

from __future__ import annotations

import attrs
import pytest
from aim_plugin_gateway.httproute import HTTPRouteBuilder

from aim_core import Category, RouteBuilder, RouteRequest, State, to_gateway_duration
from aim_testing.crdschema import crd_errors, third_party_crd, validate_against_crd

ROUTE_CRD = "gateway.networking.k8s.io_httproutes.yaml"
NAME = "qwen-chat-1080a608"
PARENT = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "kserve-ingress-gateway",
    "namespace": "kgateway-system",
}


def make_request(**changes) -> RouteRequest:
    base = RouteRequest(
        service={"kind": "AIMService", "metadata": {"name": "qwen-chat", "namespace": "default", "uid": "0b5c7d2e"}},
        name=NAME,
        namespace="default",
        labels={"aim.eai.amd.com/service": "qwen-chat", "aim.eai.amd.com/service.name": "qwen-chat"},
        annotations={},
        parent_ref=PARENT,
        path="/default/0b5c7d2e",
        backend_service=f"{NAME}-predictor",
    )
    return attrs.evolve(base, **changes)


def test_is_a_route_builder():
    builder = HTTPRouteBuilder()
    assert isinstance(builder, RouteBuilder)
    assert builder.name == "gateway-api"
    assert (builder.resource.api_version, builder.resource.kind, builder.resource.plural) == (
        "gateway.networking.k8s.io/v1",
        "HTTPRoute",
        "httproutes",
    )


def test_wire_shape():
    assert HTTPRouteBuilder().build(make_request()) == {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {
            "name": NAME,
            "namespace": "default",
            "labels": {
                "aim.eai.amd.com/service": "qwen-chat",
                "aim.eai.amd.com/service.name": "qwen-chat",
                "app.kubernetes.io/component": "routing",
                "app.kubernetes.io/managed-by": "aim-engine",
            },
            "annotations": {},
        },
        "spec": {
            "parentRefs": [PARENT],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/default/0b5c7d2e"}}],
                    "filters": [
                        {
                            "type": "URLRewrite",
                            "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}},
                        }
                    ],
                    "backendRefs": [
                        {"kind": "Service", "name": f"{NAME}-predictor", "namespace": "default", "port": 80}
                    ],
                }
            ],
        },
    }


def test_timeout_annotations_and_parent_ref_as_given():
    parent = {"name": "internal", "sectionName": "http"}  # no defaults filled in
    route = HTTPRouteBuilder().build(
        make_request(
            request_timeout=to_gateway_duration("5m"),
            annotations={"external-dns.alpha.kubernetes.io/hostname": "llm.example.com"},
            parent_ref=parent,
            backend_port=8080,
        )
    )
    rule = route["spec"]["rules"][0]
    assert rule["timeouts"] == {"request": "5m0s"}
    assert rule["backendRefs"][0]["port"] == 8080
    assert route["spec"]["parentRefs"] == [parent]
    assert route["metadata"]["annotations"] == {"external-dns.alpha.kubernetes.io/hostname": "llm.example.com"}
    validate_against_crd(route, third_party_crd(ROUTE_CRD))


def test_built_route_shares_nothing_with_the_request():
    parent = {"name": "gw", "namespace": "gw-system"}
    route = HTTPRouteBuilder().build(make_request(parent_ref=parent))
    parent["name"] = "changed"
    assert route["spec"]["parentRefs"] == [{"name": "gw", "namespace": "gw-system"}]


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"request_timeout": "30s"},
        {"request_timeout": to_gateway_duration("1.5s")},
        {"request_timeout": to_gateway_duration(5400)},
        {"path": "/team-a/qwen-chat/v1", "annotations": {"a": "b"}},
    ],
)
def test_every_variant_fits_the_gateway_crd(changes):
    validate_against_crd(HTTPRouteBuilder().build(make_request(**changes)), third_party_crd(ROUTE_CRD))


def test_a_go_fractional_duration_would_be_rejected():
    # Why the core must convert durations first: Go's own spelling of 1.5s does not fit.
    route = HTTPRouteBuilder().build(make_request(request_timeout="1.5s"))
    assert any("timeouts.request" in e for e in crd_errors(route, third_party_crd(ROUTE_CRD)))


# ---------------------------------------------------------------------------
# Health (F60)
# ---------------------------------------------------------------------------


def route_with(*parents: list[tuple[str, str, str]]) -> dict:
    route = HTTPRouteBuilder().build(make_request())
    route["status"] = {
        "parents": [
            {
                "parentRef": PARENT,
                "controllerName": "kgateway.dev/kgateway",
                "conditions": [
                    {"type": t, "status": s, "reason": r, "message": f"{r} message", "observedGeneration": 1}
                    for t, s, r in conditions
                ],
            }
            for conditions in parents
        ]
    }
    return route


ACCEPTED = ("Accepted", "True", "Accepted")
RESOLVED = ("ResolvedRefs", "True", "ResolvedRefs")


@pytest.mark.parametrize(
    ("live", "state", "reason", "category", "in_message"),
    [
        (None, State.PROGRESSING, "HTTPRouteCreating", None, "Creating"),
        (HTTPRouteBuilder().build(make_request()), State.PROGRESSING, "HTTPRoutePending", None, NAME),
        (route_with([]), State.PROGRESSING, "HTTPRoutePending", None, ""),
        (
            route_with([ACCEPTED, RESOLVED]),
            State.READY,
            "HTTPRouteAccepted",
            None,
            "kgateway-system/kserve-ingress-gateway",
        ),
        (
            route_with([("Accepted", "False", "NotAllowedByListeners")]),
            State.FAILED,
            "NotAllowedByListeners",
            Category.INVALID_SPEC,
            "NotAllowedByListeners message",
        ),
        (
            route_with([("Accepted", "Unknown", "Pending"), ("ResolvedRefs", "False", "BackendNotFound")]),
            State.PROGRESSING,
            "BackendNotFound",
            Category.MISSING_DOWNSTREAM,
            "BackendNotFound message",
        ),
        (
            # One accepting parent is enough.
            route_with([("Accepted", "False", "NoMatchingParent")], [ACCEPTED]),
            State.READY,
            "HTTPRouteAccepted",
            None,
            "",
        ),
        (
            # A refusal outranks unresolved references.
            route_with(
                [("ResolvedRefs", "False", "RefNotPermitted")], [("Accepted", "False", "NoMatchingListenerHostname")]
            ),
            State.FAILED,
            "NoMatchingListenerHostname",
            Category.INVALID_SPEC,
            "",
        ),
    ],
)
def test_health(live, state, reason, category, in_message):
    health = HTTPRouteBuilder().health(live)
    assert (health.state, health.reason, health.category) == (state, reason, category), health
    assert in_message in health.message
