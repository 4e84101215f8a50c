"""Measured ranking: automatic selection that prefers what was measured (issue 23). Pure.

Opt-in, off by default. A service asks for it in ``spec.template.preferMeasured``;
a runtime config sets the default for the services that use it in
``spec.templateSelection.preferMeasured`` (the service's own setting wins):

.. code-block:: yaml

    preferMeasured:
      by: outputTokensPerSecond   # or requestsPerSecond, ttftP50, ttftP90, ttftP99,
                                  #    interTokenLatencyP50, e2eLatencyP50
      concurrency: 8              # the load level whose numbers count
      scenario: "D(128,128)"      # optional; unset: the scenario measured for most candidates

What counts is the template's ``status.benchmarks`` (the template controller keeps there the
latest result of every scenario and load level of its Succeeded AIMBenchmarks, see
:mod:`aim_core.template.benchmarks`). Among the candidates left after every filter of
:func:`aim_core.service.selection.select_template`, measured ones rank before unmeasured
ones, better value first; equal values and unmeasured candidates fall back to the usual
order (profile type, GPU, metric, precision). No candidate measured: the usual order decides,
and ``render --explain`` says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, TypeVar

import attrs

from aim_core.reconcile.obj import Obj
from aim_core.service.view import ServiceView
from aim_core.template import TemplateView


@attrs.frozen
class Metric:
    """A rankable number of a result entry: where it is, whether higher is better, its unit."""

    path: tuple[str, ...]
    higher_is_better: bool
    unit: str

    def read(self, entry: Mapping[str, Any]) -> float | None:
        value: Any = entry
        for part in self.path:
            value = value.get(part) if isinstance(value, Mapping) else None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


METRICS: dict[str, Metric] = {
    "outputTokensPerSecond": Metric(("outputTokensPerSecond",), True, "tokens/s"),
    "requestsPerSecond": Metric(("requestsPerSecond",), True, "req/s"),
    "ttftP50": Metric(("ttftMs", "p50"), False, "ms"),
    "ttftP90": Metric(("ttftMs", "p90"), False, "ms"),
    "ttftP99": Metric(("ttftMs", "p99"), False, "ms"),
    "interTokenLatencyP50": Metric(("interTokenLatencyMs", "p50"), False, "ms"),
    "e2eLatencyP50": Metric(("e2eLatencyMs", "p50"), False, "ms"),
}


@attrs.frozen
class Preference:
    """What a service asked measured ranking for, and where the setting came from."""

    by: str
    concurrency: int
    scenario: str = ""
    source: str = "spec.template.preferMeasured"

    @property
    def metric(self) -> Metric:
        return METRICS[self.by]

    @classmethod
    def read(cls, service: Obj, config: Mapping[str, Any] | None = None) -> Preference | None:
        """The service's ``spec.template.preferMeasured``, else its runtime config's default; None: off."""
        own = ServiceView.of(service).prefer_measured
        source = "spec.template.preferMeasured"
        if not own:
            own = ((config or {}).get("templateSelection") or {}).get("preferMeasured")
            source = "the runtime config's templateSelection.preferMeasured"
        if not isinstance(own, Mapping) or own.get("by") not in METRICS:
            return None
        try:
            concurrency = int(own.get("concurrency") or 0)
        except (TypeError, ValueError):
            return None
        if concurrency < 1:
            return None
        return cls(str(own["by"]), concurrency, str(own.get("scenario") or "").strip(), source)

    def describe(self, scenario: str = "") -> str:
        where = f" in scenario {scenario}" if scenario else ""
        return f"{self.by} at concurrency {self.concurrency}{where}"


@attrs.frozen
class Measurement:
    """One template's measured value for a preference."""

    value: float
    scenario: str
    benchmark: str
    namespace: str = ""
    completion_time: str = ""

    def describe(self, pref: Preference) -> str:
        """``outputTokensPerSecond 410.5 tokens/s at concurrency 8 in D(128,128) (AIMBenchmark team/run-1)``."""
        where = f"{self.namespace}/" if self.namespace else ""
        when = f", {self.completion_time}" if self.completion_time else ""
        return (
            f"measured {pref.by} {self.value:g} {pref.metric.unit} at concurrency {pref.concurrency} in "
            f"{self.scenario} (AIMBenchmark {where}{self.benchmark}{when})"
        )

    def key(self, pref: Preference) -> float:
        """Lower is better."""
        return -self.value if pref.metric.higher_is_better else self.value


def _entries(template: Obj, pref: Preference) -> list[Mapping[str, Any]]:
    return [
        e
        for e in TemplateView.of(template).benchmarks
        if isinstance(e, Mapping) and e.get("concurrency") == pref.concurrency
    ]


def choose_scenario(templates: Sequence[Obj], pref: Preference) -> str:
    """The scenario to compare: the asked one, else the one measured (at the load level) for most templates.

    Ties go to the first scenario by name; empty when no template has a measurement.
    """
    if pref.scenario:
        return pref.scenario
    counts: Counter[str] = Counter()
    for t in templates:
        counts.update(
            {str(e.get("scenario") or "") for e in _entries(t, pref) if pref.metric.read(e) is not None} - {""}
        )
    if not counts:
        return ""
    return min(counts, key=lambda s: (-counts[s], s))


def measurement(template: Obj, pref: Preference, scenario: str) -> Measurement | None:
    """The template's value for ``pref`` in ``scenario``; None when it was not measured."""
    for e in _entries(template, pref):
        value = pref.metric.read(e)
        if value is not None and str(e.get("scenario") or "") == scenario:
            return Measurement(
                value,
                scenario,
                str(e.get("benchmark") or ""),
                str(e.get("namespace") or TemplateView.of(template).namespace),
                str(e.get("completionTime") or ""),
            )
    return None


class Rankable(Protocol):
    """What :func:`measure_ranks` needs of a rank (:class:`aim_core.service.resolution.Rank`)."""

    @property
    def order(self) -> tuple[float, ...]: ...

    def measure(self, preference: Preference, measured: Measurement | None, scenario: str) -> Self: ...


R = TypeVar("R", bound=Rankable)


def measure_ranks(templates: Sequence[Obj], ranks: Sequence[R], prefer: Preference | None) -> tuple[list[R], str]:
    """The candidates' ranks with their measured values when asked for, and what ``render --explain`` says of it.

    No preference: the ranks unchanged and no note. No candidate measured: the ranks unchanged
    (the usual order decides) and a note saying so.
    """
    if prefer is None:
        return list(ranks), ""
    scenario = choose_scenario(templates, prefer)
    found = [measurement(t, prefer, scenario) if scenario else None for t in templates]
    asked = f"{prefer.describe(scenario or prefer.scenario)} ({prefer.source})"
    measured = [m for m in found if m is not None]
    if not measured:
        return list(ranks), f"no candidate has a measurement of {asked}; the usual order decided"
    best = min(measured, key=lambda m: m.key(prefer))
    return [r.measure(prefer, m, scenario) for r, m in zip(ranks, found, strict=True)], (
        f"{asked}: {len(measured)} of {len(templates)} candidates measured; the best is {best.describe(prefer)}"
    )
