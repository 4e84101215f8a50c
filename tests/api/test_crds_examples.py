"""Every AIM object the upstream docs show is accepted by our generated schema.

The examples are the fenced YAML blocks of the upstream documentation that
declare an ``aim.eai.amd.com`` object. Each is validated with jsonschema
after translating the Kubernetes OpenAPI subset (int-or-string,
preserve-unknown-fields, nullable; see ``to_jsonschema`` in
test_crds_structural.py). Unknown fields are rejected, as ``kubectl apply``
does with strict field validation. CEL rules are not evaluated here; the
exactly-one-of rule that services most often trip is checked by hand.
"""

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

from aim_core.api.crds import generate_crds

DOCS = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "upstream-docs"
UPSTREAM_CRDS = DOCS.parent / "upstream-crds"

_spec = importlib.util.spec_from_file_location("_crd_structural", Path(__file__).with_name("test_crds_structural.py"))
_structural = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_structural)
accepts = _structural.accepts


def _examples():
    if not DOCS.is_dir():
        return []
    out = []
    for md in sorted(DOCS.rglob("*.md")):
        text = md.read_text(encoding="utf-8")
        for block_no, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", text, re.S)):
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue  # fragments with placeholders; none of them is a whole AIM object
            for doc_no, doc in enumerate(docs):
                if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("aim.eai.amd.com/"):
                    ident = f"{md.relative_to(DOCS)}#{block_no}.{doc_no}:{doc.get('kind')}"
                    out.append(pytest.param(doc, id=ident))
    return out


EXAMPLES = _examples()


def _roots(docs):
    return {d["spec"]["names"]["kind"]: d["spec"]["versions"][0]["schema"]["openAPIV3Schema"] for d in docs}


@pytest.fixture(scope="module")
def ours():
    return _roots(generate_crds())


def test_docs_have_examples_for_most_kinds():
    if not DOCS.is_dir():
        pytest.skip(f"upstream docs not found at {DOCS} (shared dir absent)")
    kinds = {p.values[0]["kind"] for p in EXAMPLES}
    assert len(EXAMPLES) >= 50
    assert {"AIMService", "AIMModel", "AIMClusterModel", "AIMServiceTemplate", "AIMClusterModelSource"} <= kinds


# Examples the upstream docs got wrong: upstream's own CRDs reject them too.
# For these we require the same rejection, message for message.
DOCS_DRIFT = {
    "concepts/models.md#3.1:AIMRuntimeConfig": "runtime configs have no serviceAccountName/imagePullSecrets",
    "concepts/models.md#7.0:AIMModel": "gpu.models (plural) does not exist; it is gpu.model",
    "concepts/models.md#16.1:AIMService": "gpu.models, and custom models need baseImage",
    "concepts/runtime-config.md#11.0:AIMService": "model.ref does not exist; it is model.name",
    "concepts/templates.md#2.0:AIMServiceTemplate": "modelSources entries are modelId/sourceUri, not name/sourceURI",
}


@pytest.fixture(scope="module")
def upstream():
    if not UPSTREAM_CRDS.is_dir():
        pytest.skip(f"upstream CRDs not found at {UPSTREAM_CRDS}")
    return _roots(yaml.safe_load(f.read_text(encoding="utf-8")) for f in sorted(UPSTREAM_CRDS.glob("*.yaml")))


@pytest.mark.parametrize("obj", EXAMPLES)
def test_docs_example_is_accepted(request, ours, upstream, obj):
    ident = request.node.callspec.id
    assert obj["apiVersion"] == "aim.eai.amd.com/v1alpha1"
    problems = accepts(ours[obj["kind"]], obj)
    if ident in DOCS_DRIFT:
        assert problems, f"{ident} was expected to be rejected ({DOCS_DRIFT[ident]})"
        assert problems == accepts(upstream[obj["kind"]], obj)
        return
    assert problems == []
    if obj["kind"] == "AIMService":
        model = obj["spec"]["model"]
        assert sum(k in model for k in ("name", "image", "custom")) == 1


def test_translation_rejects_what_the_api_server_rejects(ours):
    """The check above can fail: unknown fields, wrong types and bad enums are caught."""
    base = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "x"},
        "spec": {"model": {"name": "m"}},
    }
    assert accepts(ours["AIMService"], base) == []
    assert accepts(ours["AIMService"], {**base, "spec": {"model": {"name": "m"}, "replicaz": 2}})
    assert accepts(ours["AIMService"], {**base, "spec": {"model": {"name": "m"}, "replicas": "two"}})
    assert accepts(ours["AIMService"], {**base, "spec": {"model": {"name": "m"}, "caching": {"mode": "Sometimes"}}})
    assert accepts(ours["AIMService"], {**base, "spec": {"model": {"name": "m"}, "minReplicas": 0}})
    assert accepts(
        ours["AIMService"], {**base, "spec": {"model": {"name": "m"}, "resources": {"limits": {"cpu": "lots"}}}}
    )
