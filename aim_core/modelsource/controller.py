"""Controller for AIMClusterModelSource (F77-F80): wiring only.

Watches the source, the AIMClusterModels labelled with its name (a model
deleted by hand is created again; the count in status stays right), the
AIMClusterModels its latest sync matched that another source or a user made
(when such a model goes, with its source or by hand, this source creates its
own at once instead of at its next sync; when one appears, it is counted) and the
Secrets its ``imagePullSecrets`` name (the store keeps only those; a new or
changed pull secret syncs at once). Only a model's labels, image or existence
re-trigger the source, not its status.
Registry syncs are decided and run by :class:`~aim_core.modelsource.runner.SyncRunner`;
the plan is :func:`~aim_core.modelsource.plan.plan_source`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from aim_core.modelsource.observed import Observed
from aim_core.modelsource.plan import model_name, plan_source, source_label
from aim_core.modelsource.runner import SyncRunner
from aim_core.modelsource.view import SourceView
from aim_core.reconcile.labels import MODEL_SOURCE_LABEL
from aim_core.reconcile.obj import meta_of, spec_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import CLUSTER_MODEL_SOURCES, CLUSTER_MODELS, SECRETS
from aim_core.registry.credentials import SECRET_FIELD_SELECTOR, watched_secret
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import Store

BY_SOURCE = "by-model-source"
BY_LABEL = "by-label"
BY_SECRET = "model-source:by-pull-secret"


def _source_label_of(model: dict[str, Any]) -> list[str]:
    value = (meta_of(model).get("labels") or {}).get(MODEL_SOURCE_LABEL)
    return [value] if value else []


def _identity_changed(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    if old is None:
        return True
    return _source_label_of(old) != _source_label_of(new) or spec_of(old).get("image") != spec_of(new).get("image")


class ClusterModelSourceController(Controller):
    name: ClassVar[str] = "cluster-model-source"
    resource = CLUSTER_MODEL_SOURCES

    def __init__(self, runner: SyncRunner | None = None) -> None:
        self.runner = runner or SyncRunner()
        # model name -> sources whose latest sync matched it (in memory, as the syncs are)
        self._wanted: dict[str, set[str]] = {}
        self._wants: dict[str, frozenset[str]] = {}
        self._indexed: dict[str, Any] = {}  # source -> the sync its names were taken from (not again per reconcile)

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(CLUSTER_MODELS, BY_SOURCE, _source_label_of)
        store.add_index(CLUSTER_MODEL_SOURCES, BY_LABEL, lambda o: [source_label(o["metadata"]["name"])])
        store.add_index(CLUSTER_MODEL_SOURCES, BY_SECRET, lambda o: SourceView.of(o).secret_names)

    def watches(self) -> list[Watch]:
        return [
            Watch(CLUSTER_MODELS, self._sources_of_model, changed=_identity_changed),
            Watch(SECRETS, self._sources_of_secret),
        ]

    def store_filters(self) -> dict[Any, Any]:
        # Secrets of that name in other namespaces are kept too (cheap); only the operator namespace's are used.
        return {SECRETS: lambda secret: bool(self._sources_of_secret(secret))}

    def selections(self) -> dict[Any, list[Selection]]:
        # not the types nobody reads (Helm keeps releases of up to 1 MiB in Secrets); see SECRET_FIELD_SELECTOR
        return {SECRETS: [Selection(field_selector=SECRET_FIELD_SELECTOR)]}

    def _sources_of_secret(self, secret: dict[str, Any]) -> list[tuple[str | None, str]]:
        return sorted(self._store.keys_by_index(CLUSTER_MODEL_SOURCES, BY_SECRET, secret["metadata"]["name"]), key=str)

    def _sources_of_model(self, model: dict[str, Any]) -> list[tuple[str | None, str]]:
        keys: set[tuple[str | None, str]] = set()
        for label in _source_label_of(model):
            keys.update(self._store.keys_by_index(CLUSTER_MODEL_SOURCES, BY_LABEL, label))
        keys.update((None, source) for source in self._wanted.get(meta_of(model).get("name") or "", ()))
        return sorted(keys, key=str)

    def _remember_wanted(self, source: str, names: frozenset[str]) -> None:
        """Index the model names ``source`` matched, replacing what it matched before."""
        old = self._wants.get(source, frozenset())
        if old == names:
            return
        for name in old - names:
            holders = self._wanted.get(name)
            if holders is not None:
                holders.discard(source)
                if not holders:
                    del self._wanted[name]
        for name in names - old:
            self._wanted.setdefault(name, set()).add(source)
        if names:
            self._wants[source] = names
        else:
            self._wants.pop(source, None)

    def _forget_gone_sources(self, store: Store) -> None:
        for source in [s for s in self._indexed if store.get(CLUSTER_MODEL_SOURCES, None, s) is None]:
            self._remember_wanted(source, frozenset())
            del self._indexed[source]

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store = ctx.store
        source = SourceView.of(obj)
        name = source.name
        self.runner.forget_missing(lambda n: store.get(CLUSTER_MODEL_SOURCES, None, n) is not None)
        models = store.by_index(CLUSTER_MODELS, BY_SOURCE, source_label(name))
        wake = None
        if ctx.wake is not None:
            wake = lambda: ctx.wake(self.name, None, name)  # noqa: E731
        secrets = await self._pull_secrets(ctx, source.secret_names)
        observed = await self.runner.observe(
            ctx,
            obj,
            models,
            lambda model: store.get(CLUSTER_MODELS, None, model),
            wake=wake,
            secret_named=lambda secret: secrets.get(secret),
        )
        self._forget_gone_sources(store)
        if observed.sync is not None and self._indexed.get(name) is not observed.sync:
            self._indexed[name] = observed.sync
            matched = frozenset(model_name(m) for result in observed.sync.results for m in result.matches)
            self._remember_wanted(name, matched)
        return observed

    async def _pull_secrets(self, ctx: Context, names: list[str]) -> dict[str, dict[str, Any] | Exception | None]:
        """The named pull secrets of the operator namespace, from the store; one it lacks is read once and kept."""
        found: dict[str, dict[str, Any] | Exception | None] = {}
        for name in names:
            secret = ctx.store.get(SECRETS, ctx.operator_namespace, name)
            if secret is None and not ctx.extras.get("offline"):
                try:
                    secret = await ctx.kube.get(SECRETS, ctx.operator_namespace, name)
                except Exception as exc:  # noqa: BLE001 - reported as SecretAccessFailed, the sync goes on
                    found[name] = exc
                    continue
                if secret is not None and watched_secret(secret):
                    ctx.store.upsert(SECRETS, secret, copy_obj=False)  # kept and watched from now on
            found[name] = secret
        return found

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_source(obj, observed)
