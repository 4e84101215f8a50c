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

from collections.abc import Mapping
from typing import Any

from aim_core.api.validation import Cause, metadata_causes, schema_causes
from aim_testing.emulator.errors import api_error

__all__ = ["Cause", "check_object", "invalid", "metadata_causes", "schema_causes"]


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
