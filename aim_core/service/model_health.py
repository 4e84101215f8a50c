"""A service's model as its status reports it: scope, health, status.resolvedModel, and the resolution value (F46). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.model import ModelView
from aim_core.reconcile.conditions import dependency_health
from aim_core.reconcile.errors import ReconcileError
from aim_core.reconcile.health import Health, State
from aim_core.reconcile.plan import Issue, Plan
from aim_core.reconcile.resources import MODELS

NAMESPACE = "Namespace"
CLUSTER = "Cluster"
COMPONENT = "Model"

MODEL_KINDS = {NAMESPACE: "AIMModel", CLUSTER: "AIMClusterModel"}

Model = Mapping[str, Any]


def image_key(image: str) -> str:
    """The key models are indexed and matched by: the image string, trimmed, otherwise exact."""
    return (image or "").strip()


def model_scope(model: Model) -> str:
    """``Cluster`` for an AIMClusterModel, else ``Namespace`` (by kind, or by namespace when kind is absent)."""
    kind = model.get("kind")
    if kind:
        return CLUSTER if kind == MODEL_KINDS[CLUSTER] else NAMESPACE
    return NAMESPACE if ModelView.of(model).namespace else CLUSTER


def _describe(model: Model, scope: str | None = None) -> str:
    """``AIMModel ns/name`` or ``AIMClusterModel name``, for messages."""
    scope = scope or model_scope(model)
    view = ModelView.of(model)
    if scope == CLUSTER:
        return f"AIMClusterModel {view.name}"
    return f"AIMModel {view.namespace}/{view.name}"


def model_status(model: Model) -> str:
    return ModelView.of(model).state


# ---------------------------------------------------------------- health


def model_health(model: Model, scope: str | None = None) -> Health:
    """The ``Model`` component of a service for an existing model (see the module docstring)."""
    return dependency_health(
        model, _describe(model, scope), ready_reason="ModelResolved", not_ready_reason="ModelNotReady"
    )


def resolved_reference(model: Model, scope: str | None = None) -> dict[str, Any] | None:
    """``status.resolvedModel`` for ``model``, or None while it is not Ready (Q25).

    ``namespace`` is present for AIMModels only; ``kind`` and ``uid`` when known.
    """
    if model_status(model) != State.READY.value:
        return None
    scope = scope or model_scope(model)
    view = ModelView.of(model)
    ref: dict[str, Any] = {"kind": MODEL_KINDS[scope], "name": view.name}
    if scope == NAMESPACE:
        ref["namespace"] = view.namespace
    ref["scope"] = scope
    if view.uid:
        ref["uid"] = view.uid
    return ref


# ---------------------------------------------------------------- result


@attrs.frozen
class ModelResolution:
    """What model resolution decided for one service.

    :ivar health: the ``Model`` component.
    :ivar model: the model in use (it may not be Ready yet), or None.
    :ivar scope: ``Namespace`` or ``Cluster`` when ``model`` is set.
    :ivar create: an AIMModel to apply *unowned* (it outlives the service), or None.
    """

    health: Health
    model: Model | None = None
    scope: str | None = None
    create: dict[str, Any] | None = None

    @property
    def ready(self) -> bool:
        return self.model is not None and self.health.ready

    @property
    def reference(self) -> dict[str, Any] | None:
        """``status.resolvedModel``: set only once the model is Ready."""
        return resolved_reference(self.model, self.scope) if self.model is not None else None

    @property
    def issue(self) -> Issue | None:
        """A problem that must stop the service's writes (invalid spec, missing model), if any."""
        return Issue.blocking(self.health)

    def contribute(self, plan: Plan, component: str = COMPONENT) -> None:
        """Record this resolution on ``plan``: the component, a blocking issue, the model to create."""
        plan.component(component, self.health, blocking=True)
        if self.create is not None:
            plan.want(MODELS, self.create, owned=False)


def found_model(model: Model) -> ModelResolution:
    scope = model_scope(model)
    return ModelResolution(model_health(model, scope), model, scope)


def lookup_failed(error: ReconcileError) -> ModelResolution:
    return ModelResolution(Health.error(error.category, error.reason, error.message, upstream=True))


def creating_model(obj: dict[str, Any], why: str) -> ModelResolution:
    meta = obj["metadata"]
    message = f"creating AIMModel {meta['namespace']}/{meta['name']} {why}"
    return ModelResolution(Health(State.PENDING, "CreatingModel", message, upstream=True), create=obj)
