"""The discovery container's output read into a profile and model sources, or the problem with it (F35). Pure."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from aim_core.api.common import METRICS, PRECISIONS, PROFILE_TYPES
from aim_core.template.quantities import format_binary


@attrs.frozen
class DiscoveryResult:
    """What discovery found: ``status.profile`` and ``status.modelSources``."""

    profile: dict[str, Any]
    sources: list[dict[str, Any]]


@attrs.frozen
class OutputProblem:
    """Why the output cannot be used: a reason for the condition and a message saying what is wrong."""

    reason: str
    message: str


EMPTY, MALFORMED, INCOMPLETE, INVALID = (
    "DiscoveryOutputEmpty",
    "DiscoveryOutputMalformed",
    "DiscoveryOutputIncomplete",
    "DiscoveryOutputInvalid",
)

_MODEL_ID = re.compile(r"^[a-zA-Z0-9_-]+/[a-zA-Z0-9._-]+$")
_SOURCE_URI = re.compile(r"^(hf|s3)://[^\s]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clip_text(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arrays(text: str) -> tuple[list[Any], int | None]:
    """Top-level JSON arrays in ``text``, left to right; and where an unterminated one starts, if any."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    cut: int | None = None
    i = text.find("[")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            ends = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
            if cut is None and ends and text[i + 1 :].lstrip()[:1] in ("{", ""):
                cut = i
            i = text.find("[", i + 1)
            continue
        if isinstance(value, list):
            found.append(value)
        i = text.find("[", end)
    return found, cut


def parse_output(text: str) -> DiscoveryResult | OutputProblem:
    """Read the discovery container's log (see the module docstring for the reasons)."""
    if not text.strip():
        return OutputProblem(
            EMPTY,
            "the discovery container printed nothing; the image may not be an AIM image "
            "or does not support 'dry-run --format=json'",
        )
    arrays, cut = _arrays(text)
    if not arrays:
        if cut is not None:
            return OutputProblem(
                INCOMPLETE,
                f"the discovery output stops before its JSON array closes (log cut off "
                f"or the container was killed): {clip_text(text[cut:])}",
            )
        return OutputProblem(MALFORMED, f"the discovery output holds no JSON array: {clip_text(text)}")
    found = [a for a in arrays if a]
    if not found:
        return OutputProblem(
            EMPTY,
            "discovery found no profile for this template (it printed an empty list); "
            "check spec.metric, spec.precision, spec.hardware and spec.profileId",
        )
    element = found[-1][0]
    if not isinstance(element, Mapping):
        return OutputProblem(
            MALFORMED, f"the discovery output's first element is not an object: {clip_text(json.dumps(element))}"
        )
    missing = [
        k
        for k in ("profile", "models")
        if not isinstance(element.get(k), (Mapping, list))
        or (k == "profile" and not isinstance(element.get(k), Mapping))
        or (k == "models" and not isinstance(element.get(k), list))
    ]
    if missing:
        return OutputProblem(
            INCOMPLETE, f"the discovery output lacks {' and '.join(missing)}: {clip_text(json.dumps(element))}"
        )
    sources = []
    for index, entry in enumerate(element["models"]):
        source = _model_source(index, entry)
        if isinstance(source, OutputProblem):
            return source
        sources.append(source)
    return DiscoveryResult(_profile(element), sources)


def _model_source(index: int, entry: Any) -> dict[str, Any] | OutputProblem:
    where = f"models[{index}]"
    if not isinstance(entry, Mapping) or not entry.get("name") or not entry.get("source"):
        return OutputProblem(
            INCOMPLETE,
            f"{where} of the discovery output lacks name or source: {clip_text(json.dumps(entry, default=str))}",
        )
    name, uri = str(entry["name"]), str(entry["source"])
    segments = name.split("/")
    if not _MODEL_ID.match(name) or any(s in (".", "..") for s in segments) or _CONTROL.search(name):
        return OutputProblem(
            INVALID,
            f"{where}: model id {name!r} is not of the form org/name (letters, digits, "
            "'.', '_', '-'; no '.' or '..' segments)",
        )
    if not _SOURCE_URI.match(uri) or _CONTROL.search(uri) or "/../" in f"{uri}/":
        return OutputProblem(INVALID, f"{where}: source {uri!r} is not an hf:// or s3:// URI without '..' segments")
    source: dict[str, Any] = {"modelId": name, "sourceUri": uri}
    size = entry.get("size_gb")
    if size is not None:
        if (
            isinstance(size, bool)
            or not isinstance(size, (int, float))
            or not math.isfinite(size)
            or size < 0
            or size > 2**20
        ):
            return OutputProblem(INVALID, f"{where}: size_gb {size!r} is not a size in GiB")
        source["size"] = format_binary(int(round(size * 1024**3)))
    return source


def _enum(value: Any, allowed: Sequence[str]) -> str | None:
    text = str(value).strip().lower() if value is not None else ""
    return text if text in allowed else None


def _profile(element: Mapping[str, Any]) -> dict[str, Any]:
    raw = element["profile"]
    meta = raw.get("metadata") if isinstance(raw.get("metadata"), Mapping) else {}
    metadata: dict[str, Any] = {}
    for key in ("engine", "gpu"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            metadata[key] = meta[key].strip()
    count = meta.get("gpu_count")
    if isinstance(count, int) and not isinstance(count, bool) and 0 <= count < 2**31:
        metadata["gpuCount"] = count
    for key, allowed in (("metric", METRICS), ("precision", PRECISIONS), ("type", PROFILE_TYPES)):
        value = _enum(meta.get(key), allowed)
        if value:
            metadata[key] = value
    profile: dict[str, Any] = {"metadata": metadata, "originalDiscoveryOutput": dict(element)}
    if isinstance(raw.get("engine_args"), Mapping):
        profile["engine_args"] = dict(raw["engine_args"])
    env = raw.get("env_vars")
    if isinstance(env, Mapping):
        profile["env_vars"] = {str(k): str(v) for k, v in env.items()}
    return profile
