"""Resource types the core reads and writes."""

from __future__ import annotations

import attrs


@attrs.frozen
class ResourceRef:
    """A Kubernetes resource type: ``group/version`` plus plural and kind."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


GROUP = "aim.eai.amd.com"
API_VERSION = f"{GROUP}/v1alpha1"


def _aim(kind: str, namespaced: bool) -> ResourceRef:
    return ResourceRef(API_VERSION, kind, kind.lower() + "s", namespaced)


SERVICES = _aim("AIMService", True)
MODELS = _aim("AIMModel", True)
CLUSTER_MODELS = _aim("AIMClusterModel", False)
TEMPLATES = _aim("AIMServiceTemplate", True)
CLUSTER_TEMPLATES = _aim("AIMClusterServiceTemplate", False)
RUNTIME_CONFIGS = _aim("AIMRuntimeConfig", True)
CLUSTER_RUNTIME_CONFIGS = _aim("AIMClusterRuntimeConfig", False)
TEMPLATE_CACHES = _aim("AIMTemplateCache", True)
ARTIFACTS = _aim("AIMArtifact", True)
CLUSTER_MODEL_SOURCES = _aim("AIMClusterModelSource", False)
BENCHMARKS = _aim("AIMBenchmark", True)
BENCHMARK_SWEEPS = _aim("AIMBenchmarkSweep", True)

AIM_RESOURCES = (
    SERVICES,
    MODELS,
    CLUSTER_MODELS,
    TEMPLATES,
    CLUSTER_TEMPLATES,
    RUNTIME_CONFIGS,
    CLUSTER_RUNTIME_CONFIGS,
    TEMPLATE_CACHES,
    ARTIFACTS,
    CLUSTER_MODEL_SOURCES,
    BENCHMARKS,
    BENCHMARK_SWEEPS,
)

NAMESPACES = ResourceRef("v1", "Namespace", "namespaces", False)
NODES = ResourceRef("v1", "Node", "nodes", False)
PODS = ResourceRef("v1", "Pod", "pods", True)
EVENTS = ResourceRef("v1", "Event", "events", True)
SECRETS = ResourceRef("v1", "Secret", "secrets", True)
PVCS = ResourceRef("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True)
JOBS = ResourceRef("batch/v1", "Job", "jobs", True)
CONFIG_MAPS = ResourceRef("v1", "ConfigMap", "configmaps", True)
LEASES = ResourceRef("coordination.k8s.io/v1", "Lease", "leases", True)
CUSTOM_RESOURCE_DEFINITIONS = ResourceRef(
    "apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False
)
ROLE_BINDINGS = ResourceRef("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True)

# Reviews the metrics server asks for (--metrics-secure): who a bearer token is, whether they may get /metrics.
TOKEN_REVIEWS = ResourceRef("authentication.k8s.io/v1", "TokenReview", "tokenreviews", False)
SUBJECT_ACCESS_REVIEWS = ResourceRef("authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews", False)
