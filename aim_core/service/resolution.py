"""What template resolution decides for an AIMService, as values. Pure.

:class:`Selection` is the outcome of automatic selection (every candidate's
fate, :meth:`Selection.explain` for ``render --explain``);
:class:`TemplateResolution` is what the whole resolution order
(:func:`aim_core.service.selection.choose_template`, then the overrides step of
:mod:`aim_core.service.overrides`) hands to the service plan.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import attrs

from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Health
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.plan import Issue, Plan
from aim_core.reconcile.resources import TEMPLATES
from aim_core.service.measured import Measurement, Preference
from aim_core.service.templates import (
    COMPONENT,
    ScopedTemplate,
    profile_type,
    template_metric,
    template_precision,
)
from aim_core.template import Scope, TemplateView

PROFILE_TYPE_ORDER = ("optimized", "preview", "unoptimized")
METRIC_ORDER = ("latency", "throughput")
PRECISION_ORDER = ("fp4", "int4", "fp8", "int8", "fp16", "bf16", "fp32")
_RANK_FIELDS = ("profile type", "GPU", "metric", "precision", "nodes")


class Filter(str, enum.Enum):
    """The filter that dropped a candidate."""

    DERIVED = "derived"
    READY = "ready"
    OPTIMIZATION = "optimization"
    OVERRIDES = "overrides"
    GPU = "gpu"
    SCOPE = "scope"


class Verdict(str, enum.Enum):
    SELECTED = "selected"
    REJECTED = "rejected"  #: dropped by a filter
    OUTRANKED = "outranked"
    TIED = "tied"  #: one of several best candidates: nothing is selected


def _position(order: Sequence[str], value: str) -> int:
    value = value.lower()
    return order.index(value) if value in order else len(order)


@attrs.frozen
class Rank:
    """A candidate's ranking values and their positions (lower is better)."""

    profile_type: str
    gpu: str
    metric: str
    precision: str
    key: tuple[int, ...]
    #: measured ranking (opt-in): the service's preference and this candidate's value (None: not measured)
    preference: Preference | None = None
    measured: Measurement | None = None
    scenario: str = ""

    @classmethod
    def of(cls, t: Obj, inventory: GpuInventory, gpu: str) -> Rank:
        kind, metric, precision = profile_type(t), template_metric(t), template_precision(t)
        key = (
            _position(PROFILE_TYPE_ORDER, kind),
            inventory.preference_rank(gpu or None),
            _position(METRIC_ORDER, metric),
            _position(PRECISION_ORDER, precision),
            # last, so it only breaks a tie: a replica on fewer nodes is simpler and holds fewer GPUs
            TemplateView.of(t).nodes,
        )
        return cls(kind, gpu, metric, precision, key)

    @property
    def values(self) -> tuple[str, ...]:
        return (
            self.profile_type,
            self.gpu or "no GPU model",
            self.metric or "no metric",
            self.precision or "no precision",
            f"{self.key[4]} node(s)",
        )

    def measure(self, preference: Preference, measured: Measurement | None, scenario: str) -> Rank:
        """This rank with a measured value (or its absence) ranking before the usual keys."""
        return attrs.evolve(self, preference=preference, measured=measured, scenario=scenario)

    @property
    def order(self) -> tuple[float, ...]:
        """What ranking compares, lower is better: measured ones first (by value), then the usual key."""
        if self.preference is None:
            return self.key
        if self.measured is None:
            return (1, 0.0, *self.key)
        return (0, self.measured.key(self.preference), *self.key)

    def describe(self) -> str:
        usual = ", ".join(self.values[:4] if self.key[4] == 1 else self.values)
        if self.preference is None:
            return usual
        if self.measured is None:
            return f"not measured for {self.preference.describe(self.scenario)}; {usual}"
        return f"{self.measured.describe(self.preference)}; {usual}"

    def versus(self, winner: Rank) -> str:
        """``GPU: MI300X before MI210``: the first key on which ``winner`` is better."""
        if winner.preference is not None and winner.measured is not None:
            mine = self.measured.value if self.measured is not None else None
            if mine != winner.measured.value:
                unit = winner.preference.metric.unit
                theirs = f"{mine:g} {unit}" if mine is not None else "not measured"
                return (
                    f"measured {winner.preference.by} at concurrency {winner.preference.concurrency} in "
                    f"{winner.scenario}: {winner.measured.value:g} {unit} before {theirs}"
                )
        for i, field in enumerate(_RANK_FIELDS):
            if winner.key[i] != self.key[i]:
                return f"{field}: {winner.values[i]} before {self.values[i]}"
        return "every key equal"


@attrs.frozen
class Candidate:
    """One template that names the model, and what selection made of it."""

    template: ScopedTemplate
    verdict: Verdict
    filter: Filter | None = None
    why: str = ""
    rank: Rank | None = None

    @property
    def name(self) -> str:
        return self.template.name

    @property
    def scope(self) -> Scope:
        return self.template.scope


@attrs.frozen
class Selection:
    """The outcome of auto-selection: the chosen template (or none), why, and every candidate's fate."""

    model_name: str
    health: Health
    candidates: tuple[Candidate, ...] = ()
    measured_note: str = ""  #: what measured ranking did (empty when not asked for)

    @property
    def chosen(self) -> ScopedTemplate | None:
        return next((c.template for c in self.candidates if c.verdict is Verdict.SELECTED), None)

    @property
    def template(self) -> Obj | None:
        return self.chosen.template if self.chosen is not None else None

    @property
    def scope(self) -> Scope | None:
        return self.chosen.scope if self.chosen is not None else None

    def rejected_by(self, flt: Filter) -> list[str]:
        return [c.name for c in self.candidates if c.filter is flt]

    def explain(self) -> list[str]:
        """Human-readable lines: the outcome, then one line per candidate."""
        lines = [f"template for model {self.model_name}: {self.health.reason}: {self.health.message}"]
        if self.measured_note:
            lines.append(f"  measured ranking: {self.measured_note}")
        for c in self.candidates:
            mark = {Verdict.SELECTED: "+", Verdict.TIED: "="}.get(c.verdict, "-")
            where = f" [{c.filter.value}]" if c.filter else ""
            lines.append(f"  {mark} {c.template.describe()}: {c.verdict.value}{where}: {c.why}")
        return lines


@attrs.frozen
class TemplateResolution:
    """What template resolution decided for one service.

    :ivar health: the ``Template`` component.
    :ivar template: the template in use (it may not be Ready yet), or None.
    :ivar derived: a derived AIMServiceTemplate to apply, owned by the service, or None.
    :ivar selection: the auto-selection that chose the base, for ``render --explain``.
    """

    health: Health
    template: ScopedTemplate | None = None
    derived: dict[str, Any] | None = None
    selection: Selection | None = None

    @property
    def ready(self) -> bool:
        return self.template is not None and self.health.ready

    @property
    def reference(self) -> dict[str, Any] | None:
        """``status.resolvedTemplate``: set only once the template is Ready (Q25)."""
        return self.template.reference() if self.ready and self.template is not None else None

    @property
    def issue(self) -> Issue | None:
        """A problem that must stop the service's writes (a missing named template), if any."""
        return Issue.blocking(self.health)

    def contribute(self, plan: Plan, component: str = COMPONENT) -> None:
        """Record this resolution on ``plan``: the component, a blocking issue, the derived template."""
        plan.component(component, self.health, blocking=True)
        if self.derived is not None:
            plan.want(TEMPLATES, self.derived)
