"""Container registries: image references, pull-secret credentials and the
calls controllers make (image metadata, tags, repositories).

Everything importable from here is free of HTTP clients, so plan code can use
:class:`ImageReference` and :func:`credentials_for`. The HTTP side lives in
:mod:`aim_core.registry.transport` and :mod:`aim_core.registry.oci`, reached
through the ``aim_registry_client`` hook.
"""

from aim_core.registry.credentials import InvalidPullSecret, credentials_for
from aim_core.registry.errors import ImageInfo, RegistryError
from aim_core.registry.facade import close_clients, fetch_image_info, list_repositories, list_tags
from aim_core.registry.patterns import repository_matches
from aim_core.registry.reference import DOCKER_HUB, ImageReference, InvalidImageReference

__all__ = [
    "DOCKER_HUB",
    "ImageInfo",
    "ImageReference",
    "InvalidImageReference",
    "InvalidPullSecret",
    "RegistryError",
    "close_clients",
    "credentials_for",
    "fetch_image_info",
    "list_repositories",
    "list_tags",
    "repository_matches",
]
