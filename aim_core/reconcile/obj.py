"""The one alias for a Kubernetes object as controllers read it: a read-only JSON map.

Objects come from the API server or the store as plain maps; code that reads them takes ``Obj``
(never mutates it) and code that builds one returns ``dict[str, Any]``. Each kind's ``view``
module turns its own object into a small typed value (``aim_core.<kind>.view``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]

__all__ = ["Obj"]
