"""CustomResourceDefinitions: installed, Established, serving what we send, up to date.

Pure: takes CRDs as read from the API server. :func:`crd_findings` is what a
plugin's doctor check uses for the third-party kinds it builds;
:func:`project_crd_findings` compares this project's CRDs in the cluster with
the ones this installation generates (``aim-engine crds``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.plugin.providers import ClusterReader, Finding, ResourceRef

__all__ = ["CRDS", "check_crd", "crd_findings", "crd_name", "project_crd_findings"]

CRDS = ResourceRef("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)

APPLY_OUR_CRDS = "aim-engine crds | kubectl apply --server-side -f -"


def crd_name(ref: ResourceRef) -> str:
    """``inferenceservices.serving.kserve.io``: the name of the CRD that serves ``ref``."""
    return f"{ref.plural}.{ref.group}"


def crd_findings(
    crd: Mapping[str, Any] | None,
    ref: ResourceRef,
    *,
    fix: str,
    required_paths: Sequence[str] = (),
    missing_level: str = "fail",
) -> list[Finding]:
    """Whether ``crd`` (as read; ``None`` when absent) serves ``ref`` usably.

    :param fix: how to install or upgrade it (a command or a link).
    :param required_paths: dotted field paths of the object that this project
        writes and an older version lacks (``spec.predictor.autoScaling``).
    :param missing_level: ``"warn"`` when nothing needs the kind yet.
    """
    name = crd_name(ref)
    if crd is None:
        return [Finding(missing_level, f"CRD {name} is not installed ({ref.kind} {ref.api_version})", fix)]
    versions = {v.get("name"): v for v in (crd.get("spec") or {}).get("versions") or ()}
    served = sorted(n for n, v in versions.items() if v.get("served", True))
    findings: list[Finding] = []
    established = _condition(crd, "Established")
    if established is None or established.get("status") != "True":
        why = f": {established.get('reason')}: {established.get('message')}" if established else ""
        findings.append(Finding.fail(f"CRD {name} is not Established{why}", fix))
    version = versions.get(ref.version)
    if version is None or not version.get("served", True):
        findings.append(
            Finding.fail(
                f"CRD {name} does not serve {ref.api_version} (serves {', '.join(served) or 'nothing'}); "
                f"this installation writes {ref.kind} {ref.api_version}",
                fix,
            )
        )
        return findings
    schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {}
    absent = [path for path in required_paths if schema and not _has_path(schema, path)]
    if absent:
        findings.append(
            Finding.fail(
                f"CRD {name} {ref.version} has no field {', '.join(absent)}: the installed version is too old", fix
            )
        )
    if not findings:
        findings.append(Finding.ok(f"CRD {name} is Established and serves {ref.version}"))
    return findings


def project_crd_findings(
    live: Mapping[str, Mapping[str, Any] | None], wanted: Sequence[Mapping[str, Any]]
) -> list[Finding]:
    """This project's CRDs in the cluster (``live``, by CRD name) against the ones generated here."""
    missing, outdated, unready = [], [], []
    for crd in wanted:
        name = crd["metadata"]["name"]
        have = live.get(name)
        if have is None:
            missing.append(name)
            continue
        established = _condition(have, "Established")
        if established is None or established.get("status") != "True":
            unready.append(name)
        if not _covers(_versions(have), _versions(crd)):
            outdated.append(name)
    findings = []
    if missing:
        findings.append(Finding.fail(f"CRDs not installed: {', '.join(missing)}", APPLY_OUR_CRDS))
    if outdated:
        findings.append(
            Finding.fail(
                f"CRDs differ from this version of aim-engine (versions or schemas): {', '.join(outdated)}",
                APPLY_OUR_CRDS,
            )
        )
    if unready:
        findings.append(
            Finding.fail(
                f"CRDs not Established: {', '.join(unready)}",
                "kubectl get crd " + " ".join(unready) + " -o yaml  # see status.conditions",
            )
        )
    if not findings:
        findings.append(Finding.ok(f"all {len(wanted)} aim.eai.amd.com CRDs are installed at this version"))
    return findings


def _versions(crd: Mapping[str, Any]) -> dict[str, Any]:
    """What must match, per version: served, storage, schema, subresources, printer columns."""
    return {
        v.get("name"): {
            "served": bool(v.get("served", True)),
            "storage": bool(v.get("storage")),
            "schema": (v.get("schema") or {}).get("openAPIV3Schema") or {},
            "subresources": v.get("subresources") or {},
            "columns": v.get("additionalPrinterColumns") or [],
        }
        for v in (crd.get("spec") or {}).get("versions") or ()
    }


def _covers(live: Any, wanted: Any) -> bool:
    """Whether ``live`` holds everything of ``wanted``: fields the API server adds when it stores a CRD
    (defaults) do not make it differ; a field missing or changed does."""
    if isinstance(wanted, Mapping):
        return isinstance(live, Mapping) and all(k in live and _covers(live[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(live, list) and len(live) == len(wanted) and all(map(_covers, live, wanted))
    return live == wanted


def _condition(obj: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == type_), None)


def _has_path(schema: Mapping[str, Any], path: str) -> bool:
    node: Mapping[str, Any] = schema
    for part in path.split("."):
        while node.get("type") == "array" and "items" in node:
            node = node["items"]
        properties = node.get("properties") or {}
        if part not in properties:
            return bool(node.get("x-kubernetes-preserve-unknown-fields"))
        node = properties[part]
    return True


async def check_crd(
    cluster: ClusterReader,
    ref: ResourceRef,
    *,
    fix: str,
    required_paths: Sequence[str] = (),
    missing_level: str = "fail",
) -> list[Finding]:
    """Read the CRD that serves ``ref`` and judge it with :func:`crd_findings` (for plugins' doctor checks)."""
    return crd_findings(
        await cluster.get(CRDS, None, crd_name(ref)),
        ref,
        fix=fix,
        required_paths=required_paths,
        missing_level=missing_level,
    )
