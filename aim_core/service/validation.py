"""Problems in an AIMService's own spec, found before anything else is planned. Pure.

The API schema catches most mistakes; what it cannot (or what an older CRD let
through) is checked here, on the first reconcile, whatever the state of the
service's model and template: a spec that cannot work is reported at once
instead of after the model and template are Ready. Each problem is an
InvalidSpec :class:`~aim_core.reconcile.plan.Issue`, so the service is Failed
with ``ConfigValid`` False ``InvalidSpec`` and nothing is applied until the
user fixes it.

* **Replicas** (``InvalidReplicas``): ``replicas`` negative;
  ``minReplicas``/``maxReplicas`` below 1 (the CRD's minimum: scale to zero
  is not supported); any of them beyond int32; ``minReplicas`` above
  ``maxReplicas`` (upstream would silently run ``max = min``).
* **``AIM_ENGINE_ARGS``** (``InvalidEngineArgs``): a value that is not a JSON
  object in the runtime config's env, the template's env (once a template is
  known, Ready or not) or the service's env; the layers could not be merged.
  Empty values and ``valueFrom`` are not checked (see
  :func:`aim_core.service.runtime.engine_args_issue`).

Wrongly typed fields are left to :func:`aim_core.api.spec_errors.spec_problems`.
"""

from __future__ import annotations

from typing import Any

from aim_core.reconcile.health import Category
from aim_core.reconcile.obj import Obj
from aim_core.reconcile.plan import Issue
from aim_core.service.runtime import engine_args_issue, env_layers
from aim_core.service.templates import ScopedTemplate
from aim_core.service.view import ServiceView

INVALID_REPLICAS = "InvalidReplicas"
INT32_MAX = 2**31 - 1


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def replica_problems(spec: Obj) -> list[str]:
    """Messages for every replica setting that cannot work (empty when all are fine)."""
    problems = []
    for field, minimum, why in (
        ("replicas", 0, "0 or more"),
        ("minReplicas", 1, "at least 1 (scale to zero is not supported)"),
        ("maxReplicas", 1, "at least 1"),
    ):
        value = spec.get(field)
        if not _whole(value):
            continue
        if value < minimum:
            problems.append(f"spec.{field} is {value}; it must be {why}")
        elif value > INT32_MAX:
            problems.append(f"spec.{field} is {value}; at most {INT32_MAX} fit (int32)")
    low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    if _whole(low) and _whole(high) and 1 <= high < low <= INT32_MAX:
        problems.append(
            f"spec.minReplicas ({low}) is above spec.maxReplicas ({high}); "
            f"raise maxReplicas to at least {low} or lower minReplicas"
        )
    return problems


def own_spec_issues(service: Obj, config: Obj, template: ScopedTemplate | None) -> list[Issue]:
    """The InvalidSpec issues of ``service``'s own spec, in a fixed order (replicas, then engine args).

    :param config: the merged runtime config spec.
    :param template: the template resolution found, Ready or not; ``None`` when none is known yet.
    """
    issues = []
    replicas = replica_problems(ServiceView.of(service).spec)
    if replicas:
        issues.append(Issue(Category.INVALID_SPEC, INVALID_REPLICAS, "; ".join(replicas)))
    if template is not None:
        layers = env_layers(service, template.template, template.scope.value, config)
    else:
        layers = env_layers(service, {}, "Namespace", config)  # no template layer yet: its entries are empty
    engine_args = engine_args_issue(layers)
    if engine_args is not None:
        issues.append(engine_args)
    return issues
