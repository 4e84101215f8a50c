"""What a real API server refuses on a write with 422 Invalid: malformed metadata, objects that break their schema.

Object metadata (apimachinery's ObjectMeta validation), on every client write:

* ``metadata.name`` on create: a DNS-1123 subdomain (lower-case alphanumerics, ``-``
  and ``.``, starting and ending alphanumeric, at most 253 characters);
* label keys: an optional DNS-1123 subdomain prefix and ``/``, then a name of at
  most 63 characters (alphanumerics, ``-``, ``_``, ``.``; alphanumeric at both ends);
* label values: empty, or at most 63 characters of the same alphabet.

A custom resource against its CRD's structural schema, at any depth: under
``properties``, in every item of an array (``items``) and every value of a map
(``additionalProperties``), as kube-apiserver 1.24 (kube-openapi's validator)
reports it, by a field path without array indices (``spec.adapters.sourceUri``;
a map value's key is a path segment: ``status.artifacts.a.model``), each problem once:

* a missing ``required`` field: ``FieldValueRequired``, ``Required value``;
* a value not in ``enum``: ``FieldValueNotSupported``,
  ``Unsupported value: "X": supported values: "A", "B"``;
* a wrong ``type`` (nothing below it is checked then), ``minimum``/``maximum``
  (and exclusive), ``minLength``/``maxLength``, ``pattern``, ``minItems``/``maxItems``:
  ``FieldValueInvalid``, e.g. ``Invalid value: 0: spec.minReplicas in body should be
  greater than or equal to 1``.

Not checked: ``format``, ``multipleOf``, ``uniqueItems``, properties counts,
``allOf``/``anyOf``/``oneOf``/``not``, list-type uniqueness and CEL rules other than the
immutability ones (:mod:`~aim_testing.emulator.immutable`).
A write to the ``status`` subresource validates ``status`` only; any other write
validates the whole object (a main-resource update carries the stored status).
The checks run on the stored form (after pruning and defaulting), so ``null`` in
a field that is not ``nullable`` counts as missing.

Everything found is one 422 with the real body: ``Kind.group "name" is invalid: ...``
(the problems in brackets when there are several), ``details.causes`` with each
problem's ``reason``, ``message`` and ``field``. Seeding with ``put_object`` is not checked,
so tests can still start from odd states.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from aim_testing.emulator.errors import api_error

_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_QUALIFIED_FMT = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_QUALIFIED_FMT})?"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_QUALIFIED = re.compile(_QUALIFIED_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)

Cause = dict[str, str]  # {"reason", "message", "field"}, as in a Status's details.causes


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{fmt}')"


def _subdomain_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not _SUBDOMAIN.fullmatch(value):
        errors.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                _SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errors


def _qualified_name_errors(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character",
                _QUALIFIED_FMT,
                "MyName",
                "my.name",
                "123-abc",
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors = []
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += ["prefix part " + e for e in _subdomain_errors(prefix)]
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QUALIFIED.fullmatch(name):
        errors.append(
            "name part "
            + _regex_error(
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character",
                _QUALIFIED_FMT,
                "MyName",
                "my.name",
                "123-abc",
            )
        )
    return errors


def _label_value_errors(value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["must be a string"]
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.fullmatch(value):
        errors.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                "and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errors


def _invalid(field: str, value: Any, detail: str) -> Cause:
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {json.dumps(value)}: {detail}", "field": field}


def metadata_causes(obj: Mapping[str, Any], *, creating: bool) -> list[Cause]:
    """What ObjectMeta validation finds wrong with ``obj``'s name (on create) and labels."""
    meta = obj.get("metadata") or {}
    causes = []
    name = meta.get("name")
    if creating and isinstance(name, str) and name:
        causes += [_invalid("metadata.name", name, e) for e in _subdomain_errors(name)]
    for key, value in (meta.get("labels") or {}).items():
        causes += [_invalid("metadata.labels", key, e) for e in _qualified_name_errors(key)]
        causes += [_invalid("metadata.labels", value, e) for e in _label_value_errors(value)]
    return causes


def schema_causes(value: Any, schema: Mapping[str, Any] | None, path: str) -> list[Cause]:
    """Every violation of ``schema`` by ``value`` (at any depth), as kube-openapi reports them.

    ``path`` is where ``value`` is ("" for a whole object, "status" for a status write).
    """
    found: list[Cause] = []
    _walk(value, schema or {}, path, found)
    unique: dict[str, Cause] = {}
    for cause in found:
        unique.setdefault(f"{cause['field']}: {cause['message']}", cause)
    return list(unique.values())


_JSON_TYPES = ((bool, "boolean"), (str, "string"), (Mapping, "object"), (list, "array"))


def _json_type(value: Any) -> str:
    for python, name in _JSON_TYPES:
        if isinstance(value, python):
            return name
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return "number" if isinstance(value, float) else "null"


