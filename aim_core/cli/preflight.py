"""``aim-engine render``'s preflight: what the API server would refuse, and what render would skip.

Before anything is planned, every document read is checked as ``kubectl apply`` would have it
checked: AIM kinds against the CRDs this project generates (:mod:`aim_core.api.crds`) with the
shared validator (:mod:`aim_core.api.validation`: types, enums, patterns, bounds, required fields,
list keys, the CEL rules it can evaluate) after the schema's defaults, and every object's name by
Kubernetes' rules. A refused object is reported with the API server's message and nothing is
planned from it. Warnings: an ``aim.eai.amd.com`` kind or version that does not exist (with a
"did you mean"), fields the schema does not know (the API server drops them), and the same object
given twice (the later one is used).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.cli.inputs import Document

GROUP = "aim.eai.amd.com"
_BUILTIN_ALIASES = {
    "Node": ("nodes", "no"),
    "Namespace": ("namespaces", "ns"),
    "Pod": ("pods", "po"),
}


@attrs.frozen
class Finding:
    """A refusal or a warning about one document (``field``: where in it, when known)."""

    doc: Document
    message: str
    field: str = ""

    @property
    def where(self) -> str:
        return self.doc.at(self.field) if self.field else self.doc.where

    def line(self) -> str:
        return f"{self.where}: {self.message}"


@attrs.define
class Preflight:
    accepted: list[Document] = attrs.Factory(list)
    refused: list[Finding] = attrs.Factory(list)
    warnings: list[Finding] = attrs.Factory(list)


@functools.cache
def crds() -> dict[str, dict[str, Any]]:
    """The project's CRDs by kind."""
    from aim_core.api.crds import generate_crds

    return {c["spec"]["names"]["kind"]: c for c in generate_crds()}


def _schema(crd: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    for v in crd["spec"].get("versions") or ():
        if v.get("name") == version:
            return (v.get("schema") or {}).get("openAPIV3Schema")
    return None


@functools.cache
def kind_aliases() -> dict[str, str]:
    """Every way ``--kind`` may name a kind (any case): kind, plural, singular, short names."""
    aliases: dict[str, str] = {}
    for kind, crd in crds().items():
        names = crd["spec"]["names"]
        for alias in (kind, names.get("plural"), names.get("singular"), *(names.get("shortNames") or ())):
            if alias:
                aliases[alias.lower()] = kind
    for kind, more in _BUILTIN_ALIASES.items():
        for alias in (kind, *more):
            aliases[alias.lower()] = kind
    return aliases


def resolve_kinds(names: Iterable[str]) -> tuple[set[str], list[str]]:
    """``--kind`` values as kinds, and a message for each that names no kind."""
    aliases = kind_aliases()
    kinds, problems = set(), []
    for name in names:
        for part in name.split(","):
            key = part.strip().lower()
            if not key:
                continue
            if key in aliases:
                kinds.add(aliases[key])
                continue
            close = difflib.get_close_matches(key, list(aliases), n=1, cutoff=0.6)
            hint = f"; did you mean {aliases[close[0]]}?" if close else ""
            problems.append(f"--kind {part.strip()}: not a kind render reports{hint}")
    return kinds, problems


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return f"; did you mean {lowered[close[0]]}?" if close else ""


def refusal(kind: str, name: str, causes: Sequence[Mapping[str, str]]) -> str:
    """The API server's 422 message: ``Kind.group "name" is invalid: field: message``."""
    problems = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
    listed = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
    return f'{kind}.{GROUP} "{name}" is invalid: {listed}'


def check(docs: Sequence[Document]) -> Preflight:
    """Sort ``docs`` into those render plans from, those the API server would refuse, and warnings."""
    from aim_core.api.common import API_VERSION
    from aim_core.api.structural import prune_and_default, unknown_fields
    from aim_core.api.validation import metadata_causes, object_causes

    out = Preflight()
    known = crds()
    seen: dict[tuple[str, str, str, str], Document] = {}
    for doc in docs:
        obj = doc.obj
        api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        group, _, version = api_version.rpartition("/")
        meta = obj.get("metadata") or {}
        name = str(meta.get("name"))
        if group == GROUP or (kind.startswith("AIM") and kind in known):
            if kind not in known:
                out.warnings.append(
                    Finding(doc, f"{kind} is not a kind of {GROUP}{did_you_mean(kind, list(known))} (skipped)")
                )
                continue
            if api_version != API_VERSION:
                out.warnings.append(
                    Finding(
                        doc, f"{kind}: apiVersion {api_version} is not served; did you mean {API_VERSION}? (skipped)"
                    )
                )
                continue
            schema = _schema(known[kind], version)
            stored = prune_and_default(obj, schema or {})
            causes = object_causes(stored, schema)
            if causes:
                out.refused.append(Finding(doc, refusal(kind, name, causes), causes[0]["field"]))
                continue
            for field in unknown_fields(obj, schema or {}):
                out.warnings.append(
                    Finding(doc, f'{kind} {name}: unknown field "{field}" (the API server drops it)', _plain(field))
                )
        else:
            causes = metadata_causes(obj, creating=True)
            if causes:
                out.refused.append(
                    Finding(doc, refusal(kind, name, causes).replace(f".{GROUP}", "", 1), causes[0]["field"])
                )
                continue
        key = (group, kind, str(meta.get("namespace") or ""), name)
        if key in seen:
            first = seen[key]
            out.warnings.append(Finding(doc, f"{kind} {_ident(obj)} is also at {first.where}; this later one is used"))
            out.accepted = [d for d in out.accepted if d is not first]
        seen[key] = doc
        out.accepted.append(doc)
    return out


def _ident(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else str(meta.get("name"))


def _plain(field: str) -> str:
    """``spec.env[1].nme`` as kube-openapi names it: ``spec.env.nme``."""
    import re

    return re.sub(r"\[\d+\]", "", field)
