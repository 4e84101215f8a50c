"""Validate built objects against a CustomResourceDefinition's OpenAPI schema, in tests.

The API server checks objects against a CRD's structural schema; this module
does the same checks with :mod:`jsonschema` so that builders can be tested
without a server. The Kubernetes extensions are translated:

- ``x-kubernetes-int-or-string`` -> integer or string;
- ``x-kubernetes-preserve-unknown-fields`` -> unknown fields allowed there;
- every other object schema with ``properties`` -> unknown fields rejected
  (the server would prune them silently, or reject them under strict field
  validation; either way a typo such as ``podMetric`` must fail a test);
- ``x-kubernetes-embedded-resource`` -> ``apiVersion``/``kind``/``metadata`` allowed;
- ``nullable`` -> ``null`` allowed;
- ``x-kubernetes-list-type: map`` / ``set`` -> duplicate keys / items rejected.

Not checked: CEL rules (``x-kubernetes-validations``), formats, defaulting,
and ``metadata`` beyond it being an object (the server validates ObjectMeta
itself).

Third-party CRD files are found by :func:`third_party_crd`, which looks in
``$AIM_THIRD_PARTY_CRDS``, then ``crds/third_party`` in the repository, then
``../shared/crds/third_party`` beside the repository.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["CrdValidationError", "crd_errors", "crd_schema", "load_crd", "third_party_crd", "validate_against_crd"]

ENV_CRD_DIR = "AIM_THIRD_PARTY_CRDS"
_SEARCH = (
    Path(__file__).resolve().parents[2] / "crds" / "third_party",
    Path(__file__).resolve().parents[3] / "shared" / "crds" / "third_party",
)


class CrdValidationError(AssertionError):
    """An object does not satisfy a CRD schema; the message lists every violation by path."""


def third_party_crd(filename: str) -> Path:
    """Path of a third-party CRD file such as ``keda.sh_scaledobjects.yaml``.

    :raises FileNotFoundError: no search location has the file.
    """
    dirs = [Path(os.environ[ENV_CRD_DIR])] if os.environ.get(ENV_CRD_DIR) else []
    dirs += list(_SEARCH)
    for directory in dirs:
        candidate = directory / filename
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"CRD {filename} not found in {', '.join(map(str, dirs))} (set ${ENV_CRD_DIR})")


@functools.cache
def load_crd(path: str) -> Mapping[str, Any]:
    """The CustomResourceDefinition in ``path``, parsed once (shared: do not change it)."""
    with open(path, encoding="utf-8") as fh:
        crd = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # the big CRDs load 10x faster
    if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
        raise ValueError(f"{path} is not a CustomResourceDefinition")
    return crd


@functools.cache
def crd_schema(path: str | os.PathLike[str], version: str | None = None) -> Mapping[str, Any]:
    """The JSON schema of ``version`` (default: the storage version) of the CRD in ``path``."""
    crd = load_crd(str(path))
    versions = crd["spec"]["versions"]
    if version is None:
        chosen = next((v for v in versions if v.get("storage")), versions[0])
    else:
        chosen = next((v for v in versions if v["name"] == version), None)
        if chosen is None:
            names = ", ".join(v["name"] for v in versions)
            raise ValueError(f"{path} has no version {version!r} (it has {names})")
    return _translate(copy.deepcopy(chosen["schema"]["openAPIV3Schema"]), top=True)


def _translate(schema: dict[str, Any], *, top: bool = False) -> dict[str, Any]:
    for key in ("properties", "patternProperties"):
        for name, sub in list((schema.get(key) or {}).items()):
            schema[key][name] = _translate(sub)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            schema[key] = _translate(schema[key])
    for key in ("allOf", "anyOf", "oneOf"):
        if key in schema:
            schema[key] = [_translate(sub) for sub in schema[key]]

    if schema.get("x-kubernetes-int-or-string"):
        schema.pop("type", None)
        schema.setdefault("anyOf", [{"type": "integer"}, {"type": "string"}])
    if schema.get("nullable") and "type" in schema:
        schema["type"] = [schema["type"], "null"]
    if schema.get("x-kubernetes-embedded-resource"):
        props = schema.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    if top:
        props = schema.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props["metadata"] = {"type": "object"}
    if (
        schema.get("type") == "object"
        and "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        schema["additionalProperties"] = False
    return schema


def _list_type(validator: Any, list_type: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    if not isinstance(instance, list):
        return
    if list_type == "set":
        seen: list[Any] = []
        for item in instance:
            if item in seen:
                yield jsonschema.ValidationError(f"duplicate entry {item!r} in a list of type set")
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or ()
        props = (schema.get("items") or {}).get("properties") or {}
        seen_keys: set[str] = set()
        for item in instance:
            if not isinstance(item, dict):
                continue
            key = repr(tuple(item.get(k, (props.get(k) or {}).get("default")) for k in keys))
            if key in seen_keys:
                pairs = ", ".join(f"{k}={item.get(k, (props.get(k) or {}).get('default'))!r}" for k in keys)
                yield jsonschema.ValidationError(f"duplicate entry with {pairs} in a list keyed by {list(keys)}")
            seen_keys.add(key)


_Validator = jsonschema.validators.extend(jsonschema.Draft4Validator, {"x-kubernetes-list-type": _list_type})


def crd_errors(obj: Mapping[str, Any], crd_path: str | os.PathLike[str], version: str | None = None) -> list[str]:
    """Every schema violation of ``obj`` as ``"$.path: message"``; empty when it is valid.

    ``version`` defaults to the version in ``obj['apiVersion']``.
    """
    if version is None and isinstance(obj.get("apiVersion"), str):
        version = obj["apiVersion"].rpartition("/")[2]
    schema = crd_schema(str(crd_path), version)
    kind = load_crd(str(crd_path))["spec"]["names"]["kind"]
    errors = []
    if obj.get("kind") != kind:
        errors.append(f"$.kind: expected {kind!r}, got {obj.get('kind')!r}")
    for error in sorted(_Validator(schema).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        errors.append(f"{path}: {error.message}")
    return errors


def validate_against_crd(obj: Mapping[str, Any], crd_path: str | os.PathLike[str], version: str | None = None) -> None:
    """Raise :class:`CrdValidationError` listing every violation when ``obj`` does not fit the CRD."""
    errors = crd_errors(obj, crd_path, version)
    if errors:
        name = (obj.get("metadata") or {}).get("name", "?")
        listing = "\n  ".join(errors)
        raise CrdValidationError(f"{obj.get('kind')} {name} does not match {Path(crd_path).name}:\n  {listing}")
