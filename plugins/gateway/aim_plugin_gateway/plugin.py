"""Hook implementations of the gateway plugin."""
