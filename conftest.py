pytest_plugins = ["aim_core.testing.fixtures", "aim_core.testing.registry.fixtures"]
