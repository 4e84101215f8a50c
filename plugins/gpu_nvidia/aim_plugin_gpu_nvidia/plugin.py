"""Hook implementations of the gpu_nvidia plugin."""
