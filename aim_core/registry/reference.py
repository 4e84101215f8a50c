"""Image references: parsing and the canonical form (:mod:`aim_core.plugin.imageref`).

:class:`ImageReference` is part of the plugin API (a registry client takes one), so it is defined
beside the plugin host, below this package; the registry code and the kinds import it from here.
"""

from __future__ import annotations

from aim_core.plugin.imageref import DOCKER_HUB, ImageReference, InvalidImageReference, normalize_registry

__all__ = ["DOCKER_HUB", "ImageReference", "InvalidImageReference", "normalize_registry"]
