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
``Namespace``; a cluster template the runs that name it with scope ``Cluster`` from the
namespaces its cluster runtime config trusts (``spec.benchmarks.trustedNamespaces``; the
operator's namespace when unset, ``"*"`` for every namespace): a cluster template's numbers
steer other namespaces' services (``preferMeasured``), so a tenant cannot feed it. Only the
results for the scenarios and load levels a run's spec asked for count. Latest means the run
that finished last (then the name, for a stable order). At most :data:`MAX_ENTRIES` entries:
the newest measurements are kept. ``status.benchmarksNote`` says which runs were counted and
what was left out (untrusted runs, entries over the cap). Automatic selection reads this when
a service asks for measured ranking (:mod:`aim_core.service.measured`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of
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


ALL_NAMESPACES = "*"
NOTE_NAMES = 10  #: runs named in the note, then a count


def trusted_namespaces(config: Mapping[str, Any], operator_namespace: str) -> Callable[[str], bool]:
    """Whether a run's namespace may feed a cluster template, per the cluster runtime config's
    ``benchmarks.trustedNamespaces`` (the operator's namespace when unset; ``"*"``: every one)."""
    listed = (config.get("benchmarks") or {}).get("trustedNamespaces")
    names = {str(n) for n in listed} if isinstance(listed, list) else {operator_namespace}
    return lambda ns: ALL_NAMESPACES in names or ns in names


def _asked_for(run: Obj, result: Mapping[str, Any]) -> bool:
    """Whether ``result`` is for a scenario and load level the run's spec asked for."""
    spec = spec_of(run)
    if result.get("scenario") not in (spec.get("scenarios") or ()):
        return False
    kind, level = load_of(result)
    wanted = spec.get("concurrency") if kind == "concurrency" else spec.get("requestRates")
    try:
        return any(abs(float(w) - level) < 1e-9 for w in wanted or ())
    except (TypeError, ValueError):
        return False


@attrs.frozen
class Measured:
    """``status.benchmarks`` and ``status.benchmarksNote`` of a template."""

    entries: list[dict[str, Any]]
    note: str = ""


def _names(runs: Sequence[str]) -> str:
    shown = ", ".join(runs[:NOTE_NAMES])
    return shown + (f" and {len(runs) - NOTE_NAMES} more" if len(runs) > NOTE_NAMES else "")


def measure(benchmarks: Iterable[Obj], trusted: Callable[[str], bool] | None = None) -> Measured:
    """The latest headline numbers per scenario and load level over the given Succeeded runs, and a note.

    :param trusted: for a cluster template, which runs' namespaces count; ``None`` counts every run given.
    """
    runs = sorted(
        (b for b in benchmarks if status_of(b).get("status") == "Succeeded"),
        key=lambda b: (str(status_of(b).get("completionTime") or ""), str(meta_of(b).get("name") or "")),
    )
    untrusted = [r for r in runs if trusted is not None and not trusted(str(meta_of(r).get("namespace") or ""))]
    latest: dict[tuple[str, str, float], dict[str, Any]] = {}
    for run in runs:
        if trusted is not None and not trusted(str(meta_of(run).get("namespace") or "")):
            continue
        status = status_of(run)
        meta = meta_of(run)
        for result in status.get("results") or ():
            if not isinstance(result, Mapping) or not result.get("scenario") or not _asked_for(run, result):
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
    # newest first when there are too many: an old measurement goes before a scenario measured just now
    newest = sorted(latest, key=lambda k: (str(latest[k].get("completionTime") or ""), k), reverse=True)
    kept, dropped = set(newest[:MAX_ENTRIES]), newest[MAX_ENTRIES:]
    entries = [latest[k] for k in sorted(kept)]
    parts = []
    used = list(dict.fromkeys(f"{e['namespace']}/{e['benchmark']}" for e in entries))
    if used:
        parts.append(f"from AIMBenchmarks {_names(used)}")
    if untrusted:
        names = [f"{meta_of(r).get('namespace')}/{meta_of(r).get('name')}" for r in reversed(untrusted)]
        parts.append(
            f"ignored {len(names)} runs from namespaces the cluster runtime config does not trust "
            f"({_names(names)}): list their namespaces in its spec.benchmarks.trustedNamespaces to count them"
        )
    if dropped:
        gone = [f"{k[0]} {'c' if k[1] == 'concurrency' else 'rate'}={k[2]:g}" for k in dropped]
        parts.append(f"left out {len(gone)} older measurements (at most {MAX_ENTRIES} are kept): {_names(gone)}")
    return Measured(entries, "; ".join(parts))


def summarize(benchmarks: Iterable[Obj], trusted: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
    """The entries of :func:`measure` (``status.benchmarks``)."""
    return measure(benchmarks, trusted).entries
