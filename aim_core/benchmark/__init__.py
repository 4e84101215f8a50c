"""AIMBenchmark: one benchmark run as a Job against an AIMService or an endpoint (issue 23).

The benchmark tool is a plugin (``aim_bench_*`` hooks); this package waits for the
target, snapshots it, builds the Job, reads the tool's summary back and writes the
results. No other kind imports the benchmark package.
"""
