"""Our CRDs are structural schemas an API server (1.26+) accepts, with the F3 rules in place.

``structural_errors`` is our own reading of the Kubernetes rules for
structural schemas and defaulting (apiextensions.k8s.io/v1). It is first
checked against the upstream CRDs (which real clusters accept) and against
broken schemas (which they reject), then applied to ours.
"""

import copy
import glob
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

UPSTREAM_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "upstream-crds"

_ALLOWED_KEYS = {
    "description", "type", "format", "title", "default", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "multipleOf", "enum", "maxProperties", "minProperties", "required", "items", "allOf", "oneOf",
    "anyOf", "not", "properties", "additionalProperties", "nullable", "example", "externalDocs",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-validations",
}  # fmt: skip
_TYPES = {"object", "array", "string", "integer", "number", "boolean"}
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_FORBIDDEN_IN_JUNCTORS = ("description", "type", "default", "additionalProperties", "nullable")


# ---------------------------------------------------------------------------
# translation to JSON Schema (used for defaults here and for the docs examples)


def to_jsonschema(node: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """Translate the Kubernetes OpenAPI subset into JSON Schema (draft 2020-12 keywords).

    With ``strict``, objects with ``properties`` reject unknown fields the way
    ``kubectl apply`` (server-side strict field validation) does.
    """
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key.startswith("x-kubernetes-") or key in ("nullable", "description", "default", "example"):
            continue
        if key == "properties":
            out[key] = {k: to_jsonschema(v, strict=strict) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = to_jsonschema(value, strict=strict)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [to_jsonschema(v, strict=strict) for v in value]
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    elif node.get("x-kubernetes-preserve-unknown-fields"):
        pass  # unknown fields are kept, so anything extra is allowed
    elif strict and "properties" in node and "additionalProperties" not in node:
        out["additionalProperties"] = False
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def accepts(node: dict[str, Any], value: Any) -> list[str]:
    """Messages of every way ``value`` fails ``node`` (empty when accepted)."""
    validator = jsonschema.Draft202012Validator(to_jsonschema(node))
    return [f"{'/'.join(map(str, e.absolute_path)) or '.'}: {e.message}" for e in validator.iter_errors(value)]


# ---------------------------------------------------------------------------
# structural-schema rules


def structural_errors(root: dict[str, Any]) -> list[str]:
    """Every violation of the structural-schema and defaulting rules in a CRD root schema."""
    errors: list[str] = []

    def err(path: str, msg: str) -> None:
        errors.append(f"{path or '.'}: {msg}")

    def walk(node: Any, path: str, *, in_junctor: bool = False, under_metadata: bool = False) -> None:
        if not isinstance(node, dict):
            err(path, f"schema must be an object, got {type(node).__name__}")
            return
        for key in node:
            if key not in _ALLOWED_KEYS:
                err(path, f"keyword {key!r} is not allowed")
        if node.get("uniqueItems"):
            err(path, "uniqueItems: true is not allowed")
        if in_junctor:
            for key in _FORBIDDEN_IN_JUNCTORS:
                if key in node:
                    err(path, f"{key!r} is not allowed inside allOf/anyOf/oneOf/not")
        else:
            typ = node.get("type")
            free = node.get("x-kubernetes-preserve-unknown-fields") is True
            ios = node.get("x-kubernetes-int-or-string") is True
            if ios:
                if typ:
                    err(path, "x-kubernetes-int-or-string must not have a type")
                for j in ("anyOf", "allOf"):
                    for alt in node.get(j, []):
                        if alt not in ({"type": "integer"}, {"type": "string"}) and "anyOf" not in alt:
                            err(path, f"int-or-string {j} may only list integer and string")
            elif not typ and not free:
                err(path, "type is missing")
            elif typ and typ not in _TYPES:
                err(path, f"unknown type {typ!r}")
            if "default" in node:
                check_default(node, path, under_metadata)
        if "properties" in node and "additionalProperties" in node:
            err(path, "properties and additionalProperties are mutually exclusive")
        if "additionalProperties" in node and not isinstance(node["additionalProperties"], dict):
            err(path, "additionalProperties must be a schema (true/false is not structural)")
        if (
            node.get("x-kubernetes-preserve-unknown-fields") is not None
            and node["x-kubernetes-preserve-unknown-fields"] is not True
        ):
            err(path, "x-kubernetes-preserve-unknown-fields may only be true")
        if "items" in node and not isinstance(node["items"], dict):
            err(path, "items must be a single schema")
        if ("properties" in node or "additionalProperties" in node) and node.get("type") not in (None, "object"):
            err(path, "properties on a non-object")
        if "items" in node and node.get("type") not in (None, "array"):
            err(path, "items on a non-array")
        if node.get("type") == "array" and "items" not in node and not in_junctor:
            err(path, "array without items")
        for name in node.get("required", []):
            if name not in node.get("properties", {}) and not in_junctor:
                err(path, f"required field {name!r} has no schema")
        if "enum" in node and node.get("type"):
            for v in node["enum"]:
                if not accepts({"type": node["type"]}, v) == []:
                    err(path, f"enum value {v!r} is not a {node['type']}")
        check_list_type(node, path)
        for rule in node.get("x-kubernetes-validations", []):
            if not rule.get("rule"):
                err(path, "validation rule without rule")
            if "\n" in rule.get("message", ""):
                err(path, "validation message contains a line break")
            for missing in cel_unknown_fields(node, rule.get("rule", "")):
                err(path, f"CEL rule refers to {missing}, which the schema does not declare")
        if "pattern" in node:
            check_pattern(node["pattern"], path)
        for name, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{name}", in_junctor=in_junctor, under_metadata=under_metadata)
        if isinstance(node.get("items"), dict):
            walk(node["items"], path + "[]", in_junctor=in_junctor, under_metadata=under_metadata)
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], path + "{}", in_junctor=in_junctor, under_metadata=under_metadata)
        for j in _JUNCTORS:
            if node.get("x-kubernetes-int-or-string") and j in ("anyOf", "allOf"):
                continue  # the one shape where junctors carry a type; checked above
            subs = node.get(j)
            for sub in [subs] if isinstance(subs, dict) else subs or []:
                walk(sub, f"{path}<{j}>", in_junctor=True, under_metadata=under_metadata)

    def check_default(node: dict[str, Any], path: str, under_metadata: bool) -> None:
        value = node["default"]
        if under_metadata:
            err(path, "defaults are not allowed under metadata")
        if node.get("x-kubernetes-preserve-unknown-fields") and not node.get("type"):
            err(path, "default on a free-form node without a type")
        if value is None and not node.get("nullable"):
            err(path, "null default on a non-nullable field")
        problems = accepts(node, value)
        if problems:
            err(path, f"default {value!r} does not validate: {problems}")

    def check_pattern(pattern: str, path: str) -> None:
        # The API server compiles patterns with Go's RE2: no lookaround, no backreferences.
        if re.search(r"\(\?<?[=!]|\\[1-9]", pattern):
            err(path, f"pattern {pattern!r} uses lookaround or backreferences (not RE2)")
        try:
            re.compile(pattern)
        except re.error as e:
            err(path, f"pattern {pattern!r} does not compile: {e}")

    def check_list_type(node: dict[str, Any], path: str) -> None:
        lt = node.get("x-kubernetes-list-type")
        keys = node.get("x-kubernetes-list-map-keys")
        if lt is None and keys:
            err(path, "x-kubernetes-list-map-keys without x-kubernetes-list-type: map")
        if lt is None:
            return
        if node.get("type") != "array":
            err(path, "x-kubernetes-list-type on a non-array")
            return
        items = node.get("items") or {}
        if lt not in ("atomic", "set", "map"):
            err(path, f"unknown list type {lt!r}")
        if lt == "set" and items.get("type") in ("object", "array"):
            err(path, "list-type set needs scalar items")
        if lt == "map":
            if items.get("type") != "object":
                err(path, "list-type map needs object items")
            if not keys:
                err(path, "list-type map without x-kubernetes-list-map-keys")
            for key in keys or []:
                prop = (items.get("properties") or {}).get(key)
                if prop is None:
                    err(path, f"list-map key {key!r} is not a property of the items")
                elif key not in items.get("required", []) and "default" not in prop:
                    err(path, f"list-map key {key!r} must be required or defaulted")
                elif prop.get("type") not in ("string", "integer", "number", "boolean"):
                    err(path, f"list-map key {key!r} must be a scalar")

    if root.get("type") != "object":
        err("", "root must be type: object")
    for key in ("nullable", "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource"):
        if root.get(key):
            err("", f"{key} is not allowed at the root")
    props = root.get("properties", {})
    for key in ("apiVersion", "kind"):
        if key in props and props[key].get("type") != "string":
            err("." + key, "must be a string")
    meta = props.get("metadata")
    if meta is not None:
        extra = set(meta) - {"type", "properties", "description"}
        if meta.get("type") != "object" or extra or set(meta.get("properties", {})) - {"name", "generateName"}:
            err(".metadata", "may only be type: object with restrictions on name/generateName")
    for name, child in props.items():
        walk(child, "." + name, under_metadata=(name == "metadata"))
    return errors


