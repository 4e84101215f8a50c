"""Builders that return objects of several kinds: applied owned, labelled by role, pruned when dropped.

A runtime or route builder declares every kind it may return (``kinds``); the service plan applies
what it returns, labels every object beyond the main one with its role, and deletes what the service
controls of that role once the builder stops returning it. Nothing of a builder that returned an
undeclared kind is applied beyond its declared objects, and nothing is pruned.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core import ResourceRef, RouteRequest, ServingEndpoint
from aim_core.plugin.providers import declared_kinds, serving_endpoint
from aim_core.reconcile.labels import COMPONENT_LABEL
from aim_core.reconcile.naming import inference_service_name
from tests.service.builders import (
    GATEWAY,
    NS,
    live,
    providers,
    ready_world,
    run,
    service,
)

CONFIG_MAPS = ResourceRef("v1", "ConfigMap", "configmaps")
POOLS = ResourceRef("inference.networking.k8s.io/v1", "InferencePool", "inferencepools")


class RouteWithPool:
    """A route builder that also returns a pool and its ConfigMap (as a model-aware router would)."""

    name = "pool-route"

    def __init__(self, inner: Any, *, pool: bool = True, extra: dict[str, Any] | None = None) -> None:
        self.inner, self.pool, self.extra = inner, pool, extra
        self.resource = inner.resource
        self.kinds = (POOLS, CONFIG_MAPS)
        self.requests: list[RouteRequest] = []

    def build(self, request: RouteRequest) -> list[dict[str, Any]]:
        self.requests.append(request)
        objects = [self.inner.build(request)]
        if self.pool:
            meta = {"name": request.name, "namespace": request.namespace}
            objects.append({"apiVersion": POOLS.api_version, "kind": "InferencePool", "metadata": dict(meta)})
            objects.append(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**meta, "name": request.name + "-epp"}}
            )
        if self.extra is not None:
            objects.append(self.extra)
        return objects

    def health(self, live: Mapping[str, Any] | None) -> Any:
        return self.inner.health(live)


def routed_service() -> Any:
    return service("chat").model_name("qwen3-32b").routing(gateway=GATEWAY)


def with_route(builder: Any) -> Any:
    return attrs.evolve(providers(), route=builder)


def owned_by(obj: dict[str, Any], svc: Mapping[str, Any], uid: str | None = None) -> dict[str, Any]:
    found = live(obj)
    found["metadata"]["ownerReferences"] = [
        {
            "apiVersion": svc["apiVersion"],
            "kind": svc["kind"],
            "name": svc["metadata"]["name"],
            "uid": uid or svc["metadata"]["uid"],
            "controller": True,
        }
    ]
    return found


def test_a_route_builder_returning_several_kinds_has_them_all_applied_owned_and_labelled():
    svc = routed_service()
    builder = RouteWithPool(providers().route)

    plan, _ = run(svc, *ready_world(svc), with_providers=with_route(builder))

    assert sorted(d.resource.kind for d in plan.apply) == [
        "ConfigMap",
        "HTTPRoute",
        "InferencePool",
        "InferenceService",
    ]
    assert all(d.owned for d in plan.apply)
    by_kind = {d.resource.kind: d.obj for d in plan.apply}
    # the main objects are as they always were; the others carry their role
    assert COMPONENT_LABEL not in by_kind["HTTPRoute"]["metadata"]["labels"]
    assert COMPONENT_LABEL not in by_kind["InferenceService"]["metadata"]["labels"]
    assert by_kind["InferencePool"]["metadata"]["labels"][COMPONENT_LABEL] == "routing"
    assert by_kind["ConfigMap"]["metadata"]["labels"][COMPONENT_LABEL] == "routing"
    assert plan.delete == []


def test_the_route_builder_learns_the_runtime_pods_and_port():
    svc = routed_service()
    builder = RouteWithPool(providers().route)

    run(svc, *ready_world(svc), with_providers=with_route(builder))

    [request] = builder.requests
    serving = inference_service_name("chat", NS)
    assert request.endpoint == ServingEndpoint({"serving.kserve.io/inferenceservice": serving}, 8000)
    assert request.settings["gatewayRef"] == GATEWAY


def test_objects_the_builder_stops_returning_are_deleted_and_only_those():
    svc = routed_service()
    first, _ = run(svc, *ready_world(svc), with_providers=with_route(RouteWithPool(providers().route)))
    by_kind = {d.resource.kind: d for d in first.apply}
    pool = owned_by({**by_kind["InferencePool"].obj}, svc)
    config_map = owned_by({**by_kind["ConfigMap"].obj}, svc)
    route = owned_by({**by_kind["HTTPRoute"].obj}, svc)

    plan, _ = run(
        svc,
        *ready_world(svc),
        route=route,
        with_providers=with_route(RouteWithPool(providers().route, pool=False)),
        owned={POOLS: [pool], CONFIG_MAPS: [config_map]},
    )

    assert sorted(d.resource.kind for d in plan.apply) == ["HTTPRoute", "InferenceService"]
    assert sorted((d.resource.kind, d.name) for d in plan.delete) == [
        ("ConfigMap", config_map["metadata"]["name"]),
        ("InferencePool", pool["metadata"]["name"]),
    ]


def test_nothing_is_pruned_while_the_route_cannot_be_built():
    # a path template that cannot be rendered: the route (and its pool) stay as they were
    svc = routed_service()
    svc["spec"]["routing"]["pathTemplate"] = "/{.metadata.nope}"
    first, _ = run(routed_service(), *ready_world(svc), with_providers=with_route(RouteWithPool(providers().route)))
    pool = owned_by({**next(d.obj for d in first.apply if d.resource.kind == "InferencePool")}, svc)

    plan, _ = run(
        svc, *ready_world(svc), with_providers=with_route(RouteWithPool(providers().route)), owned={POOLS: [pool]}
    )

    assert plan.delete == []


def test_an_undeclared_kind_is_reported_and_prunes_nothing():
    svc = routed_service()
    stray = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "stray", "namespace": NS}}
    pool = owned_by(
        {"apiVersion": POOLS.api_version, "kind": "InferencePool", "metadata": {"name": "old", "namespace": NS}}, svc
    )

    plan, status = run(
        svc,
        *ready_world(svc),
        with_providers=with_route(RouteWithPool(providers().route, extra=stray)),
        owned={POOLS: [pool]},
    )

    assert "Secret" not in [d.resource.kind for d in plan.apply]
    assert [i.reason for i in plan.issues] == ["UnsupportedRouteObject"]
    assert "Secret" in plan.issues[0].message and "does not declare" in plan.issues[0].message
    assert plan.delete == []


def test_a_runtime_object_left_by_another_runtime_builder_is_deleted_when_this_one_builds():
    # the service's InferenceService-era object of a kind only another installed runtime builder makes
    other = ResourceRef("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", "leaderworkersets")

    class Other:
        name = "other-runtime"
        resource = other

    svc = service("chat").model_name("qwen3-32b")
    p = providers()
    chosen = attrs.evolve(p, runtimes=(p.runtime, Other()))
    stale = owned_by(
        {"apiVersion": other.api_version, "kind": other.kind, "metadata": {"name": "chat-x", "namespace": NS}}, svc
    )

    plan, _ = run(svc, *ready_world(svc), with_providers=chosen, owned={other: [stale]})

    assert [d.resource.kind for d in plan.apply] == ["InferenceService"]
    assert [(d.resource.kind, d.name) for d in plan.delete] == [("LeaderWorkerSet", "chat-x")]
    assert other in chosen.owned_kinds()


def test_declared_kinds_put_the_main_resource_first_and_endpoints_default_to_the_model_port():
    builder = RouteWithPool(providers().route)
    assert declared_kinds(builder) == (providers().route.resource, POOLS, CONFIG_MAPS)
    runtime = providers().runtime
    assert serving_endpoint(runtime, "x") == ServingEndpoint({"serving.kserve.io/inferenceservice": "x"}, 8000)


def test_every_builder_kind_is_watched_and_only_labelled_objects_of_extra_kinds():
    from tests.service.builders import controller

    ctl = controller()
    kinds = ctl.providers.owned_kinds()
    assert {"InferenceService", "HTTPRoute"} <= {k.kind for k in kinds}
    watched = {w.resource for w in ctl.watches()}
    assert set(kinds) <= watched
    mains = ctl.providers.main_kinds()
    selected = {ref: selections for ref, selections in ctl.selections().items() if ref in kinds}
    assert not set(selected) & set(mains)  # main kinds: whole
    # extra kinds (the lws builder's leader Service and ScaledObject, the route builder's pool and picker): only what a service made
    assert all(
        [str(s.label_selector) for s in selections] == ["aim.eai.amd.com/service.name"]
        for selections in selected.values()
    )
    assert set(selected) == set(kinds) - set(mains)
    assert {"InferencePool", "Deployment", "ConfigMap", "Role"} <= {k.kind for k in selected}
