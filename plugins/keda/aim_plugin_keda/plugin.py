"""Hook implementations of the keda plugin."""
