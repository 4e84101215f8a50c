"""What ``aim-engine doctor`` checks for the KServe runtime builder.

* the InferenceService CRD (``serving.kserve.io/v1beta1``), Established, with
  the fields this plugin writes (``spec.predictor.containers``; the replica
  bounds);
* KServe's default deployment mode (ConfigMap ``inferenceservice-config`` in
  the ``kserve`` namespace, key ``deploy``): the InferenceServices built here
  carry no ``serving.kserve.io/deploymentMode`` annotation and expect a plain
  Deployment, i.e. ``Standard`` (``RawDeployment`` before KServe 0.15).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from aim_core import ClusterReader, Finding, ResourceRef, check_crd
from aim_plugin_kserve.inferenceservice import INFERENCESERVICE

CONFIG_MAPS = ResourceRef("v1", "ConfigMap", "configmaps")
KSERVE_NAMESPACE = "kserve"
KSERVE_CONFIG = "inferenceservice-config"
STANDARD_MODES = ("Standard", "RawDeployment")

INSTALL = (
    "helm install kserve-crd oci://ghcr.io/kserve/charts/kserve-crd --version v0.16.0 -n kserve --create-namespace"
    " && helm install kserve oci://ghcr.io/kserve/charts/kserve --version v0.16.0 -n kserve"
    " --set kserve.controller.deploymentMode=Standard"
)
SET_STANDARD = (
    "kubectl -n kserve patch configmap inferenceservice-config --type merge "
    '-p \'{"data":{"deploy":"{\\"defaultDeploymentMode\\":\\"Standard\\"}"}}\''
    " && kubectl -n kserve rollout restart deployment kserve-controller-manager"
    "   # helm: --set kserve.controller.deploymentMode=Standard"
)


class KServeChecks:
    """The InferenceService CRD and KServe's deployment mode."""

    name = "kserve"
    title = "KServe (runtime builder)"

    async def run(self, cluster: ClusterReader) -> Sequence[Finding]:
        findings = await check_crd(
            cluster,
            INFERENCESERVICE,
            fix=INSTALL,
            required_paths=("spec.predictor.containers", "spec.predictor.minReplicas"),
        )
        config = await cluster.get(CONFIG_MAPS, KSERVE_NAMESPACE, KSERVE_CONFIG)
        findings.append(deployment_mode(config))
        return findings


def deployment_mode(config: dict | None) -> Finding:
    """KServe's default deployment mode against what our InferenceServices need."""
    where = f"ConfigMap {KSERVE_NAMESPACE}/{KSERVE_CONFIG}"
    if config is None:
        return Finding.warn(
            f"{where} not found, so KServe's default deployment mode is unknown; AIM's InferenceServices "
            f"need {STANDARD_MODES[0]} (RawDeployment)",
            f"if KServe runs in another namespace: kubectl get configmap -A | grep {KSERVE_CONFIG}, "
            f"and check its deploy.defaultDeploymentMode is {STANDARD_MODES[0]}",
        )
    raw = (config.get("data") or {}).get("deploy") or "{}"
    try:
        mode = (json.loads(raw) or {}).get("defaultDeploymentMode")
    except (ValueError, AttributeError):
        return Finding.fail(f"{where}: key deploy is not JSON: {raw[:80]!r}", SET_STANDARD)
    if mode in STANDARD_MODES:
        return Finding.ok(f"KServe's default deployment mode is {mode}, as AIM's InferenceServices need")
    return Finding.fail(
        f"KServe's default deployment mode is {mode or 'not set (deploy.defaultDeploymentMode)'}; AIM's InferenceServices "
        f"carry no deploymentMode annotation and need {STANDARD_MODES[0]} (RawDeployment): plain Deployments, "
        "no Knative",
        SET_STANDARD,
    )
