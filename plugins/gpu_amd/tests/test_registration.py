"""The gpu_amd plugin is found by the real plugin manager, built from installed entry points."""

from importlib.metadata import version

import aim_plugin_gpu_amd.plugin
from aim_core.plugins import describe_plugins, get_plugin_manager


def test_gpu_amd_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=(), disabled=())  # every installed plugin, whatever the environment says
    assert pm.get_plugin("gpu_amd") is aim_plugin_gpu_amd.plugin
    [row] = [row for row in describe_plugins(pm) if row["name"] == "gpu_amd"]
    assert row["distribution"] == "aim-engine-gpu-amd"
    assert row["version"] == version("aim-engine-gpu-amd")
