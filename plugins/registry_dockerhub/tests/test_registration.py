"""The registry_dockerhub plugin is found by the real plugin manager, built from installed entry points."""

from importlib.metadata import version

import aim_plugin_registry_dockerhub.plugin
from aim_core.plugins import describe_plugins, get_plugin_manager


def test_registry_dockerhub_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=(), disabled=())  # every installed plugin, whatever the environment says
    assert pm.get_plugin("registry_dockerhub") is aim_plugin_registry_dockerhub.plugin
    [row] = [row for row in describe_plugins(pm) if row["name"] == "registry_dockerhub"]
    assert row["distribution"] == "aim-engine-registry-dockerhub"
    assert row["version"] == version("aim-engine-registry-dockerhub")
