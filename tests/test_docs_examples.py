"""The manifests in docs/examples/ are what people copy: each must be one our CRDs accept and the operator reads.

Every kind of ``aim.eai.amd.com/v1alpha1`` has a file, ``docs/examples/<kind lower-case>.yaml``,
whose documents are validated against the CRDs this project generates (the
ones ``kubectl apply`` installs), parsed by the converter the controllers use,
and planned offline by ``aim-engine render``'s code. ``docs/crds.md`` has a
section per kind that links its file.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_core.api import API_VERSION, parse
from aim_core.api.kinds import KINDS
from aim_testing.crdschema import crd_errors

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
CRDS = ROOT / "aim_core" / "crds" / "aim.eai.amd.com_crds.yaml"


def _crds() -> dict[str, dict[str, Any]]:
    with CRDS.open(encoding="utf-8") as fh:
        return {d["spec"]["names"]["kind"]: d for d in yaml.safe_load_all(fh)}


CRD_BY_KIND = _crds()


def _documents() -> list[Any]:
    params = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        with path.open(encoding="utf-8") as fh:
            for index, doc in enumerate(yaml.safe_load_all(fh)):
                name = (doc or {}).get("metadata", {}).get("name", "?")
                params.append(pytest.param(path.name, doc, id=f"{path.name}#{index}-{name}"))
    return params


DOCUMENTS = _documents()


@pytest.fixture(scope="module")
def crd_files(tmp_path_factory) -> dict[str, Path]:
    """Our generated CRDs, one file per kind (the schema helper reads one CRD per file)."""
    folder = tmp_path_factory.mktemp("crds")
    files = {}
    for kind, crd in CRD_BY_KIND.items():
        files[kind] = folder / f"{kind}.yaml"
        files[kind].write_text(yaml.safe_dump(crd), encoding="utf-8")
    return files


def test_every_kind_has_an_example_file_and_a_section_in_crds_md():
    assert len(CRD_BY_KIND) == len(KINDS), sorted(CRD_BY_KIND)
    crds_md = (ROOT / "docs" / "crds.md").read_text(encoding="utf-8")
    for kind in CRD_BY_KIND:
        path = EXAMPLES / f"{kind.lower()}.yaml"
        assert path.is_file(), f"docs/examples/{path.name} is missing: every kind needs an example"
        with path.open(encoding="utf-8") as fh:
            assert {d["kind"] for d in yaml.safe_load_all(fh)} == {kind}, f"{path.name} holds other kinds"
        assert f"## {kind}" in crds_md, f"docs/crds.md needs a section '## {kind}'"
        assert f"(examples/{path.name})" in crds_md, f"docs/crds.md does not link examples/{path.name}"


@pytest.mark.parametrize(("filename", "doc"), DOCUMENTS)
def test_example_fits_our_crd_schema(filename, doc, crd_files):
    assert doc["apiVersion"] == API_VERSION
    crd = CRD_BY_KIND[doc["kind"]]
    assert ("namespace" in doc["metadata"]) == (crd["spec"]["scope"] == "Namespaced"), "namespace vs scope"

    assert crd_errors(doc, crd_files[doc["kind"]]) == []


@pytest.mark.parametrize(("filename", "doc"), DOCUMENTS)
def test_example_parses_with_the_converter(filename, doc):
    assert type(parse(doc)).__name__ == doc["kind"]


def test_the_schema_check_would_catch_a_broken_example(crd_files):
    """The check above can fail: a wrong enum, an unknown field and a missing required field are refused."""
    service = next(p.values[1] for p in DOCUMENTS if p.values[1]["kind"] == "AIMService")
    template = next(p.values[1] for p in DOCUMENTS if p.values[1]["kind"] == "AIMClusterServiceTemplate")

    bad_enum = copy.deepcopy(template)
    bad_enum["spec"]["metric"] = "fastest"
    unknown = copy.deepcopy(service)
    unknown["spec"]["replica"] = 2
    missing = copy.deepcopy(template)
    del missing["spec"]["modelName"]

    assert crd_errors(bad_enum, crd_files["AIMClusterServiceTemplate"])
    assert crd_errors(unknown, crd_files["AIMService"])
    assert crd_errors(missing, crd_files["AIMClusterServiceTemplate"])


def test_the_examples_plan_offline_without_errors():
    """``aim-engine render -f docs/examples`` runs every planner over them; nothing may crash or be refused."""
    from aim_core.cli.offline import load_documents, render
    from aim_core.plugin.manager import get_plugin_manager

    docs = load_documents([str(EXAMPLES)])
    results = asyncio.run(
        render(docs, plugins=get_plugin_manager(), operator_namespace="aim-system", gpu_preference=())
    )

    assert len(results) == len(DOCUMENTS)
    refused = [
        (r.obj["kind"], r.obj["metadata"]["name"], c["type"], c.get("reason"))
        for r in results
        for c in (r.status or {}).get("conditions", ())
        if c.get("reason") in ("InvalidSpec", "ReferenceNotFound", "AuthError", "UnknownError")
        or (c["type"] == "ConfigValid" and c.get("status") == "False")
    ]
    assert refused == [], "examples the operator would refuse"
