"""Hook implementations of the registry_harbor example plugin: the module the entry point names."""

from aim_core import hookimpl
from aim_example_registry_harbor.client import HarborClient, HarborSettings


@hookimpl
def aim_registry_client(registry):
    settings = HarborSettings.from_env()
    return HarborClient(settings) if registry == settings.host else None
