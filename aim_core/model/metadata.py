"""Image labels → ``status.imageMetadata`` (F21, spec 2.9).

An AIM image describes itself in its config labels. AIM keys are read with the
prefix ``com.amd.aim.`` first and ``org.amd.silogen.`` as the fallback; the
OCI keys are the ``org.opencontainers.image.*`` ones. Every raw label is kept
in ``originalLabels``. An image without any of these labels is fine: its
metadata is simply empty and no templates are expected from it.

``model.recommendedDeployments`` comes in three spellings in the wild: a JSON
array, JSON objects separated by commas without the brackets, and Python-style
dicts with single quotes. All three are read. Each entry is normalised (GPU
count as an integer, metric and precision lower-cased); an entry whose values a
template could not carry (unknown precision, negative count, ...) is kept out
of the templates and named in :attr:`ParsedMetadata.problems`.

Pure: a mapping of labels in, a value out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.api.common import METRICS, PRECISIONS

AIM_PREFIXES = ("com.amd.aim.", "org.amd.silogen.")
OCI_PREFIX = "org.opencontainers.image."
OCI_KEYS = (
    "title",
    "description",
    "licenses",
    "vendor",
    "authors",
    "source",
    "documentation",
    "created",
    "revision",
    "version",
)

# (status key, label key without prefix, kind)
_MODEL_KEYS = (
    ("canonicalName", "model.canonicalName", "text"),
    ("source", "model.source", "text"),
    ("title", "title", "text"),
    ("descriptionFull", "description.full", "text"),
    ("releaseNotes", "release.notes", "text"),
    ("tags", "model.tags", "list"),
    ("versions", "model.versions", "list"),
    ("variants", "model.variants", "list"),
    ("hfTokenRequired", "hfToken.required", "bool"),
)
_DEPLOYMENT_KEYS = ("model.recommendedDeployments", "model.deployments")  # the second is the older spelling (D5)

MAX_LABEL_BYTES = 256 * 1024  # all labels together; a status larger than this is refused by etcd sooner or later
_MAX_GPU_MODEL = 64
_MAX_GPU_COUNT = 2**31 - 1
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TRUE = {"true", "yes", "1", "y", "on"}
_FALSE = {"false", "no", "0", "n", "off"}


class InvalidMetadata(ValueError):
    """Image labels that cannot be read as AIM metadata; the message says which and why."""


@attrs.frozen
class ParsedMetadata:
    """``status.imageMetadata`` (wire format) and what was wrong with individual entries.

    :ivar metadata: ``{"model": {...}, "oci": {...}, "originalLabels": {...}}``;
        empty sub-objects are left out.
    :ivar deployments: the recommended deployments templates can be made from.
    :ivar problems: one line per recommended deployment that was left out, and why.
    """

    metadata: dict[str, Any]
    deployments: tuple[dict[str, Any], ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def canonical_name(self) -> str:
        return ((self.metadata.get("model") or {}).get("canonicalName")) or ""


def _aim_label(labels: Mapping[str, str], key: str) -> str | None:
    for prefix in AIM_PREFIXES:
        value = labels.get(prefix + key)
        if value is not None:
            return value
    return None


def _as_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _as_bool(text: str) -> bool | None:
    folded = text.strip().lower()
    if folded in _TRUE:
        return True
    if folded in _FALSE:
        return False
    return None


# ---------------------------------------------------------------- recommended deployments


def _pythonish_to_json(text: str) -> str:
    """Single-quoted dicts with Python literals → JSON (quotes swapped outside double-quoted strings)."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote is None:
            if c in "'\"":
                quote = c
                out.append('"')
            else:
                out.append(c)
        elif c == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 1
        elif c == quote:
            quote = None
            out.append('"')
        elif c == '"':  # a double quote inside a single-quoted string
            out.append('\\"')
        else:
            out.append(c)
        i += 1
    joined = "".join(out)
    return re.sub(r"\b(True|False|None)\b", lambda m: {"True": "true", "False": "false", "None": "null"}[m[1]], joined)


