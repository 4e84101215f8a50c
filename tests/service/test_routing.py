"""The route of an AIMService (F58-F60, wire facts section 4) and the HTTPRoute a plugin builds from it."""

from __future__ import annotations

import copy

import pytest

from aim_core.plugin.providers import RouteRequest
from aim_core.reconcile.health import Category, State
from aim_core.reconcile.naming import route_name
from aim_core.reconcile.plan import Issue
from aim_core.service.routing import (
    PathTemplateError,
    blocks_service,
    normalize_path,
    render_path,
    route_health,
    route_request,
)
from aim_testing.crdschema import third_party_crd, validate_against_crd

ROUTE_CRD = "gateway.networking.k8s.io_httproutes.yaml"
BACKEND = "qwen-chat-3f1c2e5a-predictor"
GATEWAY = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "inference-gateway",
    "namespace": "kgateway-system",
}
TEAM_GATEWAY = {"name": "team-gateway", "namespace": "ml-team"}
UID = "8f0e2a4c-5b1d-4e6f-9a7b-3c2d1e0f9a8b"


class Service:
    """Fluent builder of an AIMService as read from the server."""

    def __init__(self, name: str = "qwen-chat", namespace: str = "ml-team") -> None:
        self.obj = {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": name, "namespace": namespace, "uid": UID, "labels": {}, "annotations": {}},
            "spec": {"model": {"name": "qwen3-32b"}},
        }

    def labels(self, **labels: str) -> Service:
        self.obj["metadata"]["labels"].update(labels)
        return self

    def annotations(self, **annotations: str) -> Service:
        self.obj["metadata"]["annotations"].update(annotations)
        return self

    def routing(self, **fields) -> Service:
        self.obj["spec"].setdefault("routing", {}).update(fields)
        return self

    def build(self) -> dict:
        return copy.deepcopy(self.obj)


def config(**routing) -> dict:
    return {"routing": routing} if routing else {}


ON = {"enabled": True, "gatewayRef": GATEWAY}


def route(svc: dict, cfg: dict | None = None) -> RouteRequest:
    result = route_request(svc, cfg or {}, BACKEND)
    assert isinstance(result, RouteRequest), result
    return result


def issue(svc: dict, cfg: dict | None = None) -> Issue:
    result = route_request(svc, cfg or {}, BACKEND)
    assert isinstance(result, Issue), result
    return result


# ---------------------------------------------------------------- enabling and gateways


@pytest.mark.parametrize(
    ("own", "shared", "enabled"),
    [
        (None, None, False),
        (None, False, False),
        (None, True, True),
        (True, None, True),
        (False, True, False),  # the service turns off what the config turns on
        (True, False, True),
    ],
)
def test_routing_enabled_service_first(own, shared, enabled):
    svc = Service().routing(**({"enabled": own} if own is not None else {})).build()
    cfg = config(gatewayRef=GATEWAY, **({"enabled": shared} if shared is not None else {}))
    assert (route_request(svc, cfg, BACKEND) is not None) == enabled


def test_routing_enabled_without_a_gateway_is_gateway_not_configured():
    found = issue(Service().routing(enabled=True).build(), config(gatewayRef={}))
    assert (found.category, found.reason) == (Category.INVALID_SPEC, "GatewayNotConfigured")
    assert "spec.routing.gatewayRef" in found.message
    assert "routing.gatewayRef in runtime config 'default'" in found.message
    assert blocks_service(found)  # Q7: nothing is applied, as upstream
    health = route_health(found)
    assert (health.state, health.reason) == (State.FAILED, "GatewayNotConfigured")
    assert health.category is Category.INVALID_SPEC


@pytest.mark.parametrize(
    ("own", "shared", "expected"),
    [(TEAM_GATEWAY, GATEWAY, TEAM_GATEWAY), (None, GATEWAY, GATEWAY), (TEAM_GATEWAY, None, TEAM_GATEWAY)],
)
def test_gateway_ref_service_first(own, shared, expected):
    svc = Service().routing(enabled=True, **({"gatewayRef": own} if own else {})).build()
    assert route(svc, config(**({"gatewayRef": shared} if shared else {}))).parent_ref == expected


