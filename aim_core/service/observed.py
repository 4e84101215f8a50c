"""What the service controller's observe step hands to the pure plan."""

from __future__ import annotations

import datetime
import logging
from typing import Any

import attrs

from aim_core.plugin.providers import Autoscaler, GpuVendor, ResourceRef, RouteBuilder, RuntimeBuilder
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.naming import route_name
from aim_core.runtimeconfig import Resolution

log = logging.getLogger("aim_engine.service")

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
        return cls(
            runtime=chosen.get("aim_runtime_builders"),
            route=chosen.get("aim_route_builders"),
            autoscaler=chosen.get("aim_autoscalers"),
            gpu_vendors=vendors,
            missing=missing,
        )

    def child_resources(self) -> list[ResourceRef]:
        refs = []
        if self.runtime is not None:
            refs.append(self.runtime.resource)
        if self.route is not None:
            refs.append(self.route.resource)
        if self.autoscaler is not None:
            refs.append(self.autoscaler.scaler("x")[0])
        return refs

    def child_objects(self, serving: str, service: str, namespace: str) -> dict[str, tuple[ResourceRef, str]]:
        out: dict[str, tuple[ResourceRef, str]] = {}
        if self.runtime is not None:
            out["runtime"] = (self.runtime.resource, serving)
        if self.route is not None:
            out["route"] = (self.route.resource, route_name(service, namespace))
        if self.autoscaler is not None:
            out["scaler"] = self.autoscaler.scaler(serving)
        return out


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
