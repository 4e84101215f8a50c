pytest_plugins = ["aim_testing.fixtures", "aim_testing.registry.fixtures"]
