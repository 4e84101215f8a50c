"""Every AIM YAML example in the upstream docs and in the seeds parses and round-trips.

Sources (read-only, outside the repository):

* ``shared/reference/upstream-docs/**/*.md``: fenced ``yaml`` blocks, possibly
  multi-document.
* ``shared/seeds/*.txt``: rendered web pages. Their YAML lost its indentation,
  so documents are cut out at ``apiVersion:`` lines and re-indented from the
  model's own field tree (see :func:`reindent`). Documents of the old group
  ``aim.silogen.ai`` are counted and skipped.
"""

import collections
import copy
import re
import types
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml

from aim_core.api import API_VERSION, ModelError, kind_info, parse, unstructure
from aim_core.api.fields import json_name

SHARED = Path("/work/shared")
DOCS = SHARED / "reference" / "upstream-docs"
SEEDS = SHARED / "seeds"
OLD_GROUP = "aim.silogen.ai/"

pytestmark = pytest.mark.skipif(not DOCS.is_dir(), reason="shared reference docs not available")

# Upstream doc examples that are themselves wrong, by "<file>:<fence line>#<document index>".
BROKEN = {
    "concepts/models.md:209#1": (
        "AIMRuntimeConfig with spec.serviceAccountName/imagePullSecrets: no such fields upstream",
        ["$.spec.imagePullSecrets: unknown field", "$.spec.serviceAccountName: unknown field"],
    ),
    "concepts/models.md:357#0": (
        "gpu.models (a list) where the schema has gpu.model (a string)",
        ["$.spec.custom.hardware.gpu.models: unknown field"],
    ),
    "concepts/models.md:569#1": (
        "custom model without the required baseImage, and gpu.models instead of gpu.model",
        [
            "$.spec.model.custom.baseImage: required field missing",
            "$.spec.model.custom.hardware.gpu.models: unknown field",
        ],
    ),
    "concepts/runtime-config.md:303#0": (
        "spec.model.ref: the service model is chosen by name, image or custom",
        ["$.spec.model.ref: unknown field"],
    ),
    "concepts/templates.md:158#0": (
        "modelSources entries use name/sourceURI instead of modelId/sourceUri",
        [
            f"$.spec.modelSources[{i}].{msg}"
            for i in (0, 1)
            for msg in (
                "modelId: required field missing",
                "sourceUri: required field missing",
                "name: unknown field",
                "sourceURI: unknown field",
            )
        ],
    ),
}


# --- extraction ------------------------------------------------------------

_FENCE = re.compile(r"^([ \t]*)```ya?ml[^\n]*\n(.*?)^\1```", re.S | re.M)


