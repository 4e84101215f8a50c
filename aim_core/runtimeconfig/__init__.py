"""AIMRuntimeConfig and AIMClusterRuntimeConfig (F17-F19).

* :mod:`.resolution` -- a kind's ``spec.runtimeConfigName`` looked up, namespace over cluster,
  merged into one :class:`Resolution` (pure; every other kind uses it, through this package);
* :mod:`.controller` -- the controllers that validate a config and publish its merged view.

Other kinds import only the names below.
"""

from aim_core.runtimeconfig.resolution import Resolution, config_name, pvc_headroom_percent, resolve, routing_enabled

__all__ = ["Resolution", "config_name", "pvc_headroom_percent", "resolve", "routing_enabled"]
