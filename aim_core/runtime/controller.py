"""What a controller declares, and the context its observe step reads from.

A controller is a small object: the resource it reconciles, the resources
whose changes should re-trigger it (with a mapper from a changed object to
the keys to reconcile), an async ``observe`` that gathers inputs (mostly from
the store, errors captured as values), and a pure ``plan``. The engine
(:mod:`aim_core.runtime.engine`) does the rest, identically for every controller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

import attrs

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.health import State
from aim_core.reconcile.plan import Plan
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store

Mapper = Callable[[dict[str, Any]], Iterable[ObjectKey]]


@attrs.frozen
class Watch:
    """Re-trigger the controller when an object of ``resource`` changes.

    ``mapper`` returns the keys (namespace, name) of the controller's objects
    that depend on the changed object; it must read indexes, not scan.
    """

    resource: ResourceRef
    mapper: Mapper
    changed: Callable[[dict[str, Any] | None, dict[str, Any]], bool] | None = None
    """Optional filter: only changes for which ``changed(old, new)`` is true re-trigger."""
    coalesce: bool = False
    """Gather triggers that come in a row into one reconcile (:meth:`~aim_core.runtime.workqueue.WorkQueue.add_soon`):
    for children whose status changes arrive as separate events (a pod Ready, then its InferenceService)."""


@attrs.define
class Context:
    """What observe steps may use: the store, the API adapter, the plugins, settings."""

    store: Store
    kube: Any  # aim_core.kube.Kube; typed loosely so plan-side modules need not import it
    plugins: Any  # pluggy.PluginManager
    operator_namespace: str
    extras: dict[str, Any] = attrs.field(factory=dict)
    wake: Callable[[str, str | None, str], None] | None = None
    """Reconcile ``(controller name, namespace, name)`` soon; set by the engine. For work that
    finishes outside a reconcile (a background registry sync) and must be looked at."""


def namespace_going(namespace: Mapping[str, Any] | None) -> bool:
    """Whether a namespace is gone (not in the store) or terminating: finalizers then step aside (F15)."""
    if namespace is None:
        return True
    return (
        bool((namespace.get("metadata") or {}).get("deletionTimestamp"))
        or (namespace.get("status") or {}).get("phase") == "Terminating"
    )


class Controller:
    """Base class of all controllers; subclasses set the class attributes and implement the steps."""

    name: ClassVar[str]  # e.g. "service" → field manager "aim-service-controller"
    resource: ClassVar[ResourceRef]
    finalizer: ClassVar[str | None] = None
    status_map: ClassVar[dict[State, State]] = {}
    writes_status: ClassVar[bool] = True
    root_status: ClassVar[bool] = True  # whether the kind has a `status.status` field
    one_event_per_state: ClassVar[bool] = False  # fold component transitions into the Ready change's Event

    @property
    def field_manager(self) -> str:
        return f"aim-{self.name}-controller"

    def setup(self, store: Store) -> None:
        """Register the store indexes this controller's mappers and observe step use."""

    def watches(self) -> list[Watch]:
        """Other resources whose changes re-trigger this controller."""
        return []

    def extra_resources(self) -> list[ResourceRef]:
        """Resources the observe step reads from the store without being re-triggered."""
        return []

    def event_sources(self) -> list[ResourceRef]:
        """Kinds whose Events the observe step reads (from the store, see :mod:`aim_core.runtime.eventstore`).

        The operator watches Events about each of them; a controller that reads
        them also declares ``Watch(EVENTS, mapper)`` to be re-triggered by one.
        """
        return []

    def selections(self) -> dict[ResourceRef, list[Selection]]:
        """Per resource this controller watches or reads, the only objects it ever reads, as selectors the
        API server applies (a watch stream per :class:`~aim_core.runtime.selection.Selection`).

        A resource not named is watched whole; one that any controller needs whole
        is watched whole. What a controller reads outside its selections (e.g. a
        Secret of the wrong type it names in a condition) it reads with a GET.
        """
        return {}

    def store_filters(self) -> dict[ResourceRef, Callable[[dict[str, Any]], bool]]:
        """Per watched resource, which objects are worth keeping in the store (default: all).

        Objects of a resource are kept when any controller's filter accepts them
        (or when a controller declares no filter for it).
        """
        return {}

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Any:
        """Gather inputs for :meth:`plan`; never raise for a failed read, return it."""
        return None

    def plan(self, obj: dict[str, Any], observed: Any) -> Plan:
        """Decide children, components and status fields. Pure."""
        raise NotImplementedError

    def has_cleanup_duties(self, store: Store, obj: dict[str, Any]) -> bool:
        """Whether ``obj`` needs its ``finalizer`` now, before planning (default: always, from the first reconcile).

        A controller whose finalizer only matters once it created something
        answers from the store here and sets ``plan.finalizer`` when a plan is
        about to create such a thing: the finalizer is then added right before
        that apply, and an object without duties costs no write and never
        waits for the operator to be deleted.
        """
        return True

    async def finalize(self, ctx: Context, obj: dict[str, Any]) -> None:
        """Clean up before the finalizer is removed (only called when ``finalizer`` is set)."""
