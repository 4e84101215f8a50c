"""The cluster the benchmark starts from: everything an AIMService needs, already Ready.

Modelled on ``examples/`` (MI300X nodes, the qwen3-32b cluster model and its
1x MI300X latency template) but kept here, so editing the examples cannot
change what is measured. Objects carry their status: the emulator's
``put_object`` stores them as they are, as if their controllers had already
done their work.
"""

from __future__ import annotations

import uuid
from typing import Any

from aim_core.reconcile.naming import artifact_name, artifact_pvc_name, inference_service_name, shared_cache_name

API = "aim.eai.amd.com/v1alpha1"
MODEL = "qwen3-32b"
IMAGE = "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
TEMPLATE = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"
SOURCE_URI = "hf://Qwen/Qwen3-32B-FP8"
SOURCE_ID = "Qwen/Qwen3-32B-FP8"
T0 = "2025-06-01T00:00:00Z"
GATEWAY = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "name": "kserve-ingress-gateway",
    "namespace": "kgateway-system",
}


def _ready(*types: tuple[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "type": t,
            "status": "True",
            "reason": reason,
            "message": "",
            "observedGeneration": 1,
            "lastTransitionTime": T0,
        }
        for t, reason in (*types, ("Ready", "AllComponentsReady"))
    ]


def namespace_names(count: int) -> list[str]:
    return [f"bench-{i:02d}" for i in range(count)]


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}


def gpu_node(index: int) -> dict[str, Any]:
    """An 8-GPU MI300X node as the AMD GPU operator labels it (device id 74a1)."""
    name = f"gpu-node-{index:02d}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux",
        "feature.node.kubernetes.io/amd-gpu": "true",
        "amd.com/gpu.cu-count": "304",
        "amd.com/gpu.device-id": "74a1",
        "amd.com/gpu.family": "AI",
        "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM",
        "amd.com/gpu.vram": "192G",
        "beta.amd.com/gpu.device-id.74a1": "8",
        "beta.amd.com/gpu.vram.192G": "8",
    }
    resources = {"amd.com/gpu": "8", "cpu": "192", "memory": "2113291472Ki", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": resources, "allocatable": resources},
    }


def cluster_model() -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "AIMClusterModel",
        "metadata": {"name": MODEL, "generation": 1},
        "spec": {"image": IMAGE, "discovery": {"extractMetadata": True, "createServiceTemplates": True}},
        "status": {
            "status": "Ready",
            "observedGeneration": 1,
            "sourceType": "Image",
            # the metadata the model controller read from the image: it is not read again
            "imageMetadata": {
                "model": {
                    "canonicalName": "Qwen/Qwen3-32B",
                    "recommendedDeployments": [
                        {
                            "gpuModel": "MI300X",
                            "gpuCount": 1,
                            "precision": "fp8",
                            "metric": "latency",
                            "profileId": "vllm-mi300x-fp8-tp1-latency",
                        }
                    ],
                }
            },
            "conditions": _ready(
                ("ImageMetadataReady", "ImageFound"),
                ("RuntimeConfigReady", "ConfigFound"),
                ("ClusterServiceTemplatesReady", "AllTemplatesReady"),
            ),
        },
    }