def doc_examples() -> list[tuple[str, Any]]:
    """("<file>:<fence line>#<index>", document) for every YAML document in the docs."""
    out = []
    for path in sorted(DOCS.rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            indent = m.group(1)
            body = "\n".join(l.removeprefix(indent) for l in m.group(2).split("\n"))
            where = f"{path.relative_to(DOCS)}:{text.count(chr(10), 0, m.start()) + 1}"
            for n, document in enumerate(yaml.safe_load_all(body)):
                out.append((f"{where}#{n}", document))
    return out


_YAML_LINE = re.compile(r"""^(-( |$)|[\w./"'-]+:( |$)|#|---$)""")
_KEY = re.compile(r"""^([\w./-]+|"[^"]*"|'[^']*'):(?: +(.*))?$""")


def _unwrap(tp: Any) -> Any:
    """``X | None`` -> ``X``."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _child(tp: Any, key: str) -> tuple[bool, Any]:
    """Whether the object type ``tp`` declares ``key``, and the key's type."""
    tp = _unwrap(tp)
    if attrs.has(tp):
        for a in attrs.fields(tp):
            if json_name(a) == key:
                return True, a.type
    return False, None


def _free_form(tp: Any) -> bool:
    tp = _unwrap(tp)
    return tp is Any or typing.get_origin(tp) is dict


def reindent(lines: list[str], root: type) -> str | None:
    """Rebuild the indentation of a flattened YAML document from the model tree.

    A key goes into the innermost open object whose type declares it, else the
    innermost free-form map (metadata, labels...). Returns None when a line
    fits nowhere, so such documents are skipped rather than guessed.
    """
    stack: list[tuple[int, Any, bool]] = [(0, root, False)]  # indent, type, is_list
    out = []

    def open_value(indent: int, tp: Any) -> None:
        tp = _unwrap(tp)
        if typing.get_origin(tp) is list:
            stack.append((indent, typing.get_args(tp)[0], True))
        else:
            stack.append((indent, tp, False))

    for line in lines:
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.startswith("-"):
            item = text[1:].strip()
            m = _KEY.match(item)
            # The innermost open list whose items fit: objects declaring the key, or scalars.
            fits = [
                i
                for i, f in enumerate(stack)
                if f[2] and (_child(f[1], m.group(1))[0] if m else not attrs.has(_unwrap(f[1])))
            ]
            if not fits:
                return None
            del stack[fits[-1] + 1 :]
            indent, item_type, _ = stack[-1]
            out.append(" " * indent + "- " + item)
            if m:
                stack.append((indent + 2, item_type, False))
                if not m.group(2) or m.group(2).startswith("#"):
                    open_value(indent + 4, _child(item_type, m.group(1))[1])
            continue
        m = _KEY.match(text)
        if not m:
            return None
        key = m.group(1)
        typed = [i for i, f in enumerate(stack) if not f[2] and _child(f[1], key)[0]]
        loose = [i for i, f in enumerate(stack) if not f[2] and _free_form(f[1])]
        if typed:
            at = typed[-1]
            tp = _child(stack[at][1], key)[1]
        elif loose:
            at, tp = loose[-1], Any
        else:
            return None
        del stack[at + 1 :]
        indent = stack[at][0]
        out.append(" " * indent + text)
        if not m.group(2) or m.group(2).startswith("#"):
            open_value(indent + 2, tp)
    return "\n".join(out) + "\n"


def seed_examples() -> tuple[list[tuple[str, Any]], collections.Counter]:
    """AIM documents cut out of the seeds, plus counts of what was skipped."""
    out, skipped = [], collections.Counter()
    for path in sorted(SEEDS.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").split("\n")
        for start, line in enumerate(lines):
            m = re.match(r"^\s*apiVersion:\s*(\S+)\s*$", line)
            if not m or "aim." not in m.group(1):
                continue
            where = f"{path.name}:{start + 1}"
            if m.group(1).startswith(OLD_GROUP):
                skipped["old group aim.silogen.ai"] += 1
                continue
            end = start + 1
            while end < len(lines) and _YAML_LINE.match(lines[end].strip()) and lines[end].strip() != "---":
                end += 1
            block = lines[start:end]
            if any(l.startswith((" ", "\t")) for l in block):
                body = "\n".join(block)
            else:
                kind = next((l.split(":", 1)[1].strip() for l in block if l.startswith("kind:")), "")
                info = kind_info(kind)
                body = reindent(block, info.cls) if info else None
                if body is None:
                    skipped["not reconstructable"] += 1
                    continue
            out.append((where, yaml.safe_load(body)))
    return out, skipped


DOC_EXAMPLES = doc_examples() if DOCS.is_dir() else []
SEED_EXAMPLES, SEED_SKIPPED = seed_examples() if SEEDS.is_dir() else ([], collections.Counter())


def aim_examples(examples):
    return [(i, d) for i, d in examples if isinstance(d, dict) and d.get("apiVersion") == API_VERSION]


# --- tests -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("example", "document"),
    [pytest.param(i, d, id=i) for i, d in aim_examples(DOC_EXAMPLES + SEED_EXAMPLES)],
)
def test_example_round_trips(example, document):
    if example in BROKEN:
        reason, expected = BROKEN[example]
        with pytest.raises(ModelError) as caught:
            parse(copy.deepcopy(document))
        assert sorted(caught.value.errors) == sorted(expected), reason
        return
    assert unstructure(parse(copy.deepcopy(document))) == document


def test_examples_were_found():
    docs = aim_examples(DOC_EXAMPLES)
    seeds = aim_examples(SEED_EXAMPLES)
    kinds = collections.Counter(d["kind"] for _, d in docs + seeds)
    # 61 documents in the docs (5 of them broken upstream), 7 reconstructed from seed S4.
    assert len(docs) == 61
    assert len(seeds) == 7
    assert {i for i, _ in docs} >= set(BROKEN)
    assert set(kinds) >= {"AIMService", "AIMModel", "AIMClusterModel", "AIMRuntimeConfig"}
    assert SEED_SKIPPED == {"old group aim.silogen.ai": 7}


def test_seed_reconstruction_nests_by_the_model():
    flat = """apiVersion: aim.eai.amd.com/v1alpha1
kind: AIMClusterModelSource
metadata:
name: demo
labels:
team: ml
spec:
registry: docker.io # default
versions:
- ">=1.0.0"
filters:
- image: org/a
versions:
- ">=2.0.0"
exclude:
- org/b
- image: org/c
syncInterval: 1h""".split("\n")
    assert yaml.safe_load(reindent(flat, kind_info("AIMClusterModelSource").cls)) == {
        "apiVersion": API_VERSION,
        "kind": "AIMClusterModelSource",
        "metadata": {"name": "demo", "labels": {"team": "ml"}},
        "spec": {
            "registry": "docker.io",
            "versions": [">=1.0.0"],
            "filters": [
                {"image": "org/a", "versions": [">=2.0.0"], "exclude": ["org/b"]},
                {"image": "org/c"},
            ],
            "syncInterval": "1h",
        },
    }


def test_seed_reconstruction_refuses_unknown_keys():
    flat = ["apiVersion: aim.eai.amd.com/v1alpha1", "kind: AIMService", "spec:", "bogus: 1"]
    assert reindent(flat, kind_info("AIMService").cls) is None
