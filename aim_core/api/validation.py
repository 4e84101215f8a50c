"""What a real API server refuses on a write (422 Invalid), as pure functions over dicts.

Shared by the API emulator of the tests and ``aim-engine render`` (which reports an object the API
server would refuse instead of planning from it). The checks:

* object metadata (apimachinery's ObjectMeta validation): ``metadata.name`` a DNS-1123 subdomain
  (lower-case alphanumerics, ``-`` and ``.``, alphanumeric at both ends, at most 253 characters);
  label keys and values;
* a custom resource against its CRD's structural schema, at any depth, as kube-apiserver 1.24
  (kube-openapi's validator) reports it, by a field path without array indices: ``required``
  (``Required value``), ``enum`` (``Unsupported value``), ``type`` (nothing below a wrong type is
  checked), ``minimum``/``maximum``, ``minLength``/``maxLength``, ``pattern``, ``minItems``/``maxItems``
  (``Invalid value``);
* on request (``list_keys=True``): ``x-kubernetes-list-type: map`` keys and ``set`` items given twice
  (``Duplicate value``), and (``rules=True``) the ``x-kubernetes-validations`` rules that
  :mod:`aim_core.api.cel` can evaluate, other than transition rules (``self == oldSelf``).

Not checked: ``format``, ``multipleOf``, ``uniqueItems``, properties counts, ``allOf``/``anyOf``/
``oneOf``/``not``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Cause", "metadata_causes", "object_causes", "schema_causes"]

_SUBDOMAIN_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_QUALIFIED_FMT = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = f"({_QUALIFIED_FMT})?"
_SUBDOMAIN = re.compile(_SUBDOMAIN_FMT)
_QUALIFIED = re.compile(_QUALIFIED_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)

Cause = dict[str, str]  # {"reason", "message", "field"}, as in a Status's details.causes


def cause(field: str, message: str, kind: str) -> Cause:
    """One problem as a Status's ``details.causes`` entry; ``kind`` is its reason (``FieldValueInvalid``, ...):
    the API server's, not a condition reason of ours."""
    return {"reason": kind, "message": message, "field": field}


_QUALIFIED_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_QUALIFIED_EXAMPLES = ("MyName", "my.name", "123-abc")


def _regex_error(message: str, regex: re.Pattern[str], *examples: str) -> str:
    shown = ",  or ".join(f"'{e}'" for e in examples)
    return f"{message} (e.g. {shown}, regex used for validation is '{regex.pattern}')"


def _format_errors(value: str, max_length: int, regex: re.Pattern[str], message: str, *examples: str) -> list[str]:
    """What the API server says of a string longer than ``max_length`` and of one ``regex`` does not match."""
    errors = []
    if len(value) > max_length:
        errors.append(f"must be no more than {max_length} characters")
    if not regex.fullmatch(value):
        errors.append(_regex_error(message, regex, *examples))
    return errors


def _subdomain_errors(value: str) -> list[str]:
    return _format_errors(
        value,
        253,
        _SUBDOMAIN,
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character",
        "example.com",
    )


def _qualified_name_errors(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QUALIFIED_MESSAGE, _QUALIFIED, *_QUALIFIED_EXAMPLES)
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
    errors += ["name part " + e for e in _format_errors(name, 63, _QUALIFIED, _QUALIFIED_MESSAGE, *_QUALIFIED_EXAMPLES)]
    return errors


def _label_value_errors(value: Any) -> list[str]:
    if not isinstance(value, str):
        return ["must be a string"]
    return _format_errors(
        value,
        63,
        _LABEL_VALUE,
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character",
        "MyValue",
        "my_value",
        "12345",
    )


def _invalid(field: str, value: Any, detail: str) -> Cause:
    return cause(field, f"Invalid value: {json.dumps(value)}: {detail}", "FieldValueInvalid")


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


