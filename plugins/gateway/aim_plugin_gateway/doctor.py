"""What ``aim-engine doctor`` checks for the Gateway API route builder.

* the HTTPRoute and Gateway CRDs (``gateway.networking.k8s.io/v1``, standard
  channel), Established; the operator watches HTTPRoutes, so a missing CRD
  fails even where no service enables routing;
* every Gateway that an AIMService or runtime config routes to exists;
* the InferencePool CRD of every ``routing.inferencePool.apiVersion`` a service or
  runtime config turns the pool on with, installed, Established and serving that
  version (the pool is off by default: nothing is asked of a cluster that uses none).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core import ClusterReader, Finding, ResourceRef, check_crd
from aim_plugin_gateway.httproute import HTTPROUTE
from aim_plugin_gateway.inferencepool import POOLS, V1

GATEWAY = ResourceRef("gateway.networking.k8s.io/v1", "Gateway", "gateways")
_AIM = "aim.eai.amd.com/v1alpha1"
SERVICES = ResourceRef(_AIM, "AIMService", "aimservices")
RUNTIME_CONFIGS = ResourceRef(_AIM, "AIMRuntimeConfig", "aimruntimeconfigs")
CLUSTER_RUNTIME_CONFIGS = ResourceRef(_AIM, "AIMClusterRuntimeConfig", "aimclusterruntimeconfigs", False)

INSTALL_POOLS = (
    "kubectl apply -f "
    "https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/v1.3.0/manifests.yaml"
)
INSTALL = (
    "kubectl apply --server-side -f "
    "https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.3.0/standard-install.yaml"
)


class GatewayChecks:
    """The Gateway API CRDs, and the Gateways that routing points at."""

    name = "gateway-api"
    title = "Gateway API (route builder)"

    async def run(self, cluster: ClusterReader) -> Sequence[Finding]:
        findings = await check_crd(
            cluster,
            HTTPROUTE,
            fix=INSTALL,
            required_paths=("spec.parentRefs", "spec.rules.filters", "spec.rules.backendRefs"),
        )
        findings += await check_crd(cluster, GATEWAY, fix=INSTALL)
        if any(f.level != "ok" for f in findings):
            return findings
        objects = [
            *await cluster.list(SERVICES),
            *await cluster.list(RUNTIME_CONFIGS),
            *await cluster.list(CLUSTER_RUNTIME_CONFIGS),
        ]
        for api_version, users in sorted(pool_versions(objects).items()):
            found = await check_crd(cluster, POOLS[api_version], fix=INSTALL_POOLS)
            findings += [
                attrs.evolve(f, message=f"{f.message} (routing.inferencePool of {', '.join(sorted(users)[:3])})")
                if f.level != "ok"
                else f
                for f in found
            ]
        refs = gateway_refs(objects)
        for (namespace, name), users in sorted(refs.items()):
            if await cluster.get(GATEWAY, namespace, name) is None:
                findings.append(
                    Finding.warn(
                        f"Gateway {namespace}/{name} does not exist; routing of {', '.join(sorted(users))} points at it",
                        f"kubectl get gateways -A   # create it, or fix spec.routing.gatewayRef of {sorted(users)[0]}",
                    )
                )
        return findings


def pool_versions(objects: Iterable[Mapping[str, Any]]) -> dict[str, set[str]]:
    """The InferencePool API versions that ``spec.routing.inferencePool`` turns on, with who turns it on.

    A runtime config that turns the pool on counts, whichever services inherit it; a service that
    sets only ``apiVersion`` (inheriting ``enabled``) counts for that version too.
    """
    found: dict[str, set[str]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        pool = ((obj.get("spec") or {}).get("routing") or {}).get("inferencePool") or {}
        if pool.get("enabled") is False or not (pool.get("enabled") or pool.get("apiVersion")):
            continue
        version = pool.get("apiVersion") or V1
        if version not in POOLS:
            continue
        who = f"{obj.get('kind', 'object')} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta.get('name')}"
        found.setdefault(version, set()).add(who)
    return found


def gateway_refs(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], set[str]]:
    """(namespace, name) of every Gateway named by ``spec.routing.gatewayRef``, with who names it."""
    found: dict[tuple[str, str], set[str]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        ref = ((obj.get("spec") or {}).get("routing") or {}).get("gatewayRef") or {}
        if not ref.get("name") or ref.get("kind", "Gateway") != "Gateway":
            continue
        namespace = ref.get("namespace") or meta.get("namespace")
        if not namespace:
            continue
        who = f"{obj.get('kind', 'object')} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta.get('name')}"
        found.setdefault((namespace, ref["name"]), set()).add(who)
    return found
