"""Checks of a model spec that the CRD schema cannot express (hostile and odd input).

Each problem is an InvalidSpec ``(reason, message)``: the model is Failed with
``ConfigValid`` False and nothing is created, instead of templates or mount
paths the API server (or a pod) would refuse or, worse, accept:

* ``InvalidModelSource``: a ``modelId`` whose name is ``.`` or ``..`` (it
  becomes the cache mount path ``/workspace/cache/<modelId>``), control
  characters or whitespace in ``modelId``/``sourceUri``, a scheme other than
  ``hf://`` or ``s3://``, or more than one source.
* ``MissingHardware``: inline sources without ``custom.hardware`` where a
  custom template sets none either (the CRD rule, for objects written around it).
* ``InvalidCustomTemplate``: a custom template name with control characters or
  ``/``, or two custom templates that would get the same name.

Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aim_core.reconcile.obj import spec_of

_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
_MODEL_ID = re.compile(r"[A-Za-z0-9_-]+/[A-Za-z0-9._-]+")
_SCHEMES = ("hf://", "s3://")

Problem = tuple[str, str]


def _source_problems(i: int, source: Mapping[str, Any]) -> list[Problem]:
    where = f"spec.modelSources[{i}]"
    model_id = source.get("modelId")
    uri = source.get("sourceUri")
    problems: list[Problem] = []
    if not isinstance(model_id, str) or not _MODEL_ID.fullmatch(model_id):
        problems.append(
            (
                "InvalidModelSource",
                f"{where}.modelId {model_id!r} must look like org/name "
                f"(letters, digits, '_', '-', and '.' in the name)",
            )
        )
    elif model_id.split("/", 1)[1].strip(".") == "":
        problems.append(
            (
                "InvalidModelSource",
                f"{where}.modelId {model_id!r}: the name cannot be '.' or '..' "
                f"(it becomes a path under the model cache)",
            )
        )
    if not isinstance(uri, str) or not uri.startswith(_SCHEMES) or len(uri) <= 5:
        problems.append(("InvalidModelSource", f"{where}.sourceUri {uri!r} must start with hf:// or s3://"))
    elif _CONTROL_OR_SPACE.search(uri):
        problems.append(("InvalidModelSource", f"{where}.sourceUri contains whitespace or control characters"))
    return problems


def spec_problems(model: Mapping[str, Any]) -> list[Problem]:
    """What is wrong with ``model``'s spec beyond the schema; empty when nothing."""
    spec = spec_of(model)
    problems: list[Problem] = []
    sources = spec.get("modelSources") or []
    if len(sources) > 1:
        problems.append(
            ("InvalidModelSource", f"spec.modelSources has {len(sources)} entries; exactly one is supported")
        )
    for i, source in enumerate(sources):
        problems += _source_problems(i, source if isinstance(source, Mapping) else {})
    templates = spec.get("customTemplates") or []
    has_base_hw = bool((spec.get("custom") or {}).get("hardware"))
    if sources and not has_base_hw and (not templates or any(not (t or {}).get("hardware") for t in templates)):
        problems.append(
            (
                "MissingHardware",
                "a model with spec.modelSources needs hardware: set custom.hardware "
                "(inherited by all templates) or hardware on every custom template",
            )
        )
    for i, entry in enumerate(templates):
        name = (entry or {}).get("name") or ""
        if name and (_CONTROL_OR_SPACE.search(name.strip()) or "/" in name):
            problems.append(
                (
                    "InvalidCustomTemplate",
                    f"spec.customTemplates[{i}].name {name!r} contains control characters, whitespace or '/'",
                )
            )
    return problems
