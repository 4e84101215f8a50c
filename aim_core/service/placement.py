"""Where a service's inference pods may run (issue 20).

The rules (resolution per field, GPU node affinity combined with the user's,
GPU tolerations) are in :mod:`aim_core.runtimeconfig.placement`, shared with
the artifact Jobs; this module feeds them a service and its template.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.runtimeconfig import Placement, Resolution, resolve_placement
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView

__all__ = ["Placement", "service_placement"]


def service_placement(
    service: Mapping[str, Any],
    template: Mapping[str, Any],
    config: Mapping[str, Any],
    resolution: Resolution | None,
    resources: Mapping[str, Any],
    gpu_resources: Iterable[str],
) -> Placement:
    """The placement of a service's inference pods (see :func:`resolve_placement`)."""
    view, tview = ServiceView.of(service), TemplateView.of(template)
    return resolve_placement(
        view.spec,
        config,
        resolution,
        owner=f"AIMService {view.namespace}/{view.name}",
        gpu_node_affinity=tview.resolved_node_affinity,
        gpu_affinity_source=f"template {tview.name} status.resolvedNodeAffinity",
        resources=resources,
        gpu_resources=gpu_resources,
    )