_SELF_PATH = re.compile(r"\b(?:self|oldSelf)((?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def cel_unknown_fields(node: dict[str, Any], rule: str) -> list[str]:
    """``self.a.b`` chains in a CEL rule that name no declared property.

    The API server type-checks rules against the schema at CRD creation, so a
    misspelt field makes the whole CRD fail to install. Chains are followed
    through objects and stop at lists, maps, free-form nodes and CEL functions.
    """
    missing = []
    for match in _SELF_PATH.finditer(rule):
        current = node
        for name in match[1].split(".")[1:]:
            if current.get("type") != "object" or "properties" not in current:
                break  # list/map macros and functions (all, exists, size) or free-form values
            props = current["properties"]
            if name not in props:
                missing.append(match[0])
                break
            current = props[name]
    return missing


# ---------------------------------------------------------------------------
# helpers over CRD documents


def load_upstream() -> dict[str, dict[str, Any]]:
    if not UPSTREAM_DIR.is_dir():
        pytest.skip(f"upstream reference CRDs not found at {UPSTREAM_DIR} (shared dir absent)")
    out = {}
    for f in sorted(glob.glob(os.path.join(UPSTREAM_DIR, "*.yaml"))):
        for doc in yaml.safe_load_all(open(f)):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                out[doc["spec"]["names"]["kind"]] = doc
    return out


def root_of(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def nodes(schema: dict[str, Any], path: str = ""):
    """Yield (path, node) for every node, with crdcompat-style paths (``.a.b``, ``[]``, ``{}``)."""
    yield path or ".", schema
    for name, child in (schema.get("properties") or {}).items():
        yield from nodes(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from nodes(schema["items"], path + "[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], path + "{}")


def at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    for p, node in nodes(schema):
        if p == path:
            return node
    raise KeyError(path)


def _norm(rule: str) -> str:
    return re.sub(r"\s+", "", rule)


def rules_at(schema: dict[str, Any], path: str) -> set[str]:
    return {_norm(r["rule"]) for r in at(schema, path).get("x-kubernetes-validations", [])}


@pytest.fixture(scope="module")
def ours() -> dict[str, dict[str, Any]]:
    from aim_core.api.crds import generate_crds

    return {d["spec"]["names"]["kind"]: d for d in generate_crds()}


# ---------------------------------------------------------------------------
# the validator itself


def test_validator_accepts_every_upstream_crd():
    for kind, crd in load_upstream().items():
        assert structural_errors(root_of(crd)) == [], kind


_OK = {"type": "object", "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "object", "properties": {"a": {"description": "no type"}}}, "type is missing"),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}},
            "mutually exclusive",
        ),
        ({"type": "array", "items": [{"type": "string"}]}, "single schema"),
        ({"type": "string", "enum": ["a"], "default": "b"}, "does not validate"),
        ({"type": "integer", "minimum": 1, "default": 0}, "does not validate"),
        ({"x-kubernetes-preserve-unknown-fields": True, "default": {}}, "free-form node without a type"),
        ({"type": "object", "additionalProperties": False}, "must be a schema"),
        ({"type": "string", "x-kubernetes-int-or-string": True}, "must not have a type"),
        (
            {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "must be required or defaulted",
        ),
        ({"type": "object", "properties": {"a": {"type": "string"}}, "$ref": "#/x"}, "not allowed"),
        ({"type": "string", "default": None}, "null default"),
        (
            {
                "type": "object",
                "properties": {"gpu": {"type": "object"}},
                "x-kubernetes-validations": [{"rule": "has(self.gpu) || has(self.cpu)", "message": "m"}],
            },
            "refers to self.cpu",
        ),
        ({"type": "string", "pattern": "^(?!x)"}, "lookaround"),
        ({"type": "string", "pattern": "^(a"}, "does not compile"),
    ],
)
def test_validator_rejects_non_structural_schemas(spec, expected):
    root = copy.deepcopy(_OK)
    root["properties"]["spec"] = spec
    problems = structural_errors(root)
    assert any(expected in p for p in problems), problems


def test_validator_rejects_defaults_and_fields_under_metadata():
    root = copy.deepcopy(_OK)
    root["properties"]["metadata"] = {"type": "object", "properties": {"labels": {"type": "object"}}}
    assert structural_errors(root)
    root["properties"]["metadata"] = {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}
    assert any("under metadata" in p for p in structural_errors(root))


# ---------------------------------------------------------------------------
# our CRDs


def test_our_crds_are_structural(ours):
    assert len(ours) == 12
    for kind, crd in ours.items():
        assert structural_errors(root_of(crd)) == [], kind


# Free-form nodes of ours that upstream does not have at all: the newer API's
# inline custom profile (spec D39), whose engineArgs is free-form JSON by design.
# Anything else free-form must be free-form upstream as well.
_CUSTOM_PROFILE = ".customProfile.engineArgs"
DECLARED_FREE_FORM: dict[str, set[str]] = {
    "AIMModel": {".spec.customTemplates[]" + _CUSTOM_PROFILE},
    "AIMClusterModel": {".spec.customTemplates[]" + _CUSTOM_PROFILE},
    "AIMServiceTemplate": {".spec" + _CUSTOM_PROFILE},
    "AIMClusterServiceTemplate": {".spec" + _CUSTOM_PROFILE},
}


def test_preserve_unknown_fields_only_on_free_form_nodes(ours):
    upstream = load_upstream()
    for kind, crd in ours.items():
        ours_free = {p for p, n in nodes(root_of(crd)) if n.get("x-kubernetes-preserve-unknown-fields")}
        up_free = (
            {p for p, n in nodes(root_of(upstream[kind])) if n.get("x-kubernetes-preserve-unknown-fields")}
            if kind in upstream
            else set()  # a kind beyond upstream (AIMBenchmark, AIMBenchmarkSweep): nothing free-form is declared
        )
        unexpected = ours_free - up_free - DECLARED_FREE_FORM.get(kind, set())
        assert not unexpected, f"{kind}: free-form where upstream has a typed schema: {sorted(unexpected)}"
        for path in DECLARED_FREE_FORM.get(kind, set()):
            assert path not in {p for p, _ in nodes(root_of(upstream[kind]))}, f"{kind} {path} exists upstream"
            assert path in ours_free, f"{kind}: declared free-form {path} is gone; drop it from DECLARED_FREE_FORM"
        assert up_free <= ours_free, f"{kind}: upstream free-form nodes we type: {sorted(up_free - ours_free)}"


def test_every_upstream_cel_rule_is_at_the_same_path(ours):
    upstream = load_upstream()
    for kind, crd in upstream.items():
        ours_root = root_of(ours[kind])
        for path, node in nodes(root_of(crd)):
            for r in node.get("x-kubernetes-validations", []):
                assert _norm(r["rule"]) in rules_at(ours_root, path), f"{kind} {path}: missing rule {r['rule']!r}"


IMMUTABLE = "self==oldSelf"
EXACTLY_ONE = "(has(self.name)?1:0)+(has(self.image)?1:0)+(has(self.custom)?1:0)==1"
GPU_OR_CPU = "has(self.gpu)||has(self.cpu)"


@pytest.mark.parametrize(
    ("kind", "path", "rule"),
    [
        ("AIMService", ".spec.model", EXACTLY_ONE),
        ("AIMService", ".spec.model", IMMUTABLE),
        ("AIMService", ".spec.template", IMMUTABLE),
        ("AIMService", ".spec.caching", IMMUTABLE),
        ("AIMService", ".spec.model.custom", "size(self.modelSources)>=1"),
        ("AIMService", ".spec.model.custom.hardware", GPU_OR_CPU),
        ("AIMService", ".spec.overrides.hardware", IMMUTABLE),
        ("AIMService", ".spec.overrides.metric", IMMUTABLE),
        ("AIMService", ".spec.overrides.precision", IMMUTABLE),
        ("AIMServiceTemplate", ".spec.modelName", IMMUTABLE),
        ("AIMServiceTemplate", ".spec.metric", IMMUTABLE),
        ("AIMServiceTemplate", ".spec.precision", IMMUTABLE),
        ("AIMServiceTemplate", ".spec.hardware", IMMUTABLE),
        ("AIMServiceTemplate", ".spec.hardware", GPU_OR_CPU),
        ("AIMClusterServiceTemplate", ".spec.modelName", IMMUTABLE),
        ("AIMClusterServiceTemplate", ".spec.hardware", IMMUTABLE),
        ("AIMArtifact", ".spec.sourceUri", IMMUTABLE),
    ],
)
def test_f3_rules_at_their_paths(ours, kind, path, rule):
    assert rule in rules_at(root_of(ours[kind]), path)


def test_gpu_model_and_min_vram_exclusive_everywhere_upstream_has_hardware(ours):
    for kind, crd in ours.items():
        for path, node in nodes(root_of(crd)):
            props = node.get("properties") or {}
            if "minVram" in props and "model" in props:
                assert any("minVram" in r["rule"] for r in node.get("x-kubernetes-validations", [])), f"{kind} {path}"


def test_f3_constraints(ours):
    svc = root_of(ours["AIMService"])
    assert at(svc, ".spec.minReplicas")["minimum"] == 1
    assert at(svc, ".spec.maxReplicas")["minimum"] == 1
    custom = at(svc, ".spec.model.custom")
    assert {"baseImage", "modelSources", "hardware"} <= set(custom["required"])
    assert (
        custom["properties"]["modelSources"].get("minItems"),
        custom["properties"]["modelSources"].get("maxItems"),
    ) == (1, 1)
    src = at(svc, ".spec.model.custom.modelSources[]")
    assert src["properties"]["modelId"]["pattern"] == "^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$"
    assert src["properties"]["sourceUri"]["pattern"] == "^(hf|s3)://[^ \\t\\r\\n]+$"
    assert "modelId" in src["required"]

    for kind in ("AIMServiceTemplate", "AIMClusterServiceTemplate"):
        spec = at(root_of(ours[kind]), ".spec")
        assert "modelName" in spec["required"]
        assert spec["properties"]["modelName"]["minLength"] == 1

    for kind in ("AIMModel", "AIMClusterModel"):
        spec = at(root_of(ours[kind]), ".spec")
        assert spec["properties"]["image"]["minLength"] == 1
        assert spec["properties"]["modelSources"]["maxItems"] == 1
        assert spec["properties"]["customTemplates"]["maxItems"] == 16
        tpl = spec["properties"]["customTemplates"]["items"]["properties"]
        assert tpl["name"]["maxLength"] == 63
        assert tpl["env"]["maxItems"] == 64

    art = at(root_of(ours["AIMArtifact"]), ".spec")
    assert "sourceUri" in art["required"]
    assert art["properties"]["modelId"]["pattern"] == "^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$"

    tc = at(root_of(ours["AIMTemplateCache"]), ".spec")
    assert {"templateName", "templateScope"} <= set(tc["required"])
    assert tc["properties"]["templateName"]["minLength"] == 1
    assert tc["properties"]["templateScope"]["enum"] == ["Namespace", "Cluster", "Unknown"]

    ms = at(root_of(ours["AIMClusterModelSource"]), ".spec")
    # Upstream HEAD requires filters; the newer API (S4, D41) adds images as the
    # alternative, enforced as exactly one of the two. Either way a source
    # without filters and without images is rejected.
    one_of = "(has(self.images)?1:0)+(has(self.filters)?1:0)==1"
    assert "filters" in ms.get("required", []) or one_of in rules_at(root_of(ours["AIMClusterModelSource"]), ".spec")
    assert (ms["properties"]["filters"]["minItems"], ms["properties"]["filters"]["maxItems"]) == (1, 100)
    assert ms["properties"]["filters"]["items"]["properties"]["image"]["maxLength"] == 512
    assert (ms["properties"]["maxModels"]["minimum"], ms["properties"]["maxModels"]["maximum"]) == (1, 10000)
