"""Hook implementations of the kserve plugin."""