def test_route_identity_backend_and_labels():
    result = route(Service("Qwen.Chat").build(), config(**ON))
    assert result.name == route_name("Qwen.Chat", "ml-team")
    assert (result.namespace, result.backend_service, result.backend_port) == ("ml-team", BACKEND, 80)
    assert result.labels == {"aim.eai.amd.com/service": "qwen.chat"}


# ---------------------------------------------------------------- paths


def test_default_path_is_namespace_and_uid():
    assert route(Service().build(), config(**ON)).path == f"/ml-team/{UID}"


@pytest.mark.parametrize(
    ("template", "path"),
    [
        ("/{.metadata.namespace}/{.metadata.name}", "/ml-team/qwen-chat"),
        ("/models/{.metadata.name}", "/models/qwen-chat"),
        ("/{.metadata.namespace}/{.metadata.labels['team']}/inference", "/ml-team/nlp-apps/inference"),
        ('/{.metadata.labels["app.kubernetes.io/part-of"]}', "/chat-suite"),
        ("/{.metadata.labels.app\\.kubernetes\\.io/part-of}", "/chat-suite"),  # escaped dots, as kubectl
        ("/{$.spec.model.name}", "/qwen3-32b"),
        ("/{.spec.routing.extra[0]}", "/first"),
        ("/{.spec.routing.extra[-1]}", "/last"),
        ("/{.metadata.labels['version']}", "/v1-2"),  # dots become '-'
        ("/{.metadata.annotations['gateway.example.com/prefix']}", "/tenant-a/chat"),  # raw: '/' makes segments
        ("models//{.metadata.name}///", "/models/qwen-chat"),  # leading '/', empty segments, no trailing '/'
        ("/Models/v1.0/{.metadata.name}", "/models/v1-0/qwen-chat"),  # literal segments sanitised too
        # as upstream: an empty value drops its segment; a stray '}' is literal, then sanitised
        ("/{.metadata.namespace}/{.metadata.labels['empty']}/{.metadata.name}", "/ml-team/qwen-chat"),
        ("/x}y/{.metadata.name}", "/x-y/qwen-chat"),
        ("/{.metadata.name}}", "/qwen-chat"),
    ],
)
def test_path_templates(template, path):
    svc = (
        Service()
        .labels(team="NLP_Apps", version="v1.2", empty="", **{"app.kubernetes.io/part-of": "Chat.Suite"})
        .annotations(**{"gateway.example.com/prefix": "Tenant-A/Chat"})
        .routing(extra=["first", "middle", "last"])
        .build()
    )
    assert render_path(template, svc) == path
    assert route(svc, config(pathTemplate=template, **ON)).path == path


def test_service_path_template_wins_over_the_config_one():
    svc = Service().routing(pathTemplate="/custom/{.metadata.name}").build()
    assert route(svc, config(pathTemplate="/ml/{.metadata.namespace}", **ON)).path == "/custom/qwen-chat"
    assert route(Service().build(), config(pathTemplate="/ml/{.metadata.namespace}", **ON)).path == "/ml/ml-team"


def test_an_empty_service_path_template_means_the_default_path_not_the_configs():
    svc = Service().routing(pathTemplate="").build()
    uid = svc["metadata"]["uid"]
    assert route(svc, config(pathTemplate="/ml/{.metadata.namespace}", **ON)).path == f"/ml-team/{uid}"


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("/{.metadata.labels['team']}", "{.metadata.labels['team']}: .metadata.labels has no key 'team'"),
        ("/{.spec.nothing}", "{.spec.nothing}: .spec has no key 'nothing'"),
        ("/{.spec.model}", "gives an object"),
        ("/{.spec.routing.extra[*]}", "gives 2 values; it must give exactly one"),
        ("/{.spec.routing.extra[5]}", "has no item [5]"),
        ("/{.spec.routing.extra[?(@ == 'a')]}", "is not supported"),
        ("/{..name}", "recursive descent is not supported"),
        ("/{metadata.name}", "starts with '.'"),
        ("/{}", "empty expression"),
        ("/{.metadata.name", "unclosed '{'"),
        ("/{.metadata.labels['empty']}", "the rendered path is empty"),
        ("/{.metadata.namespace}/../{.metadata.name}", "a '..' segment is not allowed"),
        ("/{.metadata.annotations['up']}/x", "a '..' segment is not allowed"),
        ("/" + "/".join(["a" * 60] * 4) + "/{.metadata.name}", "254 characters long; at most 200 fit"),
    ],
)
def test_invalid_path_templates_are_path_template_invalid(template, problem):
    svc = (
        Service()
        .labels(empty="")
        .annotations(up="../other")
        .routing(pathTemplate=template, extra=["a", "b"], **ON)
        .build()
    )
    with pytest.raises(PathTemplateError) as raised:
        render_path(template, svc)
    assert problem in str(raised.value)
    found = issue(svc)
    assert (found.category, found.reason) == (Category.INVALID_SPEC, "PathTemplateInvalid")
    assert repr(template) in found.message and "spec.routing.pathTemplate of the AIMService" in found.message
    assert problem in found.message
    assert not blocks_service(found)  # the serving object is still applied; no route with an unasked-for path
    assert route_health(found).state is State.DEGRADED  # serving goes on without a route


