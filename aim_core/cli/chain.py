"""``aim-engine describe service``: an AIMService and everything it runs on, read from a live cluster.

The chain is found the way the operator finds it: the model and template from
``status.resolvedModel`` / ``status.resolvedTemplate`` (else what the spec
names), the template cache from ``status.cache`` (else the one the service
would use, :func:`aim_core.service.caching.find_cache`), the artifacts from the
cache's ``status.artifacts`` (else those it owns), and the serving objects by
the names the service plan gives them, through the installed runtime, route
and autoscaler plugins. An autoscaler that implements
:class:`~aim_core.plugin.providers.DescribesRelated` adds the objects between the
serving object and its scaler (KEDA: the ScaledObject KServe builds), each with
the facts the plugin picks (``Link.details``).

Each :class:`Link` carries the object's state (``status.status``; for
third-party objects the plugin's reading of it) and the condition that
explains it: the first condition that is not True (conditions are stored
``Ready`` first), or ``Ready`` when all are. A link that should exist and
does not is ``Missing``, with the service condition that says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.plugin.providers import DescribesRelated
from aim_core.reconcile.naming import inference_service_name, route_name
from aim_core.reconcile.resources import AIM_RESOURCES, PODS
from aim_core.service.caching import caching_mode, find_cache

__all__ = ["MISSING", "Link", "describe_service", "explain"]

MISSING = "Missing"

_AIM = {ref.kind: ref for ref in AIM_RESOURCES}


@attrs.define
class Link:
    """One object of the chain, or the place where one is missing."""

    kind: str
    name: str
    namespace: str | None
    state: str
    reason: str = ""
    message: str = ""
    children: list[Link] = attrs.field(factory=list)
    details: dict[str, Any] = attrs.field(factory=dict)  # facts a plugin adds (a ScaledObject's bounds, triggers)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.namespace:
            out["namespace"] = self.namespace
        out.update(state=self.state, reason=self.reason, message=self.message)
        if self.details:
            out["details"] = self.details
        if self.children:
            out["children"] = [c.to_json() for c in self.children]
        return out


def explain(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(reason, message) of the first condition that is not True, else of ``Ready``.

    Conditions are kept ``Ready`` first, and a not-Ready ``Ready`` names the worst
    component (the operator's "worst component wins"), so it usually explains best;
    a Ready object with a not-True condition shows that condition.
    """
    conditions = [c for c in (obj.get("status") or {}).get("conditions") or () if isinstance(c, Mapping)]
    bad = next((c for c in conditions if c.get("status") != "True"), None)
    chosen = bad or next((c for c in conditions if c.get("type") == "Ready"), None)
    if chosen is None:
        return "", "no conditions yet (the operator has not reconciled it)"
    reason = str(chosen.get("reason") or chosen.get("type") or "")
    label = f"{chosen.get('type')}={chosen.get('status')}" if bad is not None and bad.get("type") != "Ready" else ""
    message = str(chosen.get("message") or "")
    return reason, f"{label}: {message}" if label and message else label or message


def _aim_link(obj: Mapping[str, Any]) -> Link:
    meta = obj.get("metadata") or {}
    reason, message = explain(obj)
    state = (obj.get("status") or {}).get("status") or "Unknown"
    return Link(obj.get("kind", "?"), meta.get("name", "?"), meta.get("namespace"), state, reason, message)


