"""Where a service's inference pods may run (issue 20).

The rules (resolution per field, GPU node affinity combined with the user's,
GPU tolerations) are in :mod:`aim_core.runtimeconfig.placement`, shared with
the artifact Jobs; this module feeds them a service and its template.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.reconcile.obj import meta_of, spec_of, status_of
from aim_core.runtimeconfig import Placement, Resolution, resolve_placement

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
    meta = meta_of(service)
    owner = f"AIMService {meta.get('namespace')}/{meta.get('name')}"
    tmeta = meta_of(template)
    affinity = status_of(template).get("resolvedNodeAffinity")
    return resolve_placement(
        spec_of(service),
        config,
        resolution,
        owner=owner,
        gpu_node_affinity=affinity,
        gpu_affinity_source=f"template {tmeta.get('name')} status.resolvedNodeAffinity",
        resources=resources,
        gpu_resources=gpu_resources,
    )