def test_invalid_config_path_template_names_the_runtime_config():
    svc = Service().build()
    svc["spec"]["runtimeConfigName"] = "team"
    found = issue(svc, config(pathTemplate="/{.metadata.labels['project']}", **ON))
    assert "routing.pathTemplate of runtime config 'team'" in found.message


def test_exactly_200_characters_fit():
    template = "/" + "/".join(["a" * 49] * 4)
    assert len(template) == 200 and render_path(template, Service().build()) == template


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("", "/"), ("/", "/"), ("a", "/a"), ("//a//b//", "/a/b"), ("/A_B/c.d", "/a-b/c-d"), ("/-x-/__/y", "/x/y")],
)
def test_normalize_path(raw, normal):
    assert normalize_path(raw) == normal


# ---------------------------------------------------------------- timeouts and annotations


@pytest.mark.parametrize(
    ("own", "shared", "expected"),
    [
        (None, None, None),
        (None, "120s", "2m0s"),
        ("30s", "120s", "30s"),
        ("1h", None, "1h0m0s"),
        ("1.5s", None, "1s500ms"),
    ],
)
def test_request_timeout(own, shared, expected):
    svc = Service().routing(**({"requestTimeout": own} if own else {})).build()
    cfg = config(**ON, **({"requestTimeout": shared} if shared else {}))
    assert route(svc, cfg).request_timeout == expected


@pytest.mark.parametrize(("value", "where"), [("soon", "service"), ("-5s", "service"), ("10us", "config")])
def test_invalid_request_timeout(value, where):
    svc = Service().routing(**({"requestTimeout": value} if where == "service" else {})).build()
    found = issue(svc, config(**ON, **({"requestTimeout": value} if where == "config" else {})))
    assert (found.category, found.reason) == (Category.INVALID_SPEC, "InvalidRequestTimeout")
    assert repr(value) in found.message
    assert ("AIMService" if where == "service" else "runtime config 'default'") in found.message
    assert not blocks_service(found)


def test_annotations_merge_config_and_service_service_winning():
    svc = Service().routing(annotations={"example.com/rate-limit": "100", "example.com/team": "nlp"}).build()
    cfg = config(annotations={"example.com/rate-limit": "10", "example.com/waf": "on"}, **ON)
    assert route(svc, cfg).annotations == {
        "example.com/rate-limit": "100",
        "example.com/team": "nlp",
        "example.com/waf": "on",
    }


# ---------------------------------------------------------------- the plugin's object


@pytest.mark.parametrize(
    "svc",
    [
        Service().build(),
        Service()
        .labels(team="nlp")
        .routing(
            pathTemplate="/{.metadata.namespace}/{.metadata.labels['team']}",
            requestTimeout="90s",
            annotations={"example.com/a": "b"},
        )
        .build(),
    ],
)
def test_built_http_route_is_valid(svc):
    from aim_plugin_gateway.httproute import HTTPRouteBuilder

    request = route(svc, config(**ON))
    obj = HTTPRouteBuilder().build(request)
    validate_against_crd(obj, third_party_crd(ROUTE_CRD))
    rule = obj["spec"]["rules"][0]
    assert rule["matches"][0]["path"] == {"type": "PathPrefix", "value": request.path}
    assert rule["backendRefs"][0]["name"] == BACKEND and obj["spec"]["parentRefs"] == [GATEWAY]
    assert rule.get("timeouts", {}).get("request") == request.request_timeout
