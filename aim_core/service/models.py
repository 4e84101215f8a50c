"""Which model an AIMService serves, and what to create when none fits (F46, F29, F45).

A service names its model in exactly one of three ways:

``spec.model.name``
    An AIMModel of that name in the service's namespace, else an
    AIMClusterModel of that name. Neither → MissingUpstream ``ModelNotFound``.
``spec.model.image``
    The models whose ``spec.image`` is that image. When none exists, a
    namespaced AIMModel is planned for it (label ``origin=auto-generated``, no
    owner: it outlives the service and is shared by every service asking for
    the same image).
``spec.model.custom``
    An AIMModel in the service's namespace with the same image and the same
    sources; when none exists, one is planned from the inline definition.

Decisions where upstream leaves room (spec section 5):

* **Several models with the image (Q9).** Upstream reports a plain error
  (Unknown → service Degraded and retried forever). Here the namespace wins
  over the cluster, as it does for ``model.name``: one AIMModel in the service
  namespace is used even when AIMClusterModels carry the same image. Only
  several matches in the deciding scope are an error: InvalidSpec
  ``AmbiguousModelImage`` (service Failed, no hot loop), naming the models.
* **Creation scope.** Upstream HEAD has no ``spec.model.creationScope`` on
  runtime configs (D12: the field belongs to an older design) and neither does
  our CRD, so auto-created models are always namespaced. ``config`` is taken
  so the call site stays stable should such a setting return.
* **Model states.** Ready → True ``ModelResolved``. Failed and Degraded →
  Failed ``ModelNotReady`` (as upstream: the service is Failed). NotAvailable
  (every template of the model lacks GPUs in this cluster) →
  NotAvailable ``ModelNotReady``, exactly like a NotAvailable template; the
  service's status map shows it as Pending while ``Ready`` names the model.
  Anything else (Pending, Progressing, no status yet) → Pending ``ModelNotReady``.
* **Sticky resolution (F45, Q25).** A model recorded in
  ``status.resolvedModel`` is kept while it exists, is Ready and still
  matches the spec, so a duplicate appearing later neither switches nor breaks
  a running service.
* **Name collisions.** When the name an auto-created model would get is held
  by a model that does not match (another image, other sources), nothing is
  applied over it: InvalidSpec ``ModelNameConflict``.

Everything here is pure and works on wire-format dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.model import ModelView
from aim_core.reconcile import naming
from aim_core.reconcile.errors import ReconcileError
from aim_core.reconcile.health import State
from aim_core.reconcile.labels import CUSTOM_MODEL_LABEL, ORIGIN_AUTO_GENERATED, ORIGIN_LABEL, SERVICE_LABEL
from aim_core.service.model_health import CLUSTER as CLUSTER
from aim_core.service.model_health import COMPONENT as COMPONENT
from aim_core.service.model_health import MODEL_KINDS, creating_model, found_model, lookup_failed
from aim_core.service.model_health import NAMESPACE as NAMESPACE
from aim_core.service.model_health import Model as Model
from aim_core.service.model_health import ModelResolution as ModelResolution
from aim_core.service.model_health import image_key as image_key
from aim_core.service.model_health import model_health as model_health
from aim_core.service.model_health import model_scope as model_scope
from aim_core.service.model_health import resolved_reference as resolved_reference
from aim_core.service.view import ServiceView

# ---------------------------------------------------------------- resolution


def resolve_model(
    service: Model,
    namespaced_models_by_name: Mapping[str, Model],
    cluster_models_by_name: Mapping[str, Model],
    models_by_image: Sequence[Model],
    namespaced_models: Sequence[Model],
    config: Mapping[str, Any] | None = None,
) -> ModelResolution:
    """Resolve the model of ``service`` from what was observed; never raises for user errors.

    :param service: the AIMService (wire dict).
    :param namespaced_models_by_name: AIMModels of the service namespace by name
        (at least the one ``spec.model.name`` names, and the one an auto-created model would take).
    :param cluster_models_by_name: AIMClusterModels by name.
    :param models_by_image: models of both scopes whose :func:`image_key` equals
        the service's image (models of other namespaces are ignored).
    :param namespaced_models: every AIMModel of the service namespace (for ``model.custom``).
    :param config: the service's merged runtime-config spec (currently unread, see module docstring).
    """
    del config  # no setting of the runtime config affects model resolution today (D12)
    view = ServiceView.of(service)
    wanted = view.model
    namespace = view.namespace
    known = _ModelsSeen(
        namespace, namespaced_models_by_name, cluster_models_by_name, models_by_image, namespaced_models
    )
    try:
        given = [way for way in ("name", "image", "custom") if wanted.get(way) is not None]
        if len(given) > 1:  # the CRD's CEL rule; an object written around it must not pick one silently
            raise ReconcileError.invalid_spec(
                "InvalidSpec",
                f"spec.model sets {' and '.join(given)}; exactly one of name, image or custom is allowed",
            )
        if wanted.get("name") is not None:
            return _by_name(wanted["name"], namespace, known, service)
        if wanted.get("image") is not None:
            return _by_image(wanted["image"], namespace, known, service)
        if wanted.get("custom") is not None:
            return _by_custom(wanted["custom"], namespace, known, service)
        raise ReconcileError.invalid_spec("InvalidSpec", "spec.model needs one of name, image or custom")
    except ReconcileError as error:
        return lookup_failed(error)


@attrs.frozen
class _ModelsSeen:
    """The observed models, filtered to what the service may use."""

    namespace: str
    by_name: Mapping[str, Model]
    cluster_by_name: Mapping[str, Model]
    image_matches: Sequence[Model]
    in_namespace: Sequence[Model]

    def usable(self, model: Model) -> bool:
        return model_scope(model) == CLUSTER or ModelView.of(model).namespace == self.namespace

    def namespaced(self, name: str) -> Model | None:
        """The AIMModel ``name`` of the service namespace, wherever it was passed in."""
        for model in (self.by_name.get(name), *self.in_namespace, *self.image_matches):
            if (
                model is not None
                and model_scope(model) == NAMESPACE
                and self.usable(model)
                and ModelView.of(model).name == name
            ):
                return model
        return None

    def everything(self) -> Iterable[Model]:
        yield from self.by_name.values()
        yield from self.cluster_by_name.values()
        yield from self.image_matches
        yield from self.in_namespace

    def recorded(self, service: Model) -> Model | None:
        """The model of ``status.resolvedModel`` if it is still there and Ready (F45)."""
        ref = ServiceView.of(service).resolved_model
        scope = ref.get("scope") or (NAMESPACE if ref.get("namespace") else CLUSTER)
        if not ref.get("name") or scope not in MODEL_KINDS:
            return None
        for model in self.everything():
            found = ModelView.of(model)
            if (
                model_scope(model) == scope
                and found.name == ref["name"]
                and self.usable(model)
                and (not ref.get("uid") or not found.uid or ref["uid"] == found.uid)
                and found.state == State.READY.value
            ):
                return model
        return None


def _by_name(raw: str, namespace: str, known: _ModelsSeen, service: Model) -> ModelResolution:
    name = raw.strip()
    if not name:
        raise ReconcileError.invalid_spec("InvalidSpec", "spec.model.name is empty")
    sticky = known.recorded(service)
    if sticky is not None and ModelView.of(sticky).name == name:
        return found_model(sticky)
    model = known.namespaced(name) or known.cluster_by_name.get(name)
    if model is None:
        raise ReconcileError.missing_upstream(
            "ModelNotFound",
            f"model {name!r} not found: no AIMModel {name!r} in namespace {namespace!r} "
            f"and no AIMClusterModel {name!r}",
        )
    return found_model(model)


def _same_image(model: Model, key: str) -> bool:
    return ModelView.of(model).image == key


def _by_image(raw: str, namespace: str, known: _ModelsSeen, service: Model) -> ModelResolution:
    image = image_key(raw)
    naming.image_parts(image)  # raises InvalidImageReference for unusable strings
    sticky = known.recorded(service)
    if sticky is not None and _same_image(sticky, image):
        return found_model(sticky)
    matches = [m for m in known.image_matches if known.usable(m) and _same_image(m, image)]
    for scope in (NAMESPACE, CLUSTER):
        scoped = sorted((m for m in matches if model_scope(m) == scope), key=lambda m: m["metadata"]["name"])
        if len(scoped) == 1:
            return found_model(scoped[0])
        if len(scoped) > 1:
            where = f"namespace {namespace!r}" if scope == NAMESPACE else "the cluster"
            names = ", ".join(m["metadata"]["name"] for m in scoped)
            raise ReconcileError.invalid_spec(
                "AmbiguousModelImage",
                f"image {image!r} is used by {len(scoped)} {MODEL_KINDS[scope]}s in {where} ({names}); "
                f"delete the duplicates, or recreate the service with spec.model.name set to one of them",
            )
    desired = image_model(service, image)
    _guard_name(desired, known, lambda m: _same_image(m, image), f"image {image!r}")
    return creating_model(desired, f"for image {image!r}")


def _guard_name(desired: dict[str, Any], known: _ModelsSeen, fits: Callable[[Model], bool], what: str) -> None:
    name = desired["metadata"]["name"]
    holder = known.namespaced(name)
    if holder is not None and not fits(holder):
        raise ReconcileError.invalid_spec(
            "ModelNameConflict",
            f"cannot create AIMModel {desired['metadata']['namespace']}/{name} for {what}: "
            f"a model of that name exists with a different definition; rename or delete it",
        )


def _copied_from_service(view: ServiceView) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if config := (view.runtime_config_name or "").strip():
        out["runtimeConfigName"] = config
    if view.image_pull_secrets:
        out["imagePullSecrets"] = [dict(s) for s in view.image_pull_secrets]
    if view.service_account_name:
        out["serviceAccountName"] = view.service_account_name
    return out


def image_model(service: Model, image: str) -> dict[str, Any]:
    """The AIMModel planned for a service's ``model.image`` (F46); apply it unowned."""
    image = image_key(image)
    view = ServiceView.of(service)
    return {
        "metadata": {
            "name": naming.model_name_from_image(image),
            "namespace": view.namespace,
            "labels": {ORIGIN_LABEL: ORIGIN_AUTO_GENERATED},
        },
        "spec": {"image": image, **_copied_from_service(view)},
    }


