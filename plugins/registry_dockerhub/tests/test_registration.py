"""The registry_dockerhub plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_registry_dockerhub_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["registry_dockerhub"], disabled=())
    assert pm.get_plugin("registry_dockerhub") is importlib.import_module("aim_plugin_registry_dockerhub.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "registry_dockerhub",
        "aim-engine-registry-dockerhub",
        version("aim-engine-registry-dockerhub"),
    )
