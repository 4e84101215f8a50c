"""What a registry call returns: :class:`ImageInfo`, or a :class:`RegistryError` (:mod:`aim_core.plugin.registryerrors`).

Both are part of the plugin API (a registry client returns or raises them), so they are defined beside
the plugin host, below this package; the registry code and the kinds import them from here.
"""

from __future__ import annotations

from aim_core.plugin.registryerrors import KINDS, PERMANENT, ImageInfo, Kind, RegistryError, redact

__all__ = ["KINDS", "PERMANENT", "ImageInfo", "Kind", "RegistryError", "redact"]
