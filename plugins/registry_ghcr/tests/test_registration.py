"""The registry_ghcr plugin is found by the real plugin manager, built from installed entry points."""

from importlib.metadata import version

import aim_plugin_registry_ghcr.plugin
from aim_core.plugins import describe_plugins, get_plugin_manager


def test_registry_ghcr_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=(), disabled=())  # every installed plugin, whatever the environment says
    assert pm.get_plugin("registry_ghcr") is aim_plugin_registry_ghcr.plugin
    [row] = [row for row in describe_plugins(pm) if row["name"] == "registry_ghcr"]
    assert row["distribution"] == "aim-engine-registry-ghcr"
    assert row["version"] == version("aim-engine-registry-ghcr")
