"""What the service controller's observe step hands to the pure plan."""

from __future__ import annotations

import datetime
import logging
from typing import Any

import attrs

from aim_core.plugin.providers import (
    Autoscaler,
    GpuVendor,
    ResourceRef,
    RouteBuilder,
    RuntimeBuilder,
    declared_kinds,
    max_nodes,
)
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.naming import route_name
from aim_core.runtimeconfig import Resolution

log = logging.getLogger("aim_engine.service")

# What a builder's object is to the service, as the core labels every object beyond a builder's main one
# (``aim.eai.amd.com/component``): it prunes them per role, and only after that role's builder ran.
RUNTIME_ROLE = "runtime"
ROUTING_ROLE = "routing"

# The providers a service uses, by name; the first installed one is used when the
# preferred name is absent (a third-party runtime builder can replace KServe).
PREFERRED = {"aim_runtime_builders": "kserve", "aim_route_builders": "gateway-api", "aim_autoscalers": "keda"}


@attrs.frozen
class Providers:
    """The plugin providers the service plan uses, and why any is missing."""

    runtime: RuntimeBuilder | None = None
    route: RouteBuilder | None = None
    autoscaler: Autoscaler | None = None
    gpu_vendors: tuple[GpuVendor, ...] = ()
    missing: dict[str, str] = attrs.field(factory=dict)
    #: every installed runtime builder, the one used first: the kinds of all of them are owned and
    #: watched, so a service whose builder changes finds (and prunes) what the other one made
    runtimes: tuple[RuntimeBuilder, ...] = ()

    @classmethod
    def from_plugins(cls, pm: Any) -> Providers:
        if pm is None:
            return cls(missing={h: f"no plugin manager; {h} unavailable" for h in PREFERRED})
        from aim_core.plugin import manager as host

        chosen: dict[str, Any] = {}
        missing: dict[str, str] = {}
        for hook, preferred in PREFERRED.items():
            available = host.providers(pm, hook)
            if preferred in available:
                chosen[hook] = available[preferred]
            elif available:
                chosen[hook] = available[sorted(available)[0]]
            else:
                missing[hook] = f"no plugin provides {hook}; is the {preferred} plugin installed?"
        vendors = tuple(host.providers(pm, "aim_gpu_vendors").values())
        runtime = chosen.get("aim_runtime_builders")
        others = [b for _, b in sorted(host.providers(pm, "aim_runtime_builders").items()) if b is not runtime]
        return cls(
            runtimes=tuple([runtime] if runtime is not None else []) + tuple(others),
            runtime=runtime,
            route=chosen.get("aim_route_builders"),
            autoscaler=chosen.get("aim_autoscalers"),
            gpu_vendors=vendors,
            missing=missing,
        )

    def runtime_for(self, nodes: int) -> RuntimeBuilder | None:
        """The builder of a service whose replica spans ``nodes`` nodes: the preferred one for one node
        (as always), else the first installed builder whose ``max_nodes`` reaches ``nodes`` (``None``: none)."""
        if nodes <= 1:
            return self.runtime
        return next((b for b in self.all_runtimes() if max_nodes(b) >= nodes), None)

    def all_runtimes(self) -> tuple[RuntimeBuilder, ...]:
        return self.runtimes or ((self.runtime,) if self.runtime is not None else ())

    def pod_labels(self) -> tuple[str, ...]:
        """The labels that name the serving object on the pods of every installed runtime builder."""
        found: list[str] = []
        for builder in self.all_runtimes():
            label = getattr(builder, "pod_label", None)
            if isinstance(label, str) and label and label not in found:
                found.append(label)
        return tuple(found)

    def owned_kinds(self) -> list[ResourceRef]:
        """Every kind a builder may return: the service owns, watches, applies and prunes objects of these."""
        refs: list[ResourceRef] = []
        builders = [*(self.runtimes or ([self.runtime] if self.runtime is not None else [])), self.route]
        for builder in builders:
            if builder is not None:
                refs += [ref for ref in declared_kinds(builder) if ref not in refs]
        return refs

    def main_kinds(self) -> dict[ResourceRef, str]:
        """The main object's kind of each builder, and its role (``runtime`` or ``routing``)."""
        roles: dict[ResourceRef, str] = {}
        for builder in self.runtimes or ([self.runtime] if self.runtime is not None else []):
            roles.setdefault(builder.resource, RUNTIME_ROLE)
        if self.route is not None:
            roles.setdefault(self.route.resource, ROUTING_ROLE)
        return roles

    def child_resources(self) -> list[ResourceRef]:
        refs = self.owned_kinds()
        if self.autoscaler is not None:
            scaler = self.autoscaler.scaler("x")[0]
            if scaler not in refs:
                refs.append(scaler)
        return refs

    def child_objects(self, serving: str, service: str, namespace: str) -> dict[str, tuple[ResourceRef, str]]:
        out: dict[str, tuple[ResourceRef, str]] = {}
        if self.runtime is not None:
            out["runtime"] = (self.runtime.resource, serving)
        for builder in self.all_runtimes():
            if builder is not self.runtime:
                # another builder's main object of the same name: what a multi-node service runs on
                out[runtime_key(builder)] = (builder.resource, serving)
        if self.route is not None:
            out["route"] = (self.route.resource, route_name(service, namespace))
        if self.autoscaler is not None:
            out["scaler"] = self.autoscaler.scaler(serving)
        return out


def runtime_key(builder: Any) -> str:
    """The key of ``builder``'s main object in :attr:`Observed.live` (``runtime`` for the preferred one)."""
    return f"runtime:{builder.name}"


@attrs.frozen
class Observed:
    """Inputs of :func:`aim_core.service.plan.plan_service`, all read before planning."""

    config: Resolution
    models: dict[str, dict[str, dict[str, Any]]]  # "namespaced"/"cluster" -> name -> model
    templates: dict[str, dict[str, dict[str, Any]]]  # "namespaced"/"cluster" -> name -> template
    caches: list[dict[str, Any]]
    inventory: GpuInventory
    live: dict[str, dict[str, Any] | None]  # "runtime"/"route"/"scaler" -> object or None
    pods: list[dict[str, Any]]
    events: list[dict[str, Any]]
    logs: dict[str, str]
    read_errors: list[Any]
    providers: Providers
    namespace_terminating: bool = False
    now: datetime.datetime | None = None  # the reconcile's clock (a Failed cache's retry backoff); None: no retry
    artifacts: tuple[dict[str, Any], ...] = ()  # artifacts of the namespace with an adapter's sourceUri
    #: per kind a builder declares, the objects the service controls (its controller owner reference)
    owned: dict[ResourceRef, tuple[dict[str, Any], ...]] = attrs.field(factory=dict)
    #: kinds the builders declare (their main kinds included) that the cluster does not serve: their CRD
    #: is not installed (a runtime's, or an optional one such as a route builder's InferencePool)
    unserved: frozenset[ResourceRef] = frozenset()
