"""Find secret values where they must never appear: object status, Events, logs, process output.

A :class:`SecretScanner` is told the secrets of a test (passwords, tokens, keys) and
looks for each in every form it could take on its way out:

* as is, JSON-escaped and percent-encoded;
* base64 (standard and URL-safe alphabet) at each of the three byte alignments, so it
  is found also inside a longer base64 text (a ``.dockerconfigjson`` blob, a JWT);
* for a user and password: ``user:password`` in all those forms, which covers the
  HTTP Basic ``Authorization`` header and a docker config's ``auth`` field.

Bearer tokens a token service issued are added like any other secret.
:meth:`SecretScanner.scan_emulator` goes through every object the API emulator holds
(all but Secrets, which may hold them) and every request body sent to it (all but
writes of Secrets); :meth:`SecretScanner.scan_text` through captured logs and output.
A :class:`Leak` names where the secret was found and in which form, never its value.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

import attrs

__all__ = ["Leak", "SecretScanner", "base64_cores"]

MIN_LENGTH = 6  # shorter values would match by chance


@attrs.frozen
class Leak:
    """One secret found somewhere: which one (its label), in which form, where."""

    secret: str
    form: str
    where: str
    context: str  #: the text around the match, with the match masked

    def __str__(self) -> str:
        return f"{self.secret} ({self.form}) in {self.where}: ...{self.context}..."


def base64_cores(value: bytes) -> dict[str, str]:
    """The part of the base64 text of ``value`` that is the same wherever it starts in a longer text.

    Base64 maps 3 bytes to 4 characters, so text embedding ``value`` encodes it in one of
    three ways depending on its offset. For each offset the characters fully determined by
    ``value`` alone are kept (those mixing in neighbouring bytes or padding are dropped).
    """
    cores: dict[str, str] = {}
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value).decode()
        first = -(-8 * offset // 6)  # the first character whose 6 bits all come from value
        last = (8 * (offset + len(value)) - 6) // 6  # the last such character
        core = encoded[first : last + 1]
        if core:
            cores[f"base64@{offset}"] = core
            cores[f"base64url@{offset}"] = core.replace("+", "-").replace("/", "_")
    return cores


@attrs.define
class SecretScanner:
    """The secrets of one test and the places they must not appear."""

    needles: list[tuple[str, str, str]] = attrs.field(factory=list)  #: (label, form, text to look for)
    checked: list[str] = attrs.field(factory=list)  #: every place scanned, to show the scan covered something

    def add(self, label: str, value: str) -> SecretScanner:
        """A secret value: found as is, escaped, percent-encoded or in base64 at any alignment."""
        if len(value) < MIN_LENGTH:
            raise ValueError(f"secret {label!r} is too short to scan for reliably")
        forms = {"plain": value, "json": json.dumps(value)[1:-1], "percent-encoded": quote(value, safe="")}
        forms.update(base64_cores(value.encode()))
        seen: set[str] = set()
        for form, needle in forms.items():
            if needle not in seen:
                seen.add(needle)
                self.needles.append((label, form, needle))
        return self

    def add_login(self, label: str, username: str, password: str) -> SecretScanner:
        """A user and password: the password, and ``user:password`` (Basic auth, docker ``auth``)."""
        self.add(f"{label} password", password)
        return self.add(f"{label} basic auth", f"{username}:{password}")

    def add_many(self, label: str, values: Iterable[str]) -> SecretScanner:
        for i, value in enumerate(values):
            self.add(f"{label} #{i + 1}", value)
        return self

    # ------------------------------------------------------------------ scanning

    def scan_text(self, where: str, text: str) -> list[Leak]:
        self.checked.append(where)
        leaks = []
        for label, form, needle in self.needles:
            at = text.find(needle)
            if at >= 0:
                before, after = text[max(0, at - 60) : at], text[at + len(needle) : at + len(needle) + 60]
                leaks.append(Leak(label, form, where, f"{before}<{form} of {label}>{after}"))
        return leaks

    def scan_value(self, where: str, value: Any) -> list[Leak]:
        """A JSON-able value (an object, a status, a request body), dumped as the API would send it."""
        return self.scan_text(where, json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))

    def scan_emulator(self, emulator: Any) -> list[Leak]:
        """Every object the emulator holds and every request body it received, except Secrets.

        Events are objects there too, so their message, reason and note are covered.
        """
        leaks: list[Leak] = []
        for where, value in _emulator_contents(emulator):
            leaks += self.scan_value(where, value)
        return leaks


def _is_secret(resource: Any) -> bool:
    return getattr(resource, "plural", None) == "secrets" and not getattr(resource, "group", "")


def _emulator_contents(emulator: Any) -> Iterator[tuple[str, Any]]:
    for resource in emulator.resources:
        if _is_secret(resource):
            continue
        for obj in emulator.list_objects(resource):
            meta = obj.get("metadata") or {}
            name = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            yield f"{resource.plural} {name}", obj
    for request in emulator:
        if request.resource is not None and _is_secret(request.resource):
            continue
        body = request.data if request.data is not None else request.text
        if body:
            yield f"request {request.method.value} {request.url}", body
