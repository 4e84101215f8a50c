"""Spec problems the API schema would have caught, found again by the converter.

Objects normally reach us already validated by the API server, but a CRD
installed from an older copy, or a status written by hand, can still carry
fields we do not understand. Those become an ``InvalidSpec`` condition naming
the JSON path, instead of a crash.
"""

from __future__ import annotations

from typing import Any

from aim_core.api.convert import ModelError, parse


def spec_problems(obj: dict[str, Any]) -> list[str]:
    """Messages for every problem under ``$.spec`` (empty when the spec structures cleanly)."""
    body = {k: v for k, v in obj.items() if k != "status"}
    try:
        parse(body)
    except ModelError as exc:
        return [e for e in exc.errors if e.startswith("$.spec")] or list(exc.errors)
    return []
