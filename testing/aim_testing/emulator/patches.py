"""Patches: merge patch (RFC 7386, ``null`` deletes), JSON patch, strategic merge patch.

JSON patch ``test`` failures are 422; strategic merge patch works for built-in
types only (415 for custom resources, as the real server does). Server-side apply
is not a patch here: see :mod:`~aim_testing.emulator.fieldsets`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jsonpatch

from aim_testing.emulator.errors import api_error
from aim_testing.emulator.fieldsets import SET, item_key, list_keys

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def apply_patch(media_type: str, target: Any, patch: Any, *, strategic: bool) -> Any:
    """Patch ``target`` (a copy the caller owns) by the request's media type.

    :param strategic: whether the resource takes strategic merge patches (built-in types).
    """
    if media_type == MERGE:
        return merge_patch(target, patch)
    if media_type == JSON_PATCH:
        try:
            return jsonpatch.apply_patch(target, patch)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
            raise api_error(422, "Invalid", f"the JSON patch cannot be applied: {e}") from None
    if media_type == STRATEGIC and strategic:
        return strategic_merge_patch(target, patch)
    raise api_error(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format "
        f"- accepted media types include: {JSON_PATCH}, {MERGE}, {APPLY}",
    )


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: maps merge, ``null`` deletes, everything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any, field: str = "") -> Any:
    """Strategic merge patch, simplified: merge patch plus keyed merging of lists."""
    if isinstance(patch, Mapping):
        result = dict(target) if isinstance(target, Mapping) else {}
        for key, value in patch.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = strategic_merge_patch(result.get(key), value, key)
        return result
    if isinstance(patch, list) and isinstance(target, list):
        keys = list_keys(field, patch)
        if keys not in (None, SET) and list_keys(field, target) == keys:
            patched = {item_key(item, keys): item for item in patch}
            merged = [
                strategic_merge_patch(item, patched.pop(item_key(item, keys)))
                if item_key(item, keys) in patched
                else item
                for item in target
            ]
            return merged + list(patched.values())
    return copy.deepcopy(patch)