def _service_condition(service: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    return next((c for c in (service.get("status") or {}).get("conditions") or () if c.get("type") == type_), None)


def _missing(kind: str, name: str, namespace: str | None, why: str, reason: str = "NotFound") -> Link:
    return Link(kind, name, namespace, MISSING, reason, why)


async def describe_service(cluster: Any, plugins: Any, namespace: str, name: str) -> Link | None:
    """The chain of the AIMService ``namespace/name``, ``None`` when there is no such service.

    :param cluster: a :class:`~aim_core.plugin.providers.ClusterReader` of the live cluster.
    :param plugins: the plugin manager (runtime, route and autoscaler providers).
    """
    from aim_core.service.observed import Providers

    service = await cluster.get(_AIM["AIMService"], namespace, name)
    if service is None:
        return None
    root = _aim_link(service)
    model, model_link = await _model(cluster, service, namespace)
    root.children.append(model_link)
    template, template_link = await _template(cluster, service, namespace, model)
    model_link.children.append(template_link)
    if template is not None:
        template_link.children.append(await _cache(cluster, service, namespace, template))
    providers = Providers.from_plugins(plugins)
    serving = inference_service_name(name, namespace)
    runtime_link = None
    if providers.runtime is not None:
        runtime = providers.runtime
        for other in providers.all_runtimes():  # a multi-node service runs on another builder's object
            if other is not runtime and await cluster.get(other.resource, namespace, serving) is not None:
                runtime = other
                break
        runtime_link = await _serving(cluster, service, runtime, serving, namespace)
        root.children.append(runtime_link)
    if (
        providers.autoscaler is not None
        and runtime_link is not None
        and (_service_condition(service, "HPAReady") or _autoscaled(service))
    ):
        runtime_link.children.append(
            await _scaling(
                cluster, service, providers.autoscaler, serving, namespace, runtime_ready=runtime_link.state == "Ready"
            )
        )
    root.children += await _adapters(cluster, service, namespace)
    if providers.route is not None:
        route = route_name(name, namespace)
        live = await cluster.get(providers.route.resource, namespace, route)
        cond = _service_condition(service, "HTTPRouteReady")
        if live is not None:
            health = providers.route.health(live)
            root.children.append(
                Link(providers.route.resource.kind, route, namespace, health.state.value, health.reason, health.message)
            )
        elif cond is not None:
            root.children.append(
                _missing(
                    providers.route.resource.kind,
                    route,
                    namespace,
                    cond.get("message") or "not created yet",
                    cond.get("reason") or "",
                )
            )
    return root


async def _adapters(cluster: Any, service: Mapping[str, Any], namespace: str) -> list[Link]:
    """One link per LoRA adapter (``status.adapters``, else ``spec.adapters``), its artifact below it."""
    reported = {a.get("name"): a for a in (service.get("status") or {}).get("adapters") or () if isinstance(a, Mapping)}
    links = []
    for adapter in (service.get("spec") or {}).get("adapters") or ():
        name = adapter.get("name") or "?"
        entry = reported.get(name) or {}
        link = Link(
            "Adapter",
            name,
            None,
            entry.get("state") or "Pending",
            entry.get("reason") or "",
            entry.get("message") or "not reported yet",
            details={
                "sourceUri": adapter.get("sourceUri"),
                **({k: entry[k] for k in ("baseModel", "rank") if entry.get(k) is not None}),
            },
        )
        artifact = entry.get("artifact")
        if artifact:
            obj = await cluster.get(_AIM["AIMArtifact"], namespace, artifact)
            link.children.append(
                _aim_link(obj)
                if obj is not None
                else _missing("AIMArtifact", artifact, namespace, "the service refers to it, but it does not exist")
            )
        links.append(link)
    return links


async def _scaling(
    cluster: Any, service: Mapping[str, Any], autoscaler: Any, serving: str, namespace: str, *, runtime_ready: bool
) -> Link:
    """The scaler, under the objects the autoscaler says lead to it (KEDA: InferenceService -> ScaledObject -> HPA)."""
    top = parent = None
    for ref, related in autoscaler.related(serving) if isinstance(autoscaler, DescribesRelated) else ():
        live = await cluster.get(ref, namespace, related)
        if live is None:
            link = _missing(
                ref.kind,
                related,
                namespace,
                "not created yet: the operator does not create it, the controller of the serving object does",
            )
        else:
            described = autoscaler.describe(live)
            link = Link(
                ref.kind,
                related,
                namespace,
                described.health.state.value,
                described.health.reason,
                described.health.message,
                details=dict(described.details),
            )
        if parent is not None:
            parent.children.append(link)
        top, parent = top or link, link
    ref, scaler_name = autoscaler.scaler(serving)
    live = await cluster.get(ref, namespace, scaler_name)
    if live is None:
        cond = _service_condition(service, "HPAReady") or {}
        scaler = _missing(
            ref.kind, scaler_name, namespace, cond.get("message") or "not created yet", cond.get("reason") or ""
        )
    else:
        health = autoscaler.health(live, runtime_ready)
        scaler = Link(ref.kind, scaler_name, namespace, health.state.value, health.reason, health.message)
    if parent is None:
        return scaler
    parent.children.append(scaler)
    return top


def _autoscaled(service: Mapping[str, Any]) -> bool:
    spec = service.get("spec") or {}
    return any(spec.get(k) is not None for k in ("minReplicas", "maxReplicas", "autoScaling"))


async def _model(cluster: Any, service: Mapping[str, Any], namespace: str) -> tuple[dict[str, Any] | None, Link]:
    resolved = (service.get("status") or {}).get("resolvedModel") or {}
    spec_model = (service.get("spec") or {}).get("model") or {}
    if resolved.get("name"):
        kind = resolved.get("kind") or ("AIMClusterModel" if resolved.get("scope") == "Cluster" else "AIMModel")
        where = None if kind == "AIMClusterModel" else (resolved.get("namespace") or namespace)
        obj = await cluster.get(_AIM[kind], where, resolved["name"])
        if obj is None:
            return None, _missing(kind, resolved["name"], where, "status.resolvedModel names it, but it is gone")
        return obj, _aim_link(obj)
    if spec_model.get("name"):
        wanted = spec_model["name"]
        obj = await cluster.get(_AIM["AIMModel"], namespace, wanted) or await cluster.get(
            _AIM["AIMClusterModel"], None, wanted
        )
        if obj is not None:
            return obj, _aim_link(obj)
        return None, _missing(
            "AIMModel",
            wanted,
            namespace,
            f"spec.model.name is {wanted!r}, but neither AIMModel {namespace}/{wanted} nor "
            f"AIMClusterModel {wanted} exists",
            _why(service, "ModelNotFound"),
        )
    what = f"image {spec_model['image']}" if spec_model.get("image") else "spec.model"
    return None, _missing(
        "AIMModel",
        "",
        namespace,
        f"no model resolved yet for {what}: {_ready_text(service)}",
        _why(service, "ModelNotResolved"),
    )


async def _template(
    cluster: Any, service: Mapping[str, Any], namespace: str, model: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, Link]:
    resolved = (service.get("status") or {}).get("resolvedTemplate") or {}
    named = ((service.get("spec") or {}).get("template") or {}).get("name")
    if resolved.get("name") or named:
        wanted = resolved.get("name") or named
        kinds = (
            [resolved["kind"]] if resolved.get("kind") in _AIM else ["AIMServiceTemplate", "AIMClusterServiceTemplate"]
        )
        for kind in kinds:
            where = None if kind == "AIMClusterServiceTemplate" else (resolved.get("namespace") or namespace)
            obj = await cluster.get(_AIM[kind], where, wanted)
            if obj is not None:
                return obj, _aim_link(obj)
        return None, _missing(
            kinds[0], wanted, namespace, f"template {wanted!r} does not exist", _why(service, "TemplateNotFound")
        )
    if model is None:
        return None, _missing(
            "AIMServiceTemplate",
            "",
            namespace,
            "no template can be chosen before the model is found",
            "ModelNotResolved",
        )
    return None, _missing(
        "AIMServiceTemplate",
        "",
        namespace,
        f"no template chosen yet: {_ready_text(service)}",
        _why(service, "TemplateNotSelected"),
    )


async def _cache(cluster: Any, service: Mapping[str, Any], namespace: str, template: Mapping[str, Any]) -> Link:
    caches_ref = _AIM["AIMTemplateCache"]
    ref = ((service.get("status") or {}).get("cache") or {}).get("templateCacheRef") or {}
    cache = await cluster.get(caches_ref, ref.get("namespace") or namespace, ref["name"]) if ref.get("name") else None
    template_name = template["metadata"]["name"]
    if cache is None:
        cache = find_cache(service, template_name, caching_mode(service), await cluster.list(caches_ref, namespace))
    if cache is None:
        cond = _service_condition(service, "CacheReady") or {}
        return _missing(
            caches_ref.kind,
            "",
            namespace,
            cond.get("message") or f"no template cache for {template_name} yet",
            cond.get("reason") or "",
        )
    link = _aim_link(cache)
    artifacts_ref = _AIM["AIMArtifact"]
    listed = (cache.get("status") or {}).get("artifacts") or {}
    names = sorted(a.get("name") or key for key, a in listed.items())
    if not names:
        uid = cache["metadata"].get("uid")
        names = sorted(
            a["metadata"]["name"]
            for a in await cluster.list(artifacts_ref, namespace)
            if any(o.get("uid") == uid for o in a["metadata"].get("ownerReferences") or ())
        )
    for artifact in names:
        obj = await cluster.get(artifacts_ref, namespace, artifact)
        link.children.append(
            _aim_link(obj)
            if obj is not None
            else _missing(artifacts_ref.kind, artifact, namespace, "the cache lists it, but it does not exist")
        )
    if not names:
        link.children.append(_missing(artifacts_ref.kind, "", namespace, "the cache has no artifacts yet", link.reason))
    return link


async def _serving(cluster: Any, service: Mapping[str, Any], runtime: Any, serving: str, namespace: str) -> Link:
    kind = runtime.resource.kind
    live = await cluster.get(runtime.resource, namespace, serving)
    if live is None:
        cond = _service_condition(service, f"{kind}Ready") or {}
        return _missing(kind, serving, namespace, cond.get("message") or "not created yet", cond.get("reason") or "")
    selector = ",".join(f"{k}={v}" for k, v in runtime.pod_selector(serving).items())
    pods = await cluster.list(PODS, namespace, label_selector=selector)
    health = runtime.health(live, pods, [])
    return Link(kind, serving, namespace, health.state.value, health.reason, health.message)


def _ready_text(service: Mapping[str, Any]) -> str:
    reason, message = explain(service)
    return message or reason or "the operator has not reconciled it yet"


def _why(service: Mapping[str, Any], fallback: str) -> str:
    reason, _ = explain(service)
    return reason or fallback


def walk(link: Link) -> Sequence[Link]:
    """Every link of the tree, depth first."""
    out = [link]
    for child in link.children:
        out += walk(child)
    return out
