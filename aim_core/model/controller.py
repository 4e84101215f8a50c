"""The AIMModel and AIMClusterModel controllers: indexes, watches and the observe step.

Everything a model depends on re-triggers it through a store index, never a
scan (F19, F26):

* templates, by ``spec.modelName`` (namespaced templates → the AIMModel of
  their namespace, cluster templates → the AIMClusterModel), and by owner;
* runtime configs, by the name a model uses (``default`` included): a
  namespaced config re-triggers the models of its namespace, a cluster config
  every model using that name;
* image pull secrets, by the names models reference. Only Secrets some model
  references are kept in the store (of any type, so that a Secret of the wrong
  type is reported as such); a referenced Secret the store does not hold yet
  (it existed before the model named it) is read once directly and kept from
  then on.

Observe decides where the metadata comes from (:mod:`aim_core.model.images`)
and asks the registry only when it must, and only after the runtime config,
the spec and the pull secrets have been checked. The plan is pure and lives in
:mod:`aim_core.model.plan`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

from aim_core.model import images
from aim_core.model.fetch import ImageFetcher
from aim_core.model.observed import CLUSTER, NAMESPACE, Lookup, Observed
from aim_core.model.plan import plan_model
from aim_core.model.validation import spec_problems
from aim_core.model.view import ModelView
from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.errors import ErrorInfo, describe
from aim_core.reconcile.obj import spec_of
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import (
    CLUSTER_MODELS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    MODELS,
    RUNTIME_CONFIGS,
    SECRETS,
    TEMPLATES,
)
from aim_core.registry import ImageReference, InvalidImageReference, InvalidPullSecret, RegistryError, credentials_for
from aim_core.registry.credentials import SECRET_FIELD_SELECTOR, watched_secret
from aim_core.runtime.controller import Context, Controller, Watch
from aim_core.runtime.selection import Selection
from aim_core.runtime.store import ObjectKey, Store
from aim_core.runtimeconfig import config_name, resolve

BY_CONFIG = "model:by-config"
BY_SECRET = "model:by-pull-secret"
TEMPLATES_BY_MODEL = "model:templates-by-model"


def _ns(obj: dict[str, Any]) -> str | None:
    return obj["metadata"].get("namespace") or None


def _owner_names(obj: dict[str, Any], kind: str) -> list[str]:
    return [r["name"] for r in obj["metadata"].get("ownerReferences") or () if r.get("kind") == kind and r.get("name")]


class _ModelControllerBase(Controller):
    """What AIMModel and AIMClusterModel share; subclasses name the kinds of their scope."""

    scope: ClassVar[str]
    templates: ClassVar[ResourceRef]

    def __init__(self, plugins: Any, fetcher: ImageFetcher | None = None) -> None:
        self.plugins = plugins
        self.fetcher = fetcher or ImageFetcher()
        self._store: Store | None = None

    # ------------------------------------------------------------ indexes

    def setup(self, store: Store) -> None:
        self._store = store
        store.add_index(
            self.resource, BY_CONFIG, lambda m: {(_ns(m), config_name(spec_of(m))), (None, config_name(spec_of(m)))}
        )
        store.add_index(self.resource, BY_SECRET, lambda m: [(_ns(m), n) for n in images.pull_secret_names(m)])
        store.add_index(
            self.templates, TEMPLATES_BY_MODEL, lambda t: [(_ns(t), (spec_of(t).get("modelName") or "").strip())]
        )

    def _keys(self, index: str, value: Any) -> set[ObjectKey]:
        assert self._store is not None
        return self._store.keys_by_index(self.resource, index, value)

    # ------------------------------------------------------------- watches

    def watches(self) -> list[Watch]:
        def by_template(tpl: dict[str, Any]) -> Iterable[ObjectKey]:
            ns = _ns(tpl)
            names = {(spec_of(tpl).get("modelName") or "").strip(), *_owner_names(tpl, self.resource.kind)}
            return {(ns, n) for n in names if n}

        def by_config(cfg: dict[str, Any]) -> Iterable[ObjectKey]:
            return self._keys(BY_CONFIG, (_ns(cfg), cfg["metadata"]["name"]))

        def by_secret(secret: dict[str, Any]) -> Iterable[ObjectKey]:
            key = (
                (_ns(secret), secret["metadata"]["name"])
                if self.scope == NAMESPACE
                else (None, secret["metadata"]["name"])
            )
            return self._keys(BY_SECRET, key)

        return [
            Watch(self.templates, by_template),
            Watch(RUNTIME_CONFIGS, by_config),
            Watch(CLUSTER_RUNTIME_CONFIGS, by_config),
            Watch(SECRETS, by_secret),
        ]

    def store_filters(self) -> dict[Any, Any]:
        def referenced_pull_secret(secret: dict[str, Any]) -> bool:
            if self._store is None:
                return False
            name = secret["metadata"]["name"]
            key = (_ns(secret), name) if self.scope == NAMESPACE else (None, name)
            return bool(self._keys(BY_SECRET, key))

        return {SECRETS: referenced_pull_secret}

    def selections(self) -> dict[Any, list[Selection]]:
        # not the types nobody reads (Helm keeps releases of up to 1 MiB in Secrets); see SECRET_FIELD_SELECTOR
        return {SECRETS: [Selection(field_selector=SECRET_FIELD_SELECTOR)]}

    # ------------------------------------------------------------- observe

    async def observe(self, ctx: Context, obj: dict[str, Any]) -> Observed:
        store, model = ctx.store, ModelView.of(obj)
        ns = model.namespace or None
        name = config_name(model.spec)
        config = resolve(
            name, store.get(RUNTIME_CONFIGS, ns, name) if ns else None, store.get(CLUSTER_RUNTIME_CONFIGS, None, name)
        )
        templates = tuple(store.by_index(self.templates, TEMPLATES_BY_MODEL, (ns, model.name)))
        source = images.metadata_source(model, config.spec)
        base = dict(scope=self.scope, config=config, source=source, templates=templates)
        try:
            reference = ImageReference.parse(model.image)
        except InvalidImageReference as exc:
            return Observed(**base, reference_error=str(exc))
        if source != images.REGISTRY:
            return Observed(**base, reference=reference)
        if config.issue is not None or spec_problems(obj):
            return Observed(**base, reference=reference)  # reported first; no registry call for a broken model
        secrets_ns = images.secrets_namespace(model, ctx.operator_namespace)
        secrets, problems, read_error = await self._pull_secrets(ctx, model, secrets_ns)
        if problems or read_error is not None:
            return Observed(
                **base,
                reference=reference,
                secret_problems=tuple(problems),
                read_errors=(read_error,) if read_error is not None else (),
            )
        try:
            credentials = credentials_for(reference.registry, secrets)
        except InvalidPullSecret as exc:
            return Observed(**base, reference=reference, credentials_error=str(exc))
        if ctx.extras.get("offline"):
            error = RegistryError(
                "unavailable",
                f"offline: registry {reference.registry} not asked for {reference}",
                registry=reference.registry,
                image=str(reference),
            )
            return Observed(**base, reference=reference, lookup=Lookup(error=error))
        lookup = await self.fetcher.lookup(ctx.plugins, reference, credentials)
        return Observed(**base, reference=reference, lookup=lookup)

    async def _pull_secrets(
        self, ctx: Context, model: ModelView, namespace: str
    ) -> tuple[list[dict[str, Any]], list[tuple[str, str]], ErrorInfo | None]:
        """The referenced pull secrets in reference order, what is wrong with them, and a failed read."""
        found: list[dict[str, Any]] = []
        problems: list[tuple[str, str]] = []
        for secret_name in model.pull_secret_names:
            secret = ctx.store.get(SECRETS, namespace, secret_name)
            if secret is None:
                try:
                    secret = await ctx.kube.get(SECRETS, namespace, secret_name)
                except Exception as exc:  # noqa: BLE001 - a failed read becomes a condition
                    info = describe(exc)
                    return (
                        [],
                        [],
                        ErrorInfo(
                            info.category,
                            info.reason,
                            f"reading image pull secret {namespace}/{secret_name}: {info.message}",
                        ),
                    )
                if secret is not None and watched_secret(secret):
                    ctx.store.upsert(SECRETS, secret, copy_obj=False)  # kept and watched from now on
            problem = images.secret_problem(secret_name, namespace, secret)
            if problem is not None:
                problems.append(("SecretNotFound" if secret is None else "InvalidPullSecret", problem))
            elif secret is not None:
                found.append(secret)
        return found, problems, None

    def plan(self, obj: dict[str, Any], observed: Observed) -> Plan:
        return plan_model(obj, observed)


class ModelController(_ModelControllerBase):
    name: ClassVar[str] = "model"
    resource = MODELS
    scope = NAMESPACE
    templates = TEMPLATES


class ClusterModelController(_ModelControllerBase):
    name: ClassVar[str] = "cluster-model"
    resource = CLUSTER_MODELS
    scope = CLUSTER
    templates = CLUSTER_TEMPLATES


__all__ = ["ClusterModelController", "ModelController"]
