"""The routing settings a route builder gets, and what ``render --explain`` says of them.

The service's ``spec.routing`` over its runtime config's ``routing``: top-level fields whole,
``inferencePool`` (model-aware routing, see docs/routing.md) field by field. Pure, over wire-format
dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core.service.view import ServiceView


def own_routing(service: Mapping[str, Any]) -> Mapping[str, Any]:
    """The service's own ``spec.routing`` (empty when unset)."""
    return ServiceView.of(service).routing or {}


def routing_settings(service: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """The routing settings a route builder gets: the service's over the runtime config's.

    Top-level fields are taken whole, the service's when set; ``inferencePool`` merges field by
    field (and its ``endpointPicker`` too), so a namespace's runtime config can turn the pool on and
    a service only change its picker's replicas, or opt out with ``enabled: false``.
    """
    shared, own = config.get("routing") or {}, own_routing(service)
    settings = {**shared, **own}
    pool = merge_inference_pool(shared.get("inferencePool"), own.get("inferencePool"))
    if pool:
        settings["inferencePool"] = pool
    else:
        settings.pop("inferencePool", None)
    return settings


def merge_inference_pool(shared: Mapping[str, Any] | None, own: Mapping[str, Any] | None) -> dict[str, Any]:
    """``routing.inferencePool`` of the service (``own``) over the runtime config's, field by field.

    An unset field (absent or null) takes the config's; ``configRef`` and ``resources`` of the
    picker are taken whole (half of one config's resources and half of another's is nobody's).
    """
    shared, own = shared or {}, own or {}
    merged = {k: v for k, v in {**shared, **own}.items() if k != "endpointPicker"}
    for key in ("enabled", "apiVersion"):
        if own.get(key) is None and shared.get(key) is not None:
            merged[key] = shared[key]
    picker = {
        **{k: v for k, v in (shared.get("endpointPicker") or {}).items() if v is not None},
        **{k: v for k, v in (own.get("endpointPicker") or {}).items() if v is not None},
    }
    if picker:
        merged["endpointPicker"] = picker
    return {k: v for k, v in merged.items() if v is not None}


def inference_pool_notes(
    service: Mapping[str, Any], config: Mapping[str, Any], settings: Mapping[str, Any], objects: list[Any]
) -> list[str]:
    """What ``render --explain`` says of ``routing.inferencePool``: on or off and where that came from,
    the API version, and the objects built for it."""
    pool = settings.get("inferencePool") or {}
    if not pool:
        return []
    if not pool.get("enabled"):
        return [f"routing.inferencePool: off ({inference_pool_source(service, config, 'enabled')})"]
    version = pool.get("apiVersion") or "inference.networking.k8s.io/v1"
    notes = [
        f"routing.inferencePool: on ({inference_pool_source(service, config, 'enabled')}), apiVersion {version} "
        f"({inference_pool_source(service, config, 'apiVersion')})"
    ]
    for field, value in sorted((pool.get("endpointPicker") or {}).items()):
        where = _picker_source(service, config, field)
        notes.append(f"routing.inferencePool.endpointPicker.{field}: {value} ({where})")
    built = [f"{o.get('kind')} {(o.get('metadata') or {}).get('name')}" for o in objects[1:]]
    if built:
        notes.append(f"routing.inferencePool: the route's backend is the pool; builds {', '.join(built)}")
    return notes


def _picker_source(service: Mapping[str, Any], config: Mapping[str, Any], field: str) -> str:
    own = ((own_routing(service).get("inferencePool") or {}).get("endpointPicker") or {}).get(field)
    if own is not None:
        return "the AIMService"
    return f"runtime config {ServiceView.of(service).config_name!r}"


def inference_pool_source(service: Mapping[str, Any], config: Mapping[str, Any], field: str) -> str:
    """Where ``routing.inferencePool.<field>`` of the merged settings came from (for explanations)."""
    own = (own_routing(service).get("inferencePool") or {}).get(field)
    if own is not None:
        return f"spec.routing.inferencePool.{field} of the AIMService"
    shared = ((config.get("routing") or {}).get("inferencePool") or {}).get(field)
    if shared is not None:
        return f"routing.inferencePool.{field} of runtime config {ServiceView.of(service).config_name!r}"
    return "the default"
