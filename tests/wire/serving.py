"""Playing KServe, the kubelet and the gateway for a service's InferenceService in wire tests.

Neither backend runs KServe, pods or a Gateway controller: :func:`serve` writes what they
would (the InferenceService Ready, its predictor pod running, each HTTPRoute accepted by
its parent), which is what the operator waits for before a service is Running.
"""

from __future__ import annotations

from typing import Any

ROUTES = "gateway.networking.k8s.io/v1/httproutes"


def predictor_pod(isvc: dict[str, Any]) -> dict[str, Any]:
    """The running, Ready predictor pod KServe would start for ``isvc``."""
    name = isvc["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{name}-predictor-0",
            "namespace": isvc["metadata"]["namespace"],
            "labels": {"serving.kserve.io/inferenceservice": name},
        },
        "spec": {"containers": [{"name": "kserve-container", "image": "x"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "kserve-container", "ready": True, "state": {"running": {}}}],
        },
    }


def accept_route(kube: Any, route: dict[str, Any]) -> None:
    """The gateway accepts ``route`` on its first parent."""
    accepted = {
        "type": "Accepted",
        "status": "True",
        "reason": "Accepted",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    parent = {"parentRef": route["spec"]["parentRefs"][0], "controllerName": "x/y", "conditions": [accepted]}
    kube.put_object({**route, "status": {"parents": [parent]}})


def serve(kube: Any, isvc: dict[str, Any]) -> None:
    """KServe reports ``isvc`` Ready, its pod runs, and the gateway accepts the service's routes."""
    namespace = isvc["metadata"]["namespace"]
    service = isvc["metadata"]["labels"]["aim.eai.amd.com/service"]
    for route in kube.list(ROUTES, namespace, label_selector=f"aim.eai.amd.com/service={service}"):
        accept_route(kube, route)
    kube.put_object({**isvc, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    kube.put_object(predictor_pod(isvc))
