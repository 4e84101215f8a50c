"""The kserve plugin is found by the real plugin manager, built from installed entry points."""

from importlib.metadata import version

import aim_plugin_kserve.plugin
from aim_core.plugins import describe_plugins, get_plugin_manager


def test_kserve_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=(), disabled=())  # every installed plugin, whatever the environment says
    assert pm.get_plugin("kserve") is aim_plugin_kserve.plugin
    [row] = [row for row in describe_plugins(pm) if row["name"] == "kserve"]
    assert row["distribution"] == "aim-engine-kserve"
    assert row["version"] == version("aim-engine-kserve")
