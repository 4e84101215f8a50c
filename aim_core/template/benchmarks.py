"""A template's measured performance: ``status.benchmarks`` from its AIMBenchmarks (issue 23). Pure.

The template controller (not the benchmark controller: one status, one writer) finds the
Succeeded AIMBenchmarks whose ``status.target`` names the template, through an index, and
keeps in ``status.benchmarks`` the latest result of every scenario and load level:

.. code-block:: yaml

    status:
      benchmarks:
        - scenario: D(128,128)
          concurrency: 8                  # or requestRate
          outputTokensPerSecond: 410.5
          requestsPerSecond: 3.2
          ttftMs: {p50: 45.1, p90: 60.2, p99: 80.0}
          interTokenLatencyMs: {p50: 12.0, p99: 20.1}
          e2eLatencyMs: {p50: 1600.0, p99: 2100.0}
          completedRequests: 100
          failedRequests: 0
          replicas: 1
          benchmark: llama-run-1          # the AIMBenchmark the numbers come from
          namespace: team                 # its namespace
          completionTime: "2026-11-27T20:05:00Z"

A namespaced template counts the runs of its namespace that name it with scope
``Namespace``; a cluster template the runs of any namespace that name it with scope
``Cluster``. Latest means the run that finished last (then the name, for a stable order).
Automatic selection reads this when a service asks for measured ranking
(:mod:`aim_core.service.measured`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.reconcile.obj import Obj, meta_of, status_of
from aim_core.template.scope import Scope

MAX_ENTRIES = 20  #: keep the template's status small: at most this many scenario x load entries
HEADLINE = (
    "outputTokensPerSecond",
    "requestsPerSecond",
    "ttftMs",
    "interTokenLatencyMs",
    "e2eLatencyMs",
    "completedRequests",
    "failedRequests",
)


def index_key(benchmark: Obj) -> list[tuple[str, str | None, str]]:
    """``(scope, namespace or None, template)`` of a Succeeded run's target; nothing for other runs.

    Namespace-scoped targets carry the run's namespace; cluster-scoped ones None.
    """
    status = status_of(benchmark)
    target = status.get("target") or {}
    name = target.get("template")
    if status.get("status") != "Succeeded" or not name:
        return []
    scope = target.get("templateScope") or Scope.NAMESPACE.value
    namespace = meta_of(benchmark).get("namespace") if scope == Scope.NAMESPACE.value else None
    return [(str(scope), namespace, str(name))]


def load_of(entry: Mapping[str, Any]) -> tuple[str, float]:
    """``("concurrency", 8)`` or ``("requestRate", 2.5)``: the load level of a result entry."""
    if entry.get("concurrency") is not None:
        return "concurrency", float(entry["concurrency"])
    return "requestRate", float(entry.get("requestRate") or 0)


def summarize(benchmarks: Iterable[Obj]) -> list[dict[str, Any]]:
    """The latest headline numbers per scenario and load level, over the given Succeeded runs."""
    runs = sorted(
        (b for b in benchmarks if status_of(b).get("status") == "Succeeded"),
        key=lambda b: (str(status_of(b).get("completionTime") or ""), str(meta_of(b).get("name") or "")),
    )
    latest: dict[tuple[str, str, float], dict[str, Any]] = {}
    for run in runs:
        status = status_of(run)
        meta = meta_of(run)
        for result in status.get("results") or ():
            if not isinstance(result, Mapping) or not result.get("scenario"):
                continue
            kind, level = load_of(result)
            entry: dict[str, Any] = {"scenario": result["scenario"], kind: result.get(kind)}
            entry.update({k: result[k] for k in HEADLINE if result.get(k) is not None})
            replicas = (status.get("target") or {}).get("replicas")
            if replicas is not None:
                entry["replicas"] = replicas
            entry["benchmark"] = meta.get("name", "")
            entry["namespace"] = meta.get("namespace", "")
            if status.get("completionTime"):
                entry["completionTime"] = status["completionTime"]
            latest[(str(result["scenario"]), kind, level)] = entry
    return [latest[k] for k in sorted(latest)][:MAX_ENTRIES]