def schema_causes(
    value: Any, schema: Mapping[str, Any] | None, path: str, *, list_keys: bool = False, rules: bool = False
) -> list[Cause]:
    """Every violation of ``schema`` by ``value`` (at any depth), as kube-openapi reports them.

    ``path`` is where ``value`` is ("" for a whole object, "status" for a status write).
    ``list_keys``: also duplicate keys of list-maps and items of sets; ``rules``: also the CEL rules
    :mod:`aim_core.api.cel` evaluates (both as a kube-apiserver with CEL validation does, after the
    structural checks).
    """
    found: list[Cause] = []
    _walk(value, schema or {}, path, found, _Extras(list_keys, rules))
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
    return cause(path, f"Invalid value: {_go(value)}: {path} {message}", "FieldValueInvalid")


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
        causes.append(cause(path, message, "FieldValueNotSupported"))
    return causes, True


class _Extras:
    __slots__ = ("list_keys", "rules")

    def __init__(self, list_keys: bool, rules: bool) -> None:
        self.list_keys = list_keys
        self.rules = rules


_NO_EXTRAS = _Extras(False, False)


def _walk(value: Any, schema: Mapping[str, Any], path: str, found: list[Cause], extras: _Extras = _NO_EXTRAS) -> None:
    if path:  # the root is the object itself (kind, apiVersion, metadata): the server checks it otherwise
        causes, typed = _value_causes(value, schema, path)
        found += causes
        if not typed:
            return  # a wrong type: nothing below it is checked
    if extras.rules and schema.get("x-kubernetes-validations"):
        found += _rule_causes(value, schema, path)
    if isinstance(value, list):
        items = schema.get("items")
        if extras.list_keys:
            found += _list_causes(value, schema, path)
        if isinstance(items, Mapping):
            for item in value:
                if item is not None:
                    _walk(item, items, path, found, extras)  # kube-openapi names no index
        return
    if not isinstance(value, Mapping):
        return
    props: Mapping[str, Any] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    prefix = f"{path}." if path else ""
    if isinstance(extra, Mapping):  # the values of a map first, then the properties, then required (its order)
        for key, sub in value.items():
            if key not in props and sub is not None:
                _walk(sub, extra, prefix + key, found, extras)
    for key, child in props.items():
        if value.get(key) is not None and isinstance(child, Mapping):
            _walk(value[key], child, prefix + key, found, extras)
    for key in schema.get("required") or ():
        if key not in value or (value[key] is None and not (props.get(key) or {}).get("nullable")):
            found.append(cause(prefix + key, "Required value", "FieldValueRequired"))


def _list_causes(value: list[Any], schema: Mapping[str, Any], path: str) -> list[Cause]:
    """Duplicate entries of a ``map`` list (by its keys) or a ``set`` list, as the API server reports them."""
    kind = schema.get("x-kubernetes-list-type")
    seen: set[str] = set()
    causes = []
    for item in value:
        if kind == "map" and isinstance(item, Mapping):
            key = {k: item.get(k) for k in schema.get("x-kubernetes-list-map-keys") or ()}
            shown = json.dumps(key, sort_keys=True)
            if shown in seen:
                causes.append(cause(path, f"Duplicate value: {shown}", "FieldValueDuplicate"))
            seen.add(shown)
        elif kind == "set":
            shown = json.dumps(item, sort_keys=True)
            if shown in seen:
                message = f"Duplicate value: {_go(item)}"
                causes.append(cause(path, message, "FieldValueDuplicate"))
            seen.add(shown)
    return causes


def _rule_causes(value: Any, schema: Mapping[str, Any], path: str) -> list[Cause]:
    from aim_core.api.cel import CelUnsupported, evaluate

    causes = []
    for rule in schema.get("x-kubernetes-validations") or ():
        text = (rule.get("rule") or "").strip()
        if "oldSelf" in text:  # a transition rule: only an update has an old object
            continue
        try:
            ok = evaluate(text, value)
        except CelUnsupported:
            continue
        if ok is False:
            message = rule.get("message") or f"failed rule: {text}"
            causes.append(cause(path or "<root>", f'Invalid value: "object": {message}', "FieldValueInvalid"))
    return causes


def object_causes(obj: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[Cause]:
    """What the API server would refuse in a new ``obj`` under ``schema``: metadata, schema, list keys, rules."""
    causes = metadata_causes(obj, creating=True)
    if not (obj.get("metadata") or {}).get("name"):
        message = "Required value: name or generateName is required"
        causes.append(cause("metadata.name", message, "FieldValueRequired"))
    if schema is not None:
        causes += schema_causes(obj, schema, "", list_keys=True, rules=True)
    return causes
