"""Which model sources a template cache caches, and the storage settings it passes on (issue 20). Pure.

* ``spec.modelSources`` of the cache, when set, are used instead of the
  template's ``status.modelSources``: a hand-written cache with its own
  sources caches those (upstream ignores the field).
* ``spec.downloadFilter`` and ``spec.pvcHeadroomPercent`` (set by a service
  from its ``spec.storage``, or by hand) are copied to the artifacts the cache
  creates, hashed into their names, and required of artifacts it reuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STORAGE_KEYS = ("downloadFilter", "pvcHeadroomPercent")


def cache_sources(cache: Mapping[str, Any], template: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The cache's own ``spec.modelSources`` if any, else the template's ``status.modelSources``."""
    own = (cache.get("spec") or {}).get("modelSources")
    if own:
        return list(own)
    return list(((template or {}).get("status") or {}).get("modelSources") or [])
