"""AIMBenchmarkSweep: every Ready template of a model benchmarked, one short-lived service at a time (issue 23).

* :mod:`.plan` -- which templates, which run now, their service and AIMBenchmark, the
  comparison table (pure);
* :mod:`.controller` -- indexes, watches and the observe step.

The sweep creates AIMServices and AIMBenchmarks (owned by it) through the API like a user
would; it imports neither kind's package. No other kind imports this one.
"""