def cluster_template() -> dict[str, Any]:
    hardware = {"gpu": {"requests": 1, "model": "MI300X", "resourceName": "amd.com/gpu"}}
    return {
        "apiVersion": API,
        "kind": "AIMClusterServiceTemplate",
        "metadata": {"name": TEMPLATE, "generation": 1, "labels": {"aim.eai.amd.com/model": MODEL}},
        "spec": {
            "modelName": MODEL,
            "metric": "latency",
            "precision": "fp8",
            "profileId": "vllm-mi300x-fp8-tp1-latency",
            "hardware": hardware,
        },
        "status": {
            "status": "Ready",
            "observedGeneration": 1,
            "hardwareSummary": "1 x MI300X",
            "profile": {
                "metadata": {
                    "engine": "vllm",
                    "gpu": "MI300X",
                    "precision": "fp8",
                    "gpuCount": 1,
                    "metric": "latency",
                    "type": "optimized",
                },
                "engine_args": {"tensor-parallel-size": 1, "max-model-len": 32768},
                "env_vars": {"VLLM_USE_V1": "1"},
            },
            "modelSources": [{"modelId": SOURCE_ID, "sourceUri": SOURCE_URI, "size": "33Gi"}],
            "resolvedHardware": hardware,
            "resolvedNodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "amd.com/gpu.device-id",
                                    "operator": "In",
                                    "values": ["74a1", "74a9", "74b5", "74bd"],
                                }
                            ]
                        }
                    ]
                }
            },
            "conditions": _ready(
                ("ClusterModelReady", "ClusterModelFound"),
                ("GPUReady", "GPUAvailable"),
                ("Discovered", "DiscoveryComplete"),
            ),
        },
    }


def artifact(ns: str) -> dict[str, Any]:
    """The downloaded model weights of the template's only source, in ``ns``."""
    name = artifact_name(SOURCE_URI)
    uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench/{ns}/{name}"))
    return {
        "apiVersion": API,
        "kind": "AIMArtifact",
        "metadata": {"name": name, "namespace": ns, "uid": uid, "generation": 1},
        "spec": {"sourceUri": SOURCE_URI, "modelId": SOURCE_ID, "size": "33Gi"},
        "status": {
            "status": "Ready",
            "observedGeneration": 1,
            "mode": "Shared",
            "persistentVolumeClaim": artifact_pvc_name(name, uid),
            "conditions": _ready(("DownloadComplete", "Verified")),
        },
    }


def volume(art: dict[str, Any]) -> dict[str, Any]:
    """The bound PVC a Ready artifact downloaded into (without it the artifact controller downloads again)."""
    meta = art["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {
            "name": art["status"]["persistentVolumeClaim"],
            "namespace": meta["namespace"],
            "labels": {"aim.eai.amd.com/cache.name": meta["name"]},
            "ownerReferences": [
                {"apiVersion": API, "kind": "AIMArtifact", "name": meta["name"], "uid": meta["uid"], "controller": True}
            ],
        },
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "37Gi"}}},
        "status": {"phase": "Bound"},
    }


def shared_cache(ns: str, art: dict[str, Any]) -> dict[str, Any]:
    """The Ready Shared template cache every service of ``ns`` reuses."""
    meta = art["metadata"]
    return {
        "apiVersion": API,
        "kind": "AIMTemplateCache",
        "metadata": {
            "name": shared_cache_name(TEMPLATE, ns),
            "namespace": ns,
            "generation": 1,
            "finalizers": ["aim.eai.amd.com/artifactcleanup"],
        },
        "spec": {"templateName": TEMPLATE, "templateScope": "Cluster", "mode": "Shared"},
        "status": {
            "status": "Ready",
            "observedGeneration": 1,
            "resolvedTemplateKind": "AIMClusterServiceTemplate",
            "artifacts": {
                meta["name"]: {
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "model": SOURCE_ID,
                    "status": "Ready",
                    "persistentVolumeClaim": art["status"]["persistentVolumeClaim"],
                }
            },
            "conditions": _ready(("ServiceTemplateReady", "AllComponentsReady"), ("ArtifactsReady", "AllCachesReady")),
        },
    }


def cluster_runtime_config(routing: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "labelPropagation": {"enabled": True, "match": ["example.com/*"]},
        "env": [{"name": "VLLM_LOGGING_LEVEL", "value": "WARNING"}],
    }
    if routing:
        spec["routing"] = {"enabled": True, "gatewayRef": GATEWAY, "requestTimeout": "120s"}
    return {"apiVersion": API, "kind": "AIMClusterRuntimeConfig", "metadata": {"name": "default"}, "spec": spec}


