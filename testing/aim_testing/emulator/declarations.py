"""Resource declarations: what the emulator serves, for discovery and for its write rules.

Nothing is served until declared. :func:`declare_resources` declares the built-in
resources the operator uses, the third-party ones it talks to (served by CRDs in a
real cluster, so custom-resource rules apply, with the structural schema of the
CRD file in ``crds/third_party`` when there is one), and then any CRDs and extras.
A CRD's schema makes the emulator prune and default objects as the API server
does (:mod:`~aim_testing.emulator.schemas`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import kmock

from aim_testing.crdschema import load_crd, third_party_crd

if TYPE_CHECKING:
    from aim_testing.emulator.server import Emulator

ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

_STATUS = ["status"]
BUILTIN_RESOURCES: dict[str, dict[str, Any]] = {
    "v1/namespaces": {"kind": "Namespace", "namespaced": False, "subresources": ["status", "finalize"]},
    "v1/events": {"kind": "Event", "namespaced": True},
    "events.k8s.io/v1/events": {"kind": "Event", "namespaced": True},
    "v1/pods": {"kind": "Pod", "namespaced": True, "subresources": ["status", "log"]},
    "v1/nodes": {"kind": "Node", "namespaced": False, "subresources": _STATUS},
    "v1/secrets": {"kind": "Secret", "namespaced": True},
    "v1/configmaps": {"kind": "ConfigMap", "namespaced": True},
    "v1/serviceaccounts": {"kind": "ServiceAccount", "namespaced": True},
    "v1/persistentvolumeclaims": {"kind": "PersistentVolumeClaim", "namespaced": True, "subresources": _STATUS},
    "v1/services": {"kind": "Service", "namespaced": True, "subresources": _STATUS},
    "v1/endpoints": {"kind": "Endpoints", "namespaced": True},
    "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations": {
        "kind": "MutatingWebhookConfiguration",
        "namespaced": False,
    },
    "apps/v1/deployments": {"kind": "Deployment", "namespaced": True, "subresources": ["status", "scale"]},
    "batch/v1/jobs": {"kind": "Job", "namespaced": True, "subresources": _STATUS},
    "coordination.k8s.io/v1/leases": {"kind": "Lease", "namespaced": True},
    "rbac.authorization.k8s.io/v1/rolebindings": {"kind": "RoleBinding", "namespaced": True},
    "rbac.authorization.k8s.io/v1/roles": {"kind": "Role", "namespaced": True},
    "rbac.authorization.k8s.io/v1/clusterroles": {"kind": "ClusterRole", "namespaced": False},
    "rbac.authorization.k8s.io/v1/clusterrolebindings": {"kind": "ClusterRoleBinding", "namespaced": False},
    "authorization.k8s.io/v1/subjectaccessreviews": {
        "kind": "SubjectAccessReview",
        "namespaced": False,
        "verbs": ["create"],
    },
    "authentication.k8s.io/v1/tokenreviews": {"kind": "TokenReview", "namespaced": False, "verbs": ["create"]},
    "autoscaling/v2/horizontalpodautoscalers": {
        "kind": "HorizontalPodAutoscaler",
        "namespaced": True,
        "subresources": _STATUS,
    },
    "apiextensions.k8s.io/v1/customresourcedefinitions": {
        "kind": "CustomResourceDefinition",
        "namespaced": False,
        "subresources": _STATUS,
    },
}
# Served by CRDs in a real cluster: custom-resource rules apply (no strategic merge, PUT needs a version).
THIRD_PARTY_RESOURCES: dict[str, dict[str, Any]] = {
    "serving.kserve.io/v1beta1/inferenceservices": {
        "kind": "InferenceService",
        "namespaced": True,
        "subresources": _STATUS,
    },
    "serving.kserve.io/v1alpha1/servingruntimes": {"kind": "ServingRuntime", "namespaced": True},
    "serving.kserve.io/v1alpha1/clusterservingruntimes": {"kind": "ClusterServingRuntime", "namespaced": False},
    "gateway.networking.k8s.io/v1/httproutes": {"kind": "HTTPRoute", "namespaced": True, "subresources": _STATUS},
    "gateway.networking.k8s.io/v1/gateways": {"kind": "Gateway", "namespaced": True, "subresources": _STATUS},
    "gateway.networking.k8s.io/v1/gatewayclasses": {
        "kind": "GatewayClass",
        "namespaced": False,
        "subresources": _STATUS,
    },
    # both InferencePool APIs of the Gateway API Inference Extension (gateways speak one or the other)
    "inference.networking.k8s.io/v1/inferencepools": {
        "kind": "InferencePool",
        "namespaced": True,
        "subresources": _STATUS,
    },
    "inference.networking.x-k8s.io/v1alpha2/inferencepools": {
        "kind": "InferencePool",
        "namespaced": True,
        "subresources": _STATUS,
    },
    "keda.sh/v1alpha1/scaledobjects": {"kind": "ScaledObject", "namespaced": True, "subresources": _STATUS},
    "keda.sh/v1alpha1/triggerauthentications": {"kind": "TriggerAuthentication", "namespaced": True},
    "leaderworkerset.x-k8s.io/v1/leaderworkersets": {
        "kind": "LeaderWorkerSet",
        "namespaced": True,
        "subresources": ["status", "scale"],
    },
    "kopf.dev/v1/clusterkopfpeerings": {"kind": "ClusterKopfPeering", "namespaced": False},
    "kopf.dev/v1/kopfpeerings": {"kind": "KopfPeering", "namespaced": True},
}


def declare(
    emulator: Emulator,
    key: str,
    *,
    kind: str,
    namespaced: bool,
    subresources: Iterable[str] = (),
    custom: bool = False,
    verbs: Iterable[str] = ALL_VERBS,
    singular: str | None = None,
    shortnames: Iterable[str] = (),
    categories: Iterable[str] = (),
    schema: Mapping[str, Any] | None = None,
) -> None:
    """Declare one resource for discovery and for the emulator's write rules.

    ``schema`` (a structural ``openAPIV3Schema``) makes writes pruned and defaulted by it.
    """
    emulator.resources[key] = kmock.ResourceInfo(
        kind=kind,
        namespaced=namespaced,
        singular=singular or kind.lower(),
        verbs=verbs,
        shortnames=shortnames,
        categories=categories,
        subresources=subresources,
    )
    res = kmock.resource(key)
    if custom:
        emulator.custom_resources.add(res)
    if schema is not None:
        emulator.schemas[res] = dict(schema)
    else:
        emulator.schemas.pop(res, None)


def declare_crd(emulator: Emulator, crd: Mapping[str, Any]) -> None:
    """Declare every served version of a CustomResourceDefinition (names, scope, subresources)."""
    spec, names = crd["spec"], crd["spec"]["names"]
    for version in spec.get("versions") or [{"name": spec["version"]}]:
        if version.get("served", True):
            declare(
                emulator,
                f"{spec['group']}/{version['name']}/{names['plural']}",
                kind=names["kind"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                custom=True,
                subresources=(version.get("subresources") or spec.get("subresources") or {}).keys(),
                singular=names.get("singular"),
                shortnames=names.get("shortNames") or (),
                categories=names.get("categories") or (),
                schema=((version.get("schema") or spec.get("validation") or {}).get("openAPIV3Schema")),
            )


@functools.cache
def _third_party_schema(key: str) -> Mapping[str, Any] | None:
    """The structural schema of a third-party resource from its CRD file, if the file is there."""
    group, version, plural = key.rsplit("/", 2)
    try:
        path = third_party_crd(f"{group}_{plural}.yaml")
    except FileNotFoundError:
        return None
    crd = load_crd(str(path))
    for served in crd["spec"].get("versions") or ():
        if served["name"] == version:
            return (served.get("schema") or {}).get("openAPIV3Schema")
    return None


def declare_resources(
    emulator: Emulator,
    crds: Iterable[Mapping[str, Any]] | None = None,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> Emulator:
    """Declare the built-in and third-party resources the operator uses, then ``crds``, then ``extra``.

    ``extra`` maps resource keys to :func:`declare` keyword arguments, e.g.
    ``{"example.com/v1/widgets": {"kind": "Widget", "namespaced": True, "subresources": ["status"]}}``.
    """
    for key, info in BUILTIN_RESOURCES.items():
        declare(emulator, key, **info)
    for key, info in THIRD_PARTY_RESOURCES.items():
        declare(emulator, key, custom=True, schema=_third_party_schema(key), **info)
    for crd in crds or ():
        declare_crd(emulator, crd)
    for key, info in (extra or {}).items():
        declare(emulator, key, **info)
    return emulator
