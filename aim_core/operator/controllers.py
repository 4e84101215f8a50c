"""The controllers the operator runs."""

from __future__ import annotations

from typing import Any

from aim_core.runtime.controller import Controller


def build_controllers(plugins: Any = None, settings: Any = None) -> list[Controller]:
    """A fresh instance of every controller, in start-up order (``settings``: the operator's Settings)."""
    from aim_core.artifact.controller import ArtifactController
    from aim_core.benchmark.controller import BenchmarkController
    from aim_core.benchmarksweep.controller import BenchmarkSweepController
    from aim_core.model.controller import ClusterModelController, ModelController
    from aim_core.model.fetch import ImageFetcher
    from aim_core.modelsource.controller import ClusterModelSourceController
    from aim_core.runtimeconfig.controller import ClusterRuntimeConfigController, RuntimeConfigController
    from aim_core.service.controller import ServiceController
    from aim_core.template.controller import ClusterTemplateController, DiscoverySlots, TemplateController
    from aim_core.templatecache.controller import TemplateCacheController

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
        BenchmarkSweepController(),
        BenchmarkController(plugins),
    ]
