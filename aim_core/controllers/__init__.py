"""The controllers the operator runs."""

from __future__ import annotations

from typing import Any

from aim_core.controller import Controller


def build_controllers(plugins: Any = None, settings: Any = None) -> list[Controller]:
    """A fresh instance of every controller, in start-up order (``settings``: the operator's Settings)."""
    from aim_core.controllers.artifacts import ArtifactController
    from aim_core.controllers.modelsources import ClusterModelSourceController
    from aim_core.controllers.runtimeconfigs import ClusterRuntimeConfigController, RuntimeConfigController
    from aim_core.controllers.models import ClusterModelController, ModelController
    from aim_core.controllers.services import ServiceController
    from aim_core.model.fetch import ImageFetcher
    from aim_core.controllers.templatecaches import TemplateCacheController
    from aim_core.controllers.templates import ClusterTemplateController, DiscoverySlots, TemplateController

    images = ImageFetcher()  # one cache of image metadata for both model scopes
    slots = DiscoverySlots()  # one discovery-Job limit for both template scopes
    return [
        RuntimeConfigController(),
        ClusterRuntimeConfigController(),
        TemplateCacheController(),
        ArtifactController(getattr(settings, "artifact_download_image", None)),
        TemplateController(plugins, slots),
        ClusterTemplateController(plugins, slots),
        ServiceController(plugins, gpu_preference=getattr(settings, "gpu_preference", ())),
        ClusterModelSourceController(),
        ModelController(plugins, images),
        ClusterModelController(plugins, images),
    ]
