"""The YAML in examples/ is what users run first: every document must be one the operator accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_core.api import API_VERSION, parse
from aim_testing.crdschema import crd_errors

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
UPSTREAM_CRDS = Path("/work/shared/reference/upstream-crds")
FILES = sorted(EXAMPLES.glob("*.yaml"))


def _documents() -> list[Any]:
    params = []
    for path in FILES:
        with path.open(encoding="utf-8") as fh:
            for index, doc in enumerate(yaml.safe_load_all(fh)):
                name = (doc or {}).get("metadata", {}).get("name", "?") if isinstance(doc, dict) else "?"
                params.append(pytest.param(path.name, doc, id=f"{path.name}#{index}-{name}"))
    return params


DOCUMENTS = _documents()


def test_examples_directory_has_the_documented_files():
    names = {p.name for p in FILES}
    assert names >= {
        "nodes.yaml",
        "runtime-config.yaml",
        "models.yaml",
        "templates.yaml",
        "template-caches.yaml",
        "services.yaml",
    }
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    for name in names:
        assert f"`{name}`" in readme, f"examples/README.md does not explain {name}"


@pytest.mark.parametrize(("filename", "doc"), DOCUMENTS)
def test_every_document_is_a_kubernetes_object(filename, doc):
    assert isinstance(doc, dict), f"{filename}: empty or non-object document"
    assert doc.get("apiVersion") and doc.get("kind") and doc.get("metadata", {}).get("name")


@pytest.mark.parametrize(("filename", "doc"), [p for p in DOCUMENTS if p.values[1].get("apiVersion") == API_VERSION])
def test_aim_documents_parse_with_the_converter(filename, doc):
    model = parse(doc)

    assert type(model).__name__ == doc["kind"]


@pytest.mark.skipif(not UPSTREAM_CRDS.is_dir(), reason="upstream CRDs not available")
@pytest.mark.parametrize(("filename", "doc"), [p for p in DOCUMENTS if p.values[1].get("apiVersion") == API_VERSION])
def test_aim_documents_fit_the_upstream_crd_schema(filename, doc):
    """Enums, patterns and exact field names, which the converter leaves to the API server."""
    crd = UPSTREAM_CRDS / f"aim.eai.amd.com_{doc['kind'].lower()}s.yaml"

    assert crd_errors(doc, crd) == []


def test_nodes_are_plain_nodes_with_amd_gpu_labels():
    with (EXAMPLES / "nodes.yaml").open(encoding="utf-8") as fh:
        nodes = list(yaml.safe_load_all(fh))

    assert {n["kind"] for n in nodes} == {"Node"}
    gpu_nodes = [n for n in nodes if "amd.com/gpu" in n["status"]["capacity"]]
    assert len(gpu_nodes) >= 2 and len(nodes) > len(gpu_nodes), "want GPU nodes and a CPU-only node"
    for node in gpu_nodes:
        labels = node["metadata"]["labels"]
        assert labels["amd.com/gpu.device-id"] == "74a1"  # MI300X
        assert labels["amd.com/gpu.vram"] == "192G"
        assert node["status"]["allocatable"]["amd.com/gpu"] == "8"
        assert all(isinstance(v, str) for v in labels.values()), "label values must be strings"


def test_only_aim_and_core_kinds():
    kinds = {(d.values[1]["apiVersion"], d.values[1]["kind"]) for d in DOCUMENTS}

    assert {v for v, _ in kinds} == {API_VERSION, "v1"}
