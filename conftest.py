pytest_plugins = ["aim_core.testing.fixtures"]