def parse_deployments(text: str) -> list[Any]:
    """The entries of a ``recommendedDeployments`` label; raises :class:`InvalidMetadata`."""
    stripped = text.strip()
    if not stripped:
        return []
    attempts = [stripped, f"[{stripped}]"]
    pythonish = _pythonish_to_json(stripped)
    attempts += [pythonish, f"[{pythonish}]"]
    for attempt in attempts:
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return [value]
        if isinstance(value, list):
            return value
    raise InvalidMetadata(
        "label model.recommendedDeployments is neither a JSON array of objects, nor comma-separated objects, "
        "nor Python-style dicts"
    )


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
        return int(value)
    return None


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def normalize_deployment(entry: Any) -> tuple[dict[str, Any], str | None]:
    """One recommended deployment in wire form, and why a template cannot be made from it (or None)."""
    if not isinstance(entry, dict):
        return {}, f"is a {type(entry).__name__}, not an object"
    out: dict[str, Any] = {}
    problem: str | None = None
    gpu_model = _text(entry.get("gpuModel"))
    if gpu_model:
        out["gpuModel"] = gpu_model
        if len(gpu_model) > _MAX_GPU_MODEL or _CONTROL.search(gpu_model):
            problem = (
                f"gpuModel {gpu_model[:80]!r} is longer than {_MAX_GPU_MODEL} characters or has control characters"
            )
    raw_count = entry.get("gpuCount")
    if raw_count is not None and raw_count != "":
        count = _count(raw_count)
        if count is None or count < 0 or count > _MAX_GPU_COUNT:
            problem = problem or f"gpuCount {raw_count!r} is not a whole number of GPUs"
        else:
            out["gpuCount"] = count
    for key, allowed in (("metric", METRICS), ("precision", PRECISIONS)):
        value = _text(entry.get(key))
        if value:
            out[key] = value.lower()
            if value.lower() not in allowed:
                problem = problem or f"{key} {value!r} is not one of {', '.join(allowed)}"
    for key in ("profileId", "description"):
        value = _text(entry.get(key))
        if value:
            out[key] = value
            if key == "profileId" and _CONTROL.search(value):
                problem = problem or "profileId has control characters"
    return out, problem


# ---------------------------------------------------------------- labels


def parse_labels(labels: Mapping[str, str] | None) -> ParsedMetadata:
    """Read ``status.imageMetadata`` from image config labels; raises :class:`InvalidMetadata`.

    Only a ``recommendedDeployments`` label that cannot be read at all, or labels
    too large to keep in status, raise: everything else degrades to "not set".
    """
    labels = {str(k): str(v) for k, v in (labels or {}).items()}
    size = sum(len(k.encode()) + len(v.encode()) for k, v in labels.items())
    if size > MAX_LABEL_BYTES:
        raise InvalidMetadata(f"the image labels take {size} bytes, more than the {MAX_LABEL_BYTES} a status can hold")
    model: dict[str, Any] = {}
    for status_key, label_key, kind in _MODEL_KEYS:
        raw = _aim_label(labels, label_key)
        if raw is None:
            continue
        if kind == "text":
            if raw.strip():
                model[status_key] = raw.strip()
        elif kind == "list":
            items = _as_list(raw)
            if items:
                model[status_key] = items
        else:
            flag = _as_bool(raw)
            if flag is not None:
                model[status_key] = flag
    deployments: list[dict[str, Any]] = []
    usable: list[dict[str, Any]] = []
    problems: list[str] = []
    raw_deployments = next((v for v in (_aim_label(labels, k) for k in _DEPLOYMENT_KEYS) if v is not None), None)
    if raw_deployments is not None:
        for i, entry in enumerate(parse_deployments(raw_deployments)):
            normalized, problem = normalize_deployment(entry)
            if normalized:
                deployments.append(normalized)
            if problem is not None:
                problems.append(f"recommended deployment #{i + 1} {problem}")
            elif normalized:
                usable.append(normalized)
    if deployments:
        model["recommendedDeployments"] = deployments
    oci = {key: labels[OCI_PREFIX + key].strip() for key in OCI_KEYS if (labels.get(OCI_PREFIX + key) or "").strip()}
    metadata: dict[str, Any] = {}
    if model:
        metadata["model"] = model
    if oci:
        metadata["oci"] = oci
    metadata["originalLabels"] = dict(sorted(labels.items()))
    return ParsedMetadata(metadata, tuple(usable), tuple(problems))


def from_object(metadata: Mapping[str, Any] | None, where: str = "spec.imageMetadata") -> ParsedMetadata:
    """Metadata already in wire form: ``spec.imageMetadata`` (air-gapped clusters, F22) or a cached status.

    It is used as is; the recommended deployments are checked like label ones,
    so a typo in the spec is reported instead of becoming a template the API
    server refuses.
    """
    data = dict(metadata or {})
    usable: list[dict[str, Any]] = []
    problems: list[str] = []
    for i, entry in enumerate(((data.get("model") or {}).get("recommendedDeployments")) or []):
        normalized, problem = normalize_deployment(entry)
        if problem is not None:
            problems.append(f"{where} recommended deployment #{i + 1} {problem}")
        elif normalized:
            usable.append(normalized)
    return ParsedMetadata(data, tuple(usable), tuple(problems))
