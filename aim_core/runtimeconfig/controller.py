"""Controllers for AIMRuntimeConfig and AIMClusterRuntimeConfig (F17-F19).

Upstream leaves runtime configs without a reconciler (F6). Ours validates
what the API schema cannot (``AIM_ENGINE_ARGS`` must be a JSON object, label
globs must parse), publishes the effective, merged view in
``status.effectiveSpec`` (a namespaced config merged over the cluster config
of the same name, deprecated fields migrated), and reports it in conditions:

* ``Ready``: True ``AllComponentsReady``, or False ``InvalidSpec`` naming the
  field to fix (``ConfigValid`` False alongside, as for every kind);
* ``ClusterConfigMerged`` (namespaced configs only, informational): True
  ``Merged`` when an AIMClusterRuntimeConfig of the same name exists, False
  ``NoClusterConfig`` otherwise.

A cluster config change re-triggers the namespaced configs of the same name
through a name index (no scan). Objects that *use* configs are re-triggered
by their own controllers' watches.
"""

from __future__ import annotations

from typing import Any, ClassVar

from aim_core.api.spec_errors import spec_problems
from aim_core.reconcile.envvars import engine_args_problems
from aim_core.reconcile.health import Category
from aim_core.reconcile.labels import glob_problem
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import CLUSTER_RUNTIME_CONFIGS, RUNTIME_CONFIGS
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.store import Store
from aim_core.runtimeconfig.resolution import field_problems, normalize, resolve
from aim_core.runtimeconfig.view import RuntimeConfigView

BY_NAME = "by-name"


def validate(obj: dict[str, Any]) -> list[str]:
    """What is wrong with a runtime config that the API server could not catch."""
    problems = spec_problems(obj)
    config = RuntimeConfigView.of(obj)
    problems += field_problems(config.spec)
    problems += [f"spec.env: {p}" for p in engine_args_problems(list(config.env))]
    for i, pattern in enumerate(config.label_match):
        problem = glob_problem(pattern)
        if problem:
            problems.append(f"spec.labelPropagation.match[{i}]: {problem}")
    return problems


def _plan(obj: dict[str, Any], cluster: dict[str, Any] | None, namespaced: bool) -> Plan:
    plan = Plan()
    config = RuntimeConfigView.of(obj)
    name = config.name
    problems = validate(obj)
    if problems:
        plan.issue(Category.INVALID_SPEC, "InvalidSpec", "; ".join(problems))
    if namespaced:
        plan.status["effectiveSpec"] = resolve(name, obj, cluster).spec
        if cluster is not None:
            plan.conditions.append(
                _condition("True", "Merged", f"merged over AIMClusterRuntimeConfig {name}; fields set here win")
            )
        else:
            plan.conditions.append(
                _condition(
                    "False", "NoClusterConfig", f"no AIMClusterRuntimeConfig named {name}; this config applies alone"
                )
            )
    else:
        plan.status["effectiveSpec"] = normalize(config.spec)
    return plan


def _condition(status: str, reason: str, message: str) -> dict[str, Any]:
    return {"type": "ClusterConfigMerged", "status": status, "reason": reason, "message": message}


class RuntimeConfigController(Controller):
    name: ClassVar[str] = "runtime-config"
    resource = RUNTIME_CONFIGS
    root_status = False

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(RUNTIME_CONFIGS, BY_NAME, lambda o: [o["metadata"]["name"]])

    def watches(self) -> list[Watch]:
        return [Watch(CLUSTER_RUNTIME_CONFIGS, self._namespaced_of_same_name)]

    def _namespaced_of_same_name(self, obj: dict[str, Any]) -> list[tuple[str | None, str]]:
        store = self._store
        return sorted(store.keys_by_index(RUNTIME_CONFIGS, BY_NAME, obj["metadata"]["name"]), key=str)

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> dict[str, Any] | None:
        return ctx.store.get(CLUSTER_RUNTIME_CONFIGS, None, obj["metadata"]["name"])

    def plan(self, obj: dict[str, Any], observed: dict[str, Any] | None) -> Plan:
        return _plan(obj, observed, namespaced=True)


class ClusterRuntimeConfigController(Controller):
    name: ClassVar[str] = "cluster-runtime-config"
    resource = CLUSTER_RUNTIME_CONFIGS
    root_status = False

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        return _plan(obj, None, namespaced=False)
