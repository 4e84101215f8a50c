"""GPU detection: NVIDIA GPUs from GPU Feature Discovery node labels."""
