"""The committed CRD file is current, and our CRDs cover the upstream ones.

Regenerate the committed file with ``python -m aim_core.api.crds --write``.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from aim_core.api import crds

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CRDCOMPAT = SHARED / "tools" / "crdcompat.py"
UPSTREAM_DIR = SHARED / "reference" / "upstream-crds"
MIN_COVERAGE = 99.0


def test_committed_crds_are_current():
    assert crds.CRDS_FILE.exists(), f"{crds.CRDS_FILE} is missing; run: {crds.REGENERATE}"
    committed = crds.CRDS_FILE.read_text(encoding="utf-8")
    assert committed == crds.render_yaml(), f"{crds.CRDS_FILE.name} is stale; run: {crds.REGENERATE}"


def test_committed_file_is_what_the_cli_prints(capsys):
    from aim_core.cli import main

    assert main(["crds"]) == 0
    assert capsys.readouterr().out == crds.CRDS_FILE.read_text(encoding="utf-8")


def test_twelve_crds_one_group_one_served_storage_version():
    docs = [d for d in yaml.safe_load_all(crds.CRDS_FILE.read_text(encoding="utf-8")) if d]
    assert sorted(d["spec"]["names"]["kind"] for d in docs) == sorted(
        [
            "AIMArtifact", "AIMBenchmark", "AIMBenchmarkSweep", "AIMClusterModel", "AIMClusterModelSource", "AIMClusterRuntimeConfig",
            "AIMClusterServiceTemplate", "AIMModel", "AIMRuntimeConfig", "AIMService",
            "AIMServiceTemplate", "AIMTemplateCache",
        ]
    )  # fmt: skip
    for d in docs:
        assert d["apiVersion"] == "apiextensions.k8s.io/v1"
        assert d["spec"]["group"] == "aim.eai.amd.com"
        assert d["metadata"]["name"] == f"{d['spec']['names']['plural']}.aim.eai.amd.com"
        assert d["spec"]["names"]["categories"] == ["aim", "all"]
        (v,) = d["spec"]["versions"]
        assert (v["name"], v["served"], v["storage"], v["subresources"]) == ("v1alpha1", True, True, {"status": {}})


def _run_crdcompat(tmp_path: Path) -> str:
    if not CRDCOMPAT.exists() or not UPSTREAM_DIR.is_dir():
        pytest.skip(f"shared compatibility tool or upstream CRDs not found under {SHARED}")
    ours = tmp_path / "ours.yaml"
    ours.write_text(crds.render_yaml(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(CRDCOMPAT), str(UPSTREAM_DIR), str(ours), "-v"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return done.stdout


def test_crdcompat_field_coverage_kinds_and_printer_columns(tmp_path):
    report = _run_crdcompat(tmp_path)
    match = re.search(r"crd field coverage: (\d+)/(\d+) \(([\d.]+)%\)", report)
    assert match, report
    have, total = int(match[1]), int(match[2])
    assert 100.0 * have / total >= MIN_COVERAGE, report
    assert "MISSING KIND" not in report, report
    assert "printer columns missing" not in report, report
    assert "shortNames differ" not in report, report
    assert "scope " not in report, report
    assert "no status subresource" not in report, report


def _paths(schema, path=""):
    yield path or ".", schema
    for name, child in (schema.get("properties") or {}).items():
        yield from _paths(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from _paths(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _paths(schema["additionalProperties"], path + "{}")


def _by_kind(docs):
    return {
        d["spec"]["names"]["kind"]: d
        for d in docs
        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
    }


@pytest.fixture(scope="module")
def upstream():
    if not UPSTREAM_DIR.is_dir():
        pytest.skip(f"upstream CRDs not found at {UPSTREAM_DIR}")
    docs = []
    for f in sorted(UPSTREAM_DIR.glob("*.yaml")):
        docs += list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
    return _by_kind(docs)


@pytest.fixture(scope="module")
def ours():
    return _by_kind(crds.generate_crds())


def test_printer_columns_match_upstream_exactly(upstream, ours):
    for kind, up in upstream.items():
        want = up["spec"]["versions"][0].get("additionalPrinterColumns", [])
        got = ours[kind]["spec"]["versions"][0].get("additionalPrinterColumns", [])
        assert got == want, kind


def test_names_and_scope_match_upstream(upstream, ours):
    for kind, up in upstream.items():
        assert ours[kind]["spec"]["names"] == up["spec"]["names"], kind
        assert ours[kind]["spec"]["scope"] == up["spec"]["scope"], kind


# Defaults we leave out on purpose, each with its decision in docs/: nothing else may differ.
DELIBERATELY_NOT_DEFAULTED = {
    # Q12 (docs/models.md): without it a custom model's `custom.type` reaches its listed templates.
    ("AIMModel", ".spec.customTemplates[].type"),
    ("AIMClusterModel", ".spec.customTemplates[].type"),
}


# Defaults on fields upstream does not have (additive API), each a Kubernetes EnvVar default as on
# every upstream env list: nothing else may be added.
ADDITIVE_DEFAULTS = {
    # issue 22 (docs/adapters.md): spec.adapters[].env takes the same credential env as artifacts
    ("AIMService", ".spec.adapters[].env[].valueFrom.configMapKeyRef.name"),
    ("AIMService", ".spec.adapters[].env[].valueFrom.secretKeyRef.name"),
    ("AIMService", ".spec.adapters[].env[].valueFrom.fileKeyRef.optional"),
}


def test_server_side_defaults_match_upstream(upstream, ours):
    """F4: every default the upstream API server injects, we inject with the same value, and no others."""
    for kind, up in upstream.items():
        up_defaults = {
            p: n["default"]
            for p, n in _paths(up["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
            if "default" in n and (kind, p) not in DELIBERATELY_NOT_DEFAULTED
        }
        our_defaults = {
            p: n["default"]
            for p, n in _paths(ours[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
            if "default" in n and (kind, p) not in ADDITIVE_DEFAULTS
        }
        assert our_defaults == up_defaults, kind


def test_deliberately_missing_defaults_are_upstream_defaults(upstream, ours):
    """Each listed exception is a real upstream default that we really leave out (the list cannot go stale)."""
    for kind, path in DELIBERATELY_NOT_DEFAULTED:
        up = dict(_paths(upstream[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
        mine = dict(_paths(ours[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
        assert "default" in up[path], (kind, path)
        assert path in mine and "default" not in mine[path], (kind, path)


def test_status_defaults_to_pending_except_model_source(ours):
    for kind, crd in ours.items():
        status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
        field = status.get("properties", {}).get("status")
        if kind in ("AIMClusterModelSource",):
            assert field is not None and "default" not in field
        elif kind in ("AIMRuntimeConfig", "AIMClusterRuntimeConfig"):
            assert field is None or "default" not in field
        else:
            assert field["default"] == "Pending", kind
