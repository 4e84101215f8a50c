"""Hook implementations of the registry_ghcr plugin."""
