import pytest

from aim_core.plugin.manager import get_plugin_manager


@pytest.fixture
def plugins(fast_registry_retries):
    """A plugin manager with only the core's generic OCI client, from its entry point."""
    return get_plugin_manager(only=["registry_oci"], disabled=())
