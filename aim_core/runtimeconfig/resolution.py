"""Runtime config resolution (F17): which config applies and what it says.

Objects name a config with ``spec.runtimeConfigName`` (empty → ``default``).
The AIMRuntimeConfig of that name in the object's namespace is merged over the
AIMClusterRuntimeConfig of that name, field by field, namespace winning.
A missing ``default`` is fine; a missing named config is a missing reference.
A config whose effective value cannot work although the schema let it through
(a negative ``pvcHeadroomPercent`` stored before the schema refused it) is a
spec to fix: every object that uses it is Failed with ``ConfigValid`` False
``InvalidSpec``, the message naming the config object and its field, as the
config itself reports (:func:`field_problems`).

Everything here is pure and works on wire-format dicts (camelCase).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import attrs

from aim_core.reconcile.durations import parse_duration
from aim_core.reconcile.envvars import merge_env
from aim_core.reconcile.health import Category, Health
from aim_core.reconcile.obj import spec_of
from aim_core.reconcile.plan import Issue
from aim_core.runtimeconfig.view import ConfigView, RuntimeConfigView

DEFAULT_NAME = "default"
DEFAULT_PVC_HEADROOM_PERCENT = 10
#: How long an artifact the operator created for a LoRA adapter stays once no service uses it
#: (``artifact.unusedAdapterRetention``); a week: long enough for a service that is re-created, a
#: weekend's pause or a rollback to find its weights, short enough that volumes do not pile up.
DEFAULT_UNUSED_ADAPTER_RETENTION = "168h"
NEVER = "Never"


def config_name(spec: Mapping[str, Any] | None) -> str:
    """The runtime config an object asks for (``default`` when unset or blank)."""
    return ((spec or {}).get("runtimeConfigName") or "").strip() or DEFAULT_NAME


def normalize(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """A runtime-config spec with the deprecated top-level storage fields moved into ``storage`` (F5)."""
    out = copy.deepcopy(dict(spec or {}))
    legacy_class = out.pop("defaultStorageClassName", None)
    legacy_headroom = out.pop("pvcHeadroomPercent", None)
    if legacy_class is not None or legacy_headroom is not None:
        storage = dict(out.get("storage") or {})
        if legacy_class and not storage.get("defaultStorageClassName"):
            storage["defaultStorageClassName"] = legacy_class
        if legacy_headroom is not None and storage.get("pvcHeadroomPercent") is None:
            storage["pvcHeadroomPercent"] = legacy_headroom
        out["storage"] = storage
    return out


def _headroom_field(spec: Mapping[str, Any]) -> tuple[str, Any]:
    """Where a config's own headroom is set (``storage`` wins over the deprecated top-level field), and its value."""
    storage = spec.get("storage")
    if isinstance(storage, Mapping) and storage.get("pvcHeadroomPercent") is not None:
        return "spec.storage.pvcHeadroomPercent", storage["pvcHeadroomPercent"]
    return "spec.pvcHeadroomPercent", spec.get("pvcHeadroomPercent")