# ---------------------------------------------------------------- custom models (F29)


def _source_keys(sources: Sequence[Mapping[str, Any]] | None) -> list[naming.ModelSourceKey]:
    return [naming.ModelSourceKey.from_spec(s) for s in sources or []]


def _same_custom(model: Model, image: str, keys: list[naming.ModelSourceKey]) -> bool:
    view = ModelView.of(model)
    return view.image == image and _source_keys(view.model_sources) == keys


def _by_custom(custom: Mapping[str, Any], namespace: str, known: _ModelsSeen, service: Model) -> ModelResolution:
    image = image_key(custom.get("baseImage") or "")
    naming.image_parts(image)
    keys = _source_keys(custom.get("modelSources"))
    desired = custom_model(service)  # raises InvalidSpec without sources
    sticky = known.recorded(service)
    if sticky is not None and model_scope(sticky) == NAMESPACE and _same_custom(sticky, image, keys):
        return found_model(sticky)
    name = desired["metadata"]["name"]
    matches = [
        m
        for m in known.in_namespace
        if known.usable(m) and model_scope(m) == NAMESPACE and _same_custom(m, image, keys)
    ]
    if matches:
        # Prefer the model we would have created, then the first by name: stable across reconciles.
        return found_model(min(matches, key=lambda m: (m["metadata"]["name"] != name, m["metadata"]["name"])))
    _guard_name(desired, known, lambda m: _same_custom(m, image, keys), "spec.model.custom")
    return creating_model(desired, f"for custom model {keys[0].model_id!r}")


def custom_model(service: Model) -> dict[str, Any]:
    """The AIMModel planned for a service's ``model.custom`` (F29); apply it unowned."""
    view = ServiceView.of(service)
    custom = view.model.get("custom") or {}
    image = image_key(custom.get("baseImage") or "")
    sources = [dict(s) for s in custom.get("modelSources") or []]
    model_spec: dict[str, Any] = {"image": image, "modelSources": sources}
    if custom.get("hardware") is not None:
        model_spec["custom"] = {"hardware": custom["hardware"]}
    model_spec.update(_copied_from_service(view))
    if view.env:
        model_spec["env"] = [dict(e) for e in view.env]
    return {
        "metadata": {
            "name": naming.custom_model_name(image, _source_keys(sources)),
            "namespace": view.namespace,
            "labels": {
                ORIGIN_LABEL: ORIGIN_AUTO_GENERATED,
                CUSTOM_MODEL_LABEL: "true",
                SERVICE_LABEL: naming.hashed_label_value(view.name),  # long names: cut + hash
            },
        },
        "spec": model_spec,
    }
