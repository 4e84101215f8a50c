"""What ``aim-engine doctor`` checks for the LeaderWorkerSet runtime builder.

* the LeaderWorkerSet CRD (``leaderworkerset.x-k8s.io/v1``), Established, with the fields this
  plugin writes;
* the LWS controller is available: its mutating webhook is registered (it puts the group and
  worker index labels on every pod of a group, which the pods' rank and leader address are read
  from) and the webhook's Service has a ready endpoint (a webhook with ``failurePolicy: Fail``
  and no endpoint refuses every pod of every group).

Both fail only when some AIMService spans several nodes; otherwise they are warnings (a cluster
that serves only single-node models needs no LWS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import ClusterReader, Finding, ResourceRef, check_crd
from aim_plugin_lws.leaderworkerset import LEADERWORKERSET

WEBHOOKS = ResourceRef(
    "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations"
)
ENDPOINTS = ResourceRef("v1", "Endpoints", "endpoints")
SERVICES = ResourceRef("aim.eai.amd.com/v1alpha1", "AIMService", "aimservices")
TEMPLATES = ResourceRef("aim.eai.amd.com/v1alpha1", "AIMServiceTemplate", "aimservicetemplates")
CLUSTER_TEMPLATES = ResourceRef("aim.eai.amd.com/v1alpha1", "AIMClusterServiceTemplate", "aimclusterservicetemplates")

LWS_WEBHOOK_PATH = "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset"
POD_WEBHOOK_PATH = "/mutate--v1-pod"
VERSION = "v0.10.0"
INSTALL = (
    f"kubectl apply --server-side -f https://github.com/kubernetes-sigs/lws/releases/download/{VERSION}/manifests.yaml"
)


class LwsChecks:
    """The LeaderWorkerSet CRD and its controller, for services whose replica spans several nodes."""

    name = "lws"
    title = "LeaderWorkerSet (multi-node runtime builder)"

    async def run(self, cluster: ClusterReader) -> Sequence[Finding]:
        templates = [*await _list(cluster, TEMPLATES), *await _list(cluster, CLUSTER_TEMPLATES)]
        multi = sorted(_name(t) for t in templates if _nodes(t) > 1)
        level = "fail" if multi else "warn"
        findings = await check_crd(
            cluster,
            LEADERWORKERSET,
            fix=INSTALL,
            required_paths=("spec.leaderWorkerTemplate.size", "spec.startupPolicy"),
            missing_level=level,
        )
        findings = [Finding(level if f.level == "fail" else f.level, f.message, f.fix) for f in findings]
        findings.append(await controller(cluster, level))
        who = (
            f"{len(multi)} template(s) span several nodes: {', '.join(multi[:5])}{' ...' if len(multi) > 5 else ''}"
            if multi
            else "no template spans several nodes yet"
        )
        findings.append(Finding(level, who) if any(f.level != "ok" for f in findings) else Finding.ok(who))
        return findings


async def controller(cluster: ClusterReader, level: str) -> Finding:
    """The LWS pod webhook is registered and its Service has a ready endpoint."""
    configs = await cluster.list(WEBHOOKS)
    for config in configs:
        hooks = [h for h in config.get("webhooks") or () if isinstance(h, Mapping)]
        if not any(_path(h) == LWS_WEBHOOK_PATH for h in hooks):
            continue
        pod_hook = next((h for h in hooks if _path(h) == POD_WEBHOOK_PATH), None)
        name = (config.get("metadata") or {}).get("name")
        if pod_hook is None:
            return Finding(
                level,
                f"MutatingWebhookConfiguration {name} has no pod webhook ({POD_WEBHOOK_PATH}): LWS pods would get "
                "no group and worker index labels",
                INSTALL,
            )
        service = ((pod_hook.get("clientConfig") or {}).get("service")) or {}
        ns, svc = service.get("namespace"), service.get("name")
        endpoints = await cluster.get(ENDPOINTS, ns, svc) if ns and svc else None
        ready = [a for s in (endpoints or {}).get("subsets") or () for a in s.get("addresses") or ()]
        if not ready:
            return Finding(
                level,
                f"the LWS controller's webhook Service {ns}/{svc} has no ready endpoint: the LeaderWorkerSet "
                "controller is not running, and every pod of a group is refused",
                f"kubectl -n {ns} get deployments,pods   # the controller (lws-controller-manager) must be Ready",
            )
        return Finding.ok(f"the LeaderWorkerSet controller is available (webhook Service {ns}/{svc})")
    return Finding(level, "the LeaderWorkerSet controller's webhooks are not registered", INSTALL)


async def _list(cluster: ClusterReader, ref: ResourceRef) -> list[dict[str, Any]]:
    try:
        return await cluster.list(ref)
    except Exception:  # noqa: BLE001 - a kind not served here: nothing of it spans nodes
        return []


def _path(hook: Mapping[str, Any]) -> str:
    return str((((hook.get("clientConfig") or {}).get("service")) or {}).get("path") or "")


def _nodes(template: Mapping[str, Any]) -> int:
    value = (((template.get("spec") or {}).get("hardware")) or {}).get("nodes")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))