def _headroom_problem(path: str, value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{path}: {value!r} is not a whole number of percent; write e.g. 10"
    if value < 0:
        return (
            f"{path}: {value} is negative, which would make volumes smaller than the model they hold; "
            "set 0 or more (10 when unset)"
        )
    return None


def unused_adapter_retention(value: Any) -> float | None:
    """Seconds an unused adapter artifact is kept (``artifact.unusedAdapterRetention``); None: kept for ever.

    Unset or empty is the default (:data:`DEFAULT_UNUSED_ADAPTER_RETENTION`).

    :raises ValueError: the value is neither ``Never`` nor a duration.
    """
    if value is None or value == "":
        value = DEFAULT_UNUSED_ADAPTER_RETENTION
    if value == NEVER:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a duration")
    return parse_duration(value) / 1e9


def field_problems(spec: Mapping[str, Any] | None) -> list[str]:
    """What in one runtime config's own spec cannot work although the schema let it through (``spec.x: why``)."""
    spec = spec or {}
    problems = []
    storage = spec.get("storage")
    if isinstance(storage, Mapping):
        problems.append(_headroom_problem("spec.storage.pvcHeadroomPercent", storage.get("pvcHeadroomPercent")))
    problems.append(_headroom_problem("spec.pvcHeadroomPercent", spec.get("pvcHeadroomPercent")))
    artifact = spec.get("artifact")
    if isinstance(artifact, Mapping):
        problems.append(_retention_problem(artifact.get("unusedAdapterRetention")))
    return [p for p in problems if p]


def _retention_problem(value: Any) -> str | None:
    try:
        unused_adapter_retention(value)
    except ValueError as exc:
        return f"spec.artifact.unusedAdapterRetention: {exc}; write a duration such as 24h or 168h, or {NEVER}"
    return None


def _describe_object(obj: Mapping[str, Any]) -> str:
    view = RuntimeConfigView.of(obj)
    if view.namespace:
        return f"AIMRuntimeConfig {view.namespace}/{view.name}"
    return f"AIMClusterRuntimeConfig {view.name}"


def _effective_problems(namespaced: Mapping[str, Any] | None, cluster: Mapping[str, Any] | None) -> list[str]:
    """The problems of the values in effect: a field set in the namespaced config hides the cluster config's."""
    found = []
    for field, check in (
        (_headroom_field, lambda path, value: _headroom_problem(path, value)),
        (_retention_field, lambda path, value: _retention_problem(value)),
    ):
        for obj in (namespaced, cluster):
            if obj is None:
                continue
            path, value = field(spec_of(obj))
            if value is None or value == "":
                continue
            problem = check(path, value)
            if problem:
                found.append(f"{_describe_object(obj)} {problem}")
            break  # this object's value is the one in effect
    return found


def _retention_field(spec: Mapping[str, Any]) -> tuple[str, Any]:
    artifact = spec.get("artifact")
    value = artifact.get("unusedAdapterRetention") if isinstance(artifact, Mapping) else None
    return "spec.artifact.unusedAdapterRetention", value


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def merge_specs(base: Mapping[str, Any] | None, overlay: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge ``overlay`` over ``base`` field by field; non-empty overlay values win.

    Nested objects merge recursively; ``env`` lists merge by variable name
    (overlay entries replace in place, new ones are appended, ``AIM_ENGINE_ARGS``
    JSON objects deep-merge); other lists are replaced whole. ``false`` and
    ``0`` are values, so ``routing.enabled: false`` turns routing off.
    """
    result = copy.deepcopy(dict(base or {}))
    for key, value in (overlay or {}).items():
        if _is_empty(value) and not (key == "downloadFilter" and value == {}):
            continue
        current = result.get(key)
        if key == "env" and isinstance(value, list):
            result[key] = merge_env(list(current or []), list(value))
        elif isinstance(value, Mapping) and isinstance(current, Mapping) and key not in _ATOMIC_OBJECTS:
            result[key] = merge_specs(current, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


# Objects that are one value, not a set of independent settings (placement fields: a namespace's
# nodeSelector or affinity replaces the cluster's whole, as a service's replaces the config's).
_ATOMIC_OBJECTS = frozenset({"gatewayRef", "downloadFilter", "nodeSelector", "affinity"})


@attrs.frozen
class Resolution:
    """The outcome of resolving a runtime config for one object.

    :ivar view: the settings of :attr:`spec` other kinds read, typed, with their defaults.
    """

    name: str
    spec: dict[str, Any]  # the merged, normalised view; empty when nothing was found
    namespaced: Mapping[str, Any] | None = None
    cluster: Mapping[str, Any] | None = None
    issue: Issue | None = None
    view: ConfigView = attrs.field(
        init=False, eq=False, repr=False, default=attrs.Factory(lambda self: ConfigView.of(self.spec), takes_self=True)
    )

    @property
    def found(self) -> bool:
        return self.namespaced is not None or self.cluster is not None

    @property
    def issue_reason(self) -> str:
        """The reason an object reports its config's issue with: a missing one is a ``ReferenceNotFound``."""
        if self.issue is None or self.issue.category is Category.MISSING_UPSTREAM:
            return "ReferenceNotFound"
        return self.issue.reason

    @property
    def reference(self) -> dict[str, Any] | None:
        """``status.resolvedRuntimeConfig``: the object that satisfied the name (scope Merged when both did)."""
        if self.namespaced is not None and self.cluster is not None:
            view = RuntimeConfigView.of(self.namespaced)
            return {
                "kind": "AIMRuntimeConfig",
                "name": view.name,
                "namespace": view.namespace,
                "scope": "Merged",
                "uid": view.uid,
            }
        for obj, kind, scope in (
            (self.namespaced, "AIMRuntimeConfig", "Namespace"),
            (self.cluster, "AIMClusterRuntimeConfig", "Cluster"),
        ):
            if obj is not None:
                view = RuntimeConfigView.of(obj)
                ref = {"kind": kind, "name": view.name, "scope": scope, "uid": view.uid}
                if scope == "Namespace":
                    ref["namespace"] = view.namespace
                return ref
        return None

    def health(self, *, missing_reason: str = "ReferenceNotFound", found_reason: str = "ConfigFound") -> Health:
        """The ``RuntimeConfig`` component as consumers report it (F17)."""
        if self.issue is not None:
            category = self.issue.category
            reason = missing_reason if category is Category.MISSING_UPSTREAM else self.issue.reason
            return Health.error(category, reason, self.issue.message, upstream=True)
        if not self.found:
            return Health.ok(
                "DefaultConfigNotFound",
                f"no runtime config named {self.name!r}; using built-in defaults",
                upstream=True,
            )
        return Health.ok(found_reason, f"using {_describe(self)}", upstream=True)


def _describe(resolution: Resolution) -> str:
    parts = []
    if resolution.namespaced is not None:
        parts.append(f"AIMRuntimeConfig {RuntimeConfigView.of(resolution.namespaced).namespace}/{resolution.name}")
    if resolution.cluster is not None:
        parts.append(f"AIMClusterRuntimeConfig {resolution.name}")
    return " merged over ".join(parts)


def resolve(
    name: str,
    namespaced: Mapping[str, Any] | None,
    cluster: Mapping[str, Any] | None,
) -> Resolution:
    """Resolve config ``name`` from the namespaced and cluster objects of that name (either may be absent)."""
    if namespaced is None and cluster is None:
        issue = None
        if name != DEFAULT_NAME:
            issue = Issue(
                Category.MISSING_UPSTREAM,
                "ConfigNotFound",
                f"runtime config {name!r} not found: create an AIMRuntimeConfig or AIMClusterRuntimeConfig "
                f"named {name!r}, or remove spec.runtimeConfigName to use the default",
            )
        return Resolution(name, {}, issue=issue)
    spec = merge_specs(normalize(spec_of(cluster)), normalize(spec_of(namespaced)))
    problems = _effective_problems(namespaced, cluster)
    issue = None
    if problems:
        issue = Issue(
            Category.INVALID_SPEC,
            "InvalidSpec",
            f"runtime config {name!r} cannot be used: {'; '.join(problems)}",
        )
    return Resolution(name, spec, namespaced, cluster, issue=issue)


def routing_enabled(service_routing: Mapping[str, Any] | None, config: Mapping[str, Any]) -> bool:
    """Service ``routing.enabled`` if set, else the config's, else off (F58)."""
    own = (service_routing or {}).get("enabled")
    if own is not None:
        return bool(own)
    return bool((config.get("routing") or {}).get("enabled"))


def pvc_headroom_percent(config: Mapping[str, Any]) -> int:
    value = (config.get("storage") or {}).get("pvcHeadroomPercent")
    return DEFAULT_PVC_HEADROOM_PERCENT if value is None else int(value)
