"""The registry_ghcr plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_registry_ghcr_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["registry_ghcr"], disabled=())
    assert pm.get_plugin("registry_ghcr") is importlib.import_module("aim_plugin_registry_ghcr.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "registry_ghcr",
        "aim-engine-registry-ghcr",
        version("aim-engine-registry-ghcr"),
    )
