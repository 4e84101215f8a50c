"""Object metadata a real API server refuses (apimachinery's ObjectMeta validation).

* ``metadata.name``: a DNS-1123 subdomain (lower-case alphanumerics, ``-`` and
  ``.``, starting and ending alphanumeric, at most 253 characters);
* label keys: an optional DNS-1123 subdomain prefix and ``/``, then a name of at
  most 63 characters (alphanumerics, ``-``, ``_``, ``.``; alphanumeric at both ends);
* label values: empty, or at most 63 characters of the same alphabet.

Every client write (create, update, patch, apply) is checked; ``put_object``
seeding is not, so tests can still start from odd states.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aim_testing.emulator.errors import api_error

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def _problems(meta: Mapping[str, Any], creating: bool) -> list[str]:
    problems = []
    name = meta.get("name")
    if creating and isinstance(name, str) and name and (len(name) > 253 or not _SUBDOMAIN.fullmatch(name)):
        problems.append(
            f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 subdomain must consist of "
            "lower case alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character"
        )
    for key, value in (meta.get("labels") or {}).items():
        prefix, _, label = key.rpartition("/")
        if (
            (prefix and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)))
            or len(label) > 63
            or not _QUALIFIED.fullmatch(label)
        ):
            problems.append(
                f"metadata.labels: Invalid value: {key!r}: name part must be 63 characters or less "
                "and consist of alphanumeric characters, '-', '_' or '.'"
            )
        if not isinstance(value, str) or (value and (len(value) > 63 or not _QUALIFIED.fullmatch(value))):
            problems.append(
                f"metadata.labels: Invalid value: {value!r}: a valid label must be an empty string "
                "or consist of at most 63 alphanumeric characters, '-', '_' or '.', starting and "
                "ending with an alphanumeric character"
            )
    return problems


def check_metadata(kind: str, obj: Mapping[str, Any], *, creating: bool) -> None:
    """422 Invalid, as the API server answers, when ``obj``'s name or labels are malformed."""
    meta = obj.get("metadata") or {}
    problems = _problems(meta, creating)
    if problems:
        name = meta.get("name") or ""
        raise api_error(422, "Invalid", f'{kind} "{name}" is invalid: ' + ", ".join(problems), name=name, kind=kind)