def _go(value: Any) -> str:
    """A value as ``field.Invalid`` prints it: strings quoted, numbers and booleans plain."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return json.dumps(value) if isinstance(value, str) else str(value)


def _bad(path: str, value: Any, message: str) -> Cause:
    return {"reason": "FieldValueInvalid", "message": f"Invalid value: {_go(value)}: {path} {message}", "field": path}


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:  # Go syntax Python does not read: not checked
        return True


def _value_causes(value: Any, schema: Mapping[str, Any], path: str) -> tuple[list[Cause], bool]:
    """Type, bounds, lengths, pattern and enum of one value, with kube-openapi's messages, and whether its
    type is right (after a wrong type nothing else is checked)."""
    want = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        want = None
    have = _json_type(value)
    if want and have != want and not (want == "number" and have == "integer"):
        return [_bad(path, have, f'in body must be of type {want}: "{have}"')], False
    causes = []
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            causes.append(_bad(path, value, f"in body should be at most {schema['maxLength']} chars long"))
        if "minLength" in schema and len(value) < schema["minLength"]:
            causes.append(_bad(path, value, f"in body should be at least {schema['minLength']} chars long"))
        if "pattern" in schema and not _matches(schema["pattern"], value):
            causes.append(_bad(path, value, f"in body should match '{schema['pattern']}'"))
    elif isinstance(value, int | float) and not isinstance(value, bool):
        high, low = schema.get("maximum"), schema.get("minimum")
        if high is not None and (value >= high if schema.get("exclusiveMaximum") else value > high):
            rel = "less than" if schema.get("exclusiveMaximum") else "less than or equal to"
            causes.append(_bad(path, value, f"in body should be {rel} {_go(high)}"))
        if low is not None and (value <= low if schema.get("exclusiveMinimum") else value < low):
            rel = "greater than" if schema.get("exclusiveMinimum") else "greater than or equal to"
            causes.append(_bad(path, value, f"in body should be {rel} {_go(low)}"))
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            causes.append(_bad(path, len(value), f"in body should have at most {schema['maxItems']} items"))
        if "minItems" in schema and len(value) < schema["minItems"]:
            causes.append(_bad(path, len(value), f"in body should have at least {schema['minItems']} items"))
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        shown = ", ".join(json.dumps(v if isinstance(v, str) else json.dumps(v)) for v in enum)
        message = f"Unsupported value: {_go(value)}: supported values: {shown}"
        causes.append({"reason": "FieldValueNotSupported", "message": message, "field": path})
    return causes, True


def _walk(value: Any, schema: Mapping[str, Any], path: str, found: list[Cause]) -> None:
    if path:  # the root is the object itself (kind, apiVersion, metadata): the server checks it otherwise
        causes, typed = _value_causes(value, schema, path)
        found += causes
        if not typed:
            return  # a wrong type: nothing below it is checked
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in value:
                if item is not None:
                    _walk(item, items, path, found)  # kube-openapi names no index
        return
    if not isinstance(value, Mapping):
        return
    props: Mapping[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    prefix = f"{path}." if path else ""
    if isinstance(extra, Mapping):  # the values of a map first, then the properties, then required (its order)
        for key, sub in value.items():
            if key not in props and sub is not None:
                _walk(sub, extra, prefix + key, found)
    for key, child in props.items():
        if value.get(key) is not None and isinstance(child, Mapping):
            _walk(value[key], child, prefix + key, found)
    for key in schema.get("required") or ():
        if key not in value or (value[key] is None and not (props.get(key) or {}).get("nullable")):
            found.append({"reason": "FieldValueRequired", "message": "Required value", "field": prefix + key})


def invalid(kind: str, group: str | None, name: str, causes: list[Cause]) -> Exception:
    """422 Invalid with the API server's body: ``Kind.group "name" is invalid: ...`` and the causes."""
    problems = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
    listed = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {**({"name": name} if name else {}), **({"group": group} if group else {})}
    details.update(kind=kind, causes=causes)
    return api_error(422, "Invalid", f'{qualified} "{name}" is invalid: {listed}', **details)


def check_object(
    kind: str,
    group: str | None,
    obj: Mapping[str, Any],
    schema: Mapping[str, Any] | None,
    *,
    creating: bool,
    status_only: bool = False,
) -> None:
    """422 Invalid, as the API server answers, when ``obj``'s metadata is malformed or it lacks a required field.

    ``status_only``: a write to the status subresource, where only ``status`` is checked against the schema.
    """
    causes = metadata_causes(obj, creating=creating)
    if schema is not None:
        if status_only:
            status_schema = (schema.get("properties") or {}).get("status")
            if obj.get("status") is not None and isinstance(status_schema, Mapping):
                causes += schema_causes(obj["status"], status_schema, "status")
        else:
            causes += schema_causes(obj, schema, "")
    if causes:
        raise invalid(kind, group, (obj.get("metadata") or {}).get("name") or "", causes)
