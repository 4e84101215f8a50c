"""Environment-variable layering (F17, F49, 2.6).

Env lists are lists of ``corev1.EnvVar`` dicts (``name``, ``value`` or
``valueFrom``), carried through whole. A higher layer replaces a same-named
entry *in place* and appends new names. ``AIM_ENGINE_ARGS`` is special: when
both sides' ``value`` parse as JSON objects they are deep-merged (higher layer
wins per key, nested objects merge); otherwise the higher entry simply replaces
the lower one. A malformed value is not an error here; :func:`engine_args_problems`
lets the owner of the layer report it as a condition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aim_core.reconcile.gojson import go_marshal

__all__ = ["ENGINE_ARGS", "deep_merge", "engine_args_problems", "layer_env", "merge_env"]

ENGINE_ARGS = "AIM_ENGINE_ARGS"

EnvVar = Mapping[str, Any]

_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def deep_merge(low: Mapping[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    """``high`` over ``low``; where both hold an object under a key, merge those recursively."""
    merged = dict(low)
    for key, value in high.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _json_object(entry: EnvVar) -> dict[str, Any] | None:
    value = entry.get("value")
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _combine(low: EnvVar, high: EnvVar) -> dict[str, Any]:
    if high.get("name") == ENGINE_ARGS:
        low_args, high_args = _json_object(low), _json_object(high)
        if low_args is not None and high_args is not None:
            return {**high, "value": go_marshal(deep_merge(low_args, high_args))}
    return dict(high)


def merge_env(
    base: Sequence[EnvVar], overlay: Iterable[EnvVar], *, merge_engine_args: bool = True
) -> list[dict[str, Any]]:
    """``overlay`` over ``base``: same name → replaced at the first such position; new names appended.

    The merged ``AIM_ENGINE_ARGS`` JSON is written compactly with sorted keys, as
    Go's ``json.Marshal`` of a map writes it. With ``merge_engine_args=False``
    it is replaced like any variable (the higher value verbatim).
    """
    result = [dict(e) for e in base]
    for entry in overlay:
        index = next((i for i, e in enumerate(result) if e.get("name") == entry.get("name")), None)
        if index is None:
            result.append(dict(entry))
        else:
            result[index] = _combine(result[index], entry) if merge_engine_args else dict(entry)
    return result


def layer_env(*layers: Iterable[EnvVar] | None) -> list[dict[str, Any]]:
    """Merge layers from lowest to highest precedence; the result is sorted by name.

    ``None`` layers are skipped. Upstream *appends* ``AIM_PROFILE_ID``,
    ``AIM_METRIC`` and ``AIM_PRECISION`` without merging (F49), which can leave a
    name twice; passed as a layer here they merge instead, since a duplicate env
    name is rejected by server-side apply.
    """
    result: list[dict[str, Any]] = []
    for layer in layers:
        if layer:
            result = merge_env(result, layer)
    return sorted(result, key=lambda e: e.get("name", ""))


def engine_args_problems(env: Iterable[EnvVar] | None) -> list[str]:
    """Messages for ``AIM_ENGINE_ARGS`` values that are not JSON objects (empty list when fine).

    Such a value still works (it replaces lower layers), but it cannot be merged
    with them; the owner of ``env`` can surface the message in a condition.
    """
    problems = []
    for entry in env or ():
        value = entry.get("value")
        if entry.get("name") != ENGINE_ARGS or not isinstance(value, str) or not value.strip():
            continue
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            problems.append(f"{ENGINE_ARGS} is not valid JSON ({exc}); it replaces lower layers instead of merging")
            continue
        if not isinstance(parsed, dict):
            kind = _JSON_KINDS.get(type(parsed), "value")
            problems.append(f"{ENGINE_ARGS} must be a JSON object, got a JSON {kind}; it replaces lower layers")
    return problems
