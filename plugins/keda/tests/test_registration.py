"""The keda plugin is found by the real plugin manager, built from installed entry points."""

from importlib.metadata import version

import aim_plugin_keda.plugin
from aim_core.plugins import describe_plugins, get_plugin_manager


def test_keda_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=(), disabled=())  # every installed plugin, whatever the environment says
    assert pm.get_plugin("keda") is aim_plugin_keda.plugin
    [row] = [row for row in describe_plugins(pm) if row["name"] == "keda"]
    assert row["distribution"] == "aim-engine-keda"
    assert row["version"] == version("aim-engine-keda")