def crds() -> list[dict[str, Any]]:
    """The AIM CRDs, installed and Established as in a cluster: the operator's /readyz reads them once at start."""
    from aim_core.api.crds import generate_crds

    return [{**crd, "status": {"conditions": [{"type": "Established", "status": "True"}]}} for crd in generate_crds()]


def cluster(
    namespaces: list[str], *, nodes: int = 4, runtime_config: bool = True, routing: bool = False
) -> list[dict[str, Any]]:
    """Every object to seed, dependencies first."""
    objects = crds()
    objects += [namespace(ns) for ns in namespaces]
    objects += [gpu_node(i) for i in range(nodes)]
    if runtime_config:
        objects.append(cluster_runtime_config(routing))
    objects += [cluster_model(), cluster_template()]
    for ns in namespaces:
        art = artifact(ns)
        objects += [art, volume(art), shared_cache(ns, art)]
    return objects


def service(name: str, ns: str) -> dict[str, Any]:
    """What a user writes: a model by name, the template chosen automatically."""
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": ns, "labels": {"example.com/team": "bench"}},
        "spec": {"model": {"name": MODEL}},
    }


def services(count: int, namespaces: list[str]) -> list[tuple[str, str, str]]:
    """``(namespace, service name, InferenceService name)``, spread round-robin over the namespaces."""
    out = []
    for i in range(count):
        ns, name = namespaces[i % len(namespaces)], f"svc-{i:05d}"
        out.append((ns, name, inference_service_name(name, ns)))
    return out


# --------------------------------------------------------------------------- a cluster of other workloads


def unrelated_secrets(count: int, size: int = 100 * 1024, namespace: str = "apps") -> list[dict[str, Any]]:
    """Helm release Secrets of ``size`` bytes each (Helm keeps releases of up to 1 MiB in Secrets)."""
    import base64

    blob = base64.b64encode(b"H4sI" + b"x" * (size * 3 // 4 - 4)).decode()
    return [
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "helm.sh/release.v1",
            "metadata": {
                "name": f"sh.helm.release.v1.app{i:04d}.v1",
                "namespace": namespace,
                "labels": {"owner": "helm", "name": f"app{i:04d}", "status": "deployed", "version": "1"},
            },
            "data": {"release": blob},
        }
        for i in range(count)
    ]


def unrelated_pods(count: int, namespace: str = "apps") -> list[dict[str, Any]]:
    """Running pods of other workloads (about 3 KB each, as a Deployment's pods with their status)."""
    pods = []
    for i in range(count):
        name = f"web-{i // 10:03d}-{i:05d}"
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {"app": "web", "pod-template-hash": f"{i // 10:08x}"},
                    "annotations": {"kubectl.kubernetes.io/restartedAt": T0},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "ReplicaSet",
                            "name": f"web-{i // 10:03d}",
                            "uid": f"00000000-0000-0000-0000-{i // 10:012d}",
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "nodeName": f"node-{i % 4}",
                    "serviceAccountName": "default",
                    "containers": [
                        {
                            "name": "web",
                            "image": "registry.example/web:1.2.3",
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "env": [{"name": f"SETTING_{k}", "value": "v" * 40} for k in range(12)],
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                            "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                            "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
                        }
                    ],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
                },
                "status": {
                    "phase": "Running",
                    "podIP": f"10.1.{i // 250}.{i % 250}",
                    "startTime": T0,
                    "conditions": [
                        {"type": t, "status": "True", "lastTransitionTime": T0}
                        for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
                    ],
                    "containerStatuses": [
                        {
                            "name": "web",
                            "ready": True,
                            "restartCount": 0,
                            "started": True,
                            "image": "registry.example/web:1.2.3",
                            "imageID": "registry.example/web@sha256:" + "0" * 64,
                            "containerID": "containerd://" + f"{i:064x}",
                            "state": {"running": {"startedAt": T0}},
                        }
                    ],
                },
            }
        )
    return pods
