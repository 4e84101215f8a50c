"""The gateway plugin is found by the real plugin manager, built from installed entry points."""

import importlib
from importlib.metadata import version

from aim_core.plugin.manager import describe_plugins, get_plugin_manager


def test_gateway_is_registered_from_its_entry_point():
    # Only this plugin, whatever the environment says: a broken neighbour fails its own test.
    pm = get_plugin_manager(only=["gateway"], disabled=())
    assert pm.get_plugin("gateway") is importlib.import_module("aim_plugin_gateway.plugin")
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"], row["version"]) == (
        "gateway",
        "aim-engine-gateway",
        version("aim-engine-gateway"),
    )


def test_gateway_brings_its_doctor_checks():
    from aim_core.plugin.manager import providers

    checks = providers(get_plugin_manager(only=["gateway"], disabled=()), "aim_doctor_checks")
    assert list(checks) == ["gateway-api"]
    assert checks["gateway-api"].title.startswith("Gateway")
