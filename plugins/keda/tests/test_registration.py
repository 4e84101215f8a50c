"""The keda plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_keda_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["keda"], disabled=())
    assert pm.get_plugin("keda") is importlib.import_module("aim_plugin_keda.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == ("keda", "aim-engine-keda", version("aim-engine-keda"))


def test_keda_brings_its_doctor_checks():
    from aim_core.plugin.manager import providers

    checks = providers(get_plugin_manager(only=["keda"], disabled=()), "aim_doctor_checks")
    assert list(checks) == ["keda"]
    assert checks["keda"].title.startswith("KEDA")
