"""Hook implementations of the registry_dockerhub plugin."""
