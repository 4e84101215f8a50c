"""The core's generic OCI registry client, offered last through ``aim_registry_client``.

Registered through the core distribution's own entry point (``registry_oci``),
so it can be listed and disabled like any plugin.
"""

from __future__ import annotations

from aim_core.plugin.hookspecs import hookimpl
from aim_core.registry.oci import OciRegistryClient


@hookimpl(trylast=True)
def aim_registry_client(registry: str) -> OciRegistryClient:
    """Any host: the OCI distribution API over HTTPS (plain HTTP for loopback and insecure hosts)."""
    return OciRegistryClient(registry)
