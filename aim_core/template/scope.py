"""Where a template lives: one namespace or the whole cluster."""

from __future__ import annotations

import enum


class Scope(str, enum.Enum):
    """Where a template lives, as ``status.resolvedTemplate.scope`` spells it.

    It decides which model kind a template binds to and where its discovery runs.
    """

    NAMESPACE = "Namespace"
    CLUSTER = "Cluster"

    @property
    def kind(self) -> str:
        return "AIMServiceTemplate" if self is Scope.NAMESPACE else "AIMClusterServiceTemplate"

    @property
    def model_kind(self) -> str:
        return "AIMModel" if self is Scope.NAMESPACE else "AIMClusterModel"

    @property
    def model_component(self) -> str:
        return "Model" if self is Scope.NAMESPACE else "ClusterModel"


__all__ = ["Scope"]
