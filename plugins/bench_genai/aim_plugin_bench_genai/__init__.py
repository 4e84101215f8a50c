"""genai-bench as an AIMBenchmark tool: its image, its command line, its summary."""
