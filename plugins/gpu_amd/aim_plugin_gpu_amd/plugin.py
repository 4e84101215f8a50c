"""Hook implementations of the gpu_amd plugin."""
