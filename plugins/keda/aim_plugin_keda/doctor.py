"""What ``aim-engine doctor`` checks for the KEDA autoscaler.

KServe builds a KEDA ScaledObject for every InferenceService this plugin marks
``autoscalerClass: keda``, so KEDA's ScaledObject CRD (``keda.sh/v1alpha1``)
must be there, and KServe's InferenceService must know
``spec.predictor.autoScaling`` (KServe 0.15 and later). Both fail only when
some AIMService asks for autoscaling (``minReplicas``, ``maxReplicas`` or
``autoScaling``); otherwise they are warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core import ClusterReader, Finding, ResourceRef, check_crd

SCALED_OBJECT = ResourceRef("keda.sh/v1alpha1", "ScaledObject", "scaledobjects")
INFERENCESERVICE = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices")
SERVICES = ResourceRef("aim.eai.amd.com/v1alpha1", "AIMService", "aimservices")

INSTALL = (
    "helm repo add kedacore https://kedacore.github.io/charts && "
    "helm install keda kedacore/keda --version 2.18.1 -n keda --create-namespace"
)
UPGRADE_KSERVE = "helm upgrade kserve-crd oci://ghcr.io/kserve/charts/kserve-crd --version v0.16.0 -n kserve"


class KedaChecks:
    """KEDA's ScaledObject CRD, and KServe's autoscaling fields, for autoscaled services."""

    name = "keda"
    title = "KEDA (autoscaler)"

    async def run(self, cluster: ClusterReader) -> Sequence[Finding]:
        autoscaled = sorted(_name(s) for s in await cluster.list(SERVICES) if wants_autoscaling(s))
        level = "fail" if autoscaled else "warn"
        findings = await check_crd(
            cluster, SCALED_OBJECT, fix=INSTALL, required_paths=("spec.triggers",), missing_level=level
        )
        findings += [
            f
            for f in await check_crd(
                cluster,
                INFERENCESERVICE,
                fix=UPGRADE_KSERVE,
                required_paths=("spec.predictor.autoScaling",),
                missing_level=level,
            )
            if f.level != "ok" and "is not installed" not in f.message
        ]  # absence: the KServe check says
        findings = [Finding(level if f.level == "fail" else f.level, f.message, f.fix) for f in findings]
        who = (
            (
                f"{len(autoscaled)} AIMService(s) autoscale: {', '.join(autoscaled[:5])}"
                f"{' ...' if len(autoscaled) > 5 else ''}"
            )
            if autoscaled
            else "no AIMService asks for autoscaling yet"
        )
        if any(f.level != "ok" for f in findings):
            findings.append(Finding(level, who))
        else:
            findings.append(Finding.ok(who))
        return findings


def wants_autoscaling(service: Mapping[str, Any]) -> bool:
    spec = service.get("spec") or {}
    return any(spec.get(key) is not None for key in ("minReplicas", "maxReplicas", "autoScaling"))


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"
