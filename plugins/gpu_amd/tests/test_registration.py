"""The gpu_amd plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_gpu_amd_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["gpu_amd"], disabled=())
    assert pm.get_plugin("gpu_amd") is importlib.import_module("aim_plugin_gpu_amd.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "gpu_amd",
        "aim-engine-gpu-amd",
        version("aim-engine-gpu-amd"),
    )
