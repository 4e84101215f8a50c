"""AIMRuntimeConfig and AIMClusterRuntimeConfig (F17-F19).

* :mod:`.resolution` -- a kind's ``spec.runtimeConfigName`` looked up, namespace over cluster,
  merged into one :class:`Resolution` (pure; every other kind uses it, through this package);
* :mod:`.placement` -- node selector, tolerations and affinity from a config, applied to pods;
* :mod:`.controller` -- the controllers that validate a config and publish its merged view.

Other kinds import only the names below.
"""

from aim_core.runtimeconfig.placement import Placement, apply_to_pod, resolve_placement
from aim_core.runtimeconfig.resolution import (
    DEFAULT_UNUSED_ADAPTER_RETENTION,
    Resolution,
    config_name,
    pvc_headroom_percent,
    resolve,
    routing_enabled,
    unused_adapter_retention,
)

__all__ = [
    "DEFAULT_UNUSED_ADAPTER_RETENTION",
    "Placement",
    "Resolution",
    "apply_to_pod",
    "config_name",
    "pvc_headroom_percent",
    "resolve",
    "resolve_placement",
    "routing_enabled",
    "unused_adapter_retention",
]
