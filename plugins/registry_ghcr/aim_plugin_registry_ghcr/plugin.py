"""Hook implementations of the registry_ghcr plugin."""

from aim_core import hookimpl
from aim_plugin_registry_ghcr.client import GHCR, GhcrClient


@hookimpl
def aim_registry_client(registry):
    return GhcrClient() if registry == GHCR else None
