"""GPU detection: AMD Instinct and Radeon GPUs from node labels."""
