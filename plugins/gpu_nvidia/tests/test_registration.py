"""The gpu_nvidia plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_gpu_nvidia_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["gpu_nvidia"], disabled=())
    assert pm.get_plugin("gpu_nvidia") is importlib.import_module("aim_plugin_gpu_nvidia.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "gpu_nvidia",
        "aim-engine-gpu-nvidia",
        version("aim-engine-gpu-nvidia"),
    )
