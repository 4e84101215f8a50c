"""AIMBenchmarkSweep as its code reads it: a typed, read-only view with the defaults applied."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.obj import Obj, meta_of, spec_of, status_of


def _map(value: Any) -> Obj:
    """``value`` when it is a map, else an empty one (a field the schema would refuse reads as unset)."""
    return value if isinstance(value, Mapping) else {}


def _maps(value: Any) -> tuple[Obj, ...]:
    return tuple(v for v in value if isinstance(v, Mapping)) if isinstance(value, list | tuple) else ()


def _int(value: Any, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@attrs.frozen
class SweepView:
    """The fields of an AIMBenchmarkSweep the sweep code reads.

    :ivar model: ``spec.model``; "" when unset.
    :ivar templates: ``spec.templates``; ``()`` for every Ready template of the model.
    :ivar allow_unoptimized: ``spec.allowUnoptimized``.
    :ivar parallelism: ``spec.parallelism``, 1 when unset.
    :ivar gpu_budget: ``spec.gpuBudget``; ``None`` for no budget.
    :ivar deploy_timeout: ``spec.deployTimeout`` as written; "" for no limit.
    :ivar replicas: ``spec.service.replicas``, 1 when unset.
    :ivar runtime_config_name: ``spec.service.runtimeConfigName``; "" when unset.
    :ivar benchmark: ``spec.benchmark`` as written: copied into every run's spec.
    :ivar entries: ``status.templates`` as last written (fixed when the sweep starts).
    :ivar comparison: ``status.comparison`` as last written.
    :ivar start_time: ``status.startTime``; "" before a template started.
    :ivar completion_time: ``status.completionTime``; "" until every template is done.
    """

    name: str
    namespace: str = ""
    uid: str = ""
    model: str = ""
    templates: tuple[str, ...] = ()
    allow_unoptimized: bool = False
    parallelism: int = 1
    gpu_budget: int | None = None
    deploy_timeout: str = ""
    replicas: int = 1
    runtime_config_name: str = ""
    benchmark: Obj = attrs.field(factory=dict)
    entries: tuple[Obj, ...] = ()
    comparison: tuple[Obj, ...] = ()
    start_time: str = ""
    completion_time: str = ""

    @classmethod
    def of(cls, sweep: Obj | SweepView) -> SweepView:
        """The view of ``sweep`` (a view is returned as it is)."""
        if isinstance(sweep, SweepView):
            return sweep
        meta, spec, status = meta_of(sweep), spec_of(sweep), status_of(sweep)
        service = _map(spec.get("service"))
        return cls(
            name=str(meta.get("name") or ""),
            namespace=str(meta.get("namespace") or ""),
            uid=str(meta.get("uid") or ""),
            model=str(spec.get("model") or ""),
            templates=tuple(str(t) for t in spec.get("templates") or ()),
            allow_unoptimized=bool(spec.get("allowUnoptimized")),
            parallelism=_int(spec.get("parallelism"), None) or 1,
            gpu_budget=_int(spec.get("gpuBudget"), None),
            deploy_timeout=str(spec.get("deployTimeout") or ""),
            replicas=_int(service.get("replicas"), None) or 1,
            runtime_config_name=str(service.get("runtimeConfigName") or ""),
            benchmark=_map(spec.get("benchmark")),
            entries=_maps(status.get("templates")),
            comparison=_maps(status.get("comparison")),
            start_time=str(status.get("startTime") or ""),
            completion_time=str(status.get("completionTime") or ""),
        )


__all__ = ["SweepView"]
