"""The kserve plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_kserve_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["kserve"], disabled=())
    assert pm.get_plugin("kserve") is importlib.import_module("aim_plugin_kserve.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "kserve",
        "aim-engine-kserve",
        version("aim-engine-kserve"),
    )


def test_kserve_brings_its_doctor_checks():
    from aim_core.plugin.manager import providers

    checks = providers(get_plugin_manager(only=["kserve"], disabled=()), "aim_doctor_checks")
    assert list(checks) == ["kserve"]
    assert checks["kserve"].title.startswith("KServe")
