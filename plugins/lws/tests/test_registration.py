"""The lws plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core import max_nodes
from aim_core.plugin.manager import describe_plugins, get_plugin_manager, providers


def test_lws_is_registered_from_its_entry_point():
    pm = get_plugin_manager(only=["lws"], disabled=())
    assert pm.get_plugin("lws") is importlib.import_module("aim_plugin_lws.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == ("lws", "aim-engine-lws", version("aim-engine-lws"))


def test_lws_brings_a_multi_node_runtime_builder_and_its_doctor_checks():
    pm = get_plugin_manager(only=["lws"], disabled=())
    [builder] = providers(pm, "aim_runtime_builders").values()
    assert builder.name == "lws" and max_nodes(builder) == 16
    checks = providers(pm, "aim_doctor_checks")
    assert list(checks) == ["lws"] and checks["lws"].title.startswith("LeaderWorkerSet")
