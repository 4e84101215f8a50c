"""Where a model's image metadata comes from, decided before any registry call (F21, F22).

:func:`metadata_source` looks only at the model and its runtime config:

``spec``
    ``spec.imageMetadata`` is given (air-gapped clusters): used as is, no
    registry call, no pull secret needed.
``disabled``
    ``spec.discovery.extractMetadata: false`` (or, when the model leaves it
    unset, the runtime config's ``model.autoDiscovery: false``): no registry
    call; the model has no recommended deployments.
``cached``
    ``status.imageMetadata`` was read from the registry for the image in
    ``spec.image`` (``status.resolvedImage`` says which): never fetched again,
    also not after an operator restart. A status written by an operator that
    did not record ``resolvedImage`` counts as cached too, as upstream never
    refetches.
``registry``
    everything else: the controller reads the image config from the registry.

Also here: the pull secrets a model references and where they live
(namespaced model: its namespace; cluster model: the operator namespace), and
the check of ``spec.image``, so that an unusable reference or a missing secret
is reported before anything is sent to a registry.

Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core.model.view import ModelView
from aim_core.reconcile.obj import Obj

SPEC = "spec"
DISABLED = "disabled"
CACHED = "cached"
REGISTRY = "registry"

SOURCE_REGISTRY = "Registry"  # status.resolvedImage.source
SOURCE_SPEC = "Spec"

DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"


def image_of(model: Obj | ModelView) -> str:
    return ModelView.of(model).image


def extract_metadata(model: Obj | ModelView, config: Mapping[str, Any] | None = None) -> bool:
    """``spec.discovery.extractMetadata``; unset → the runtime config's ``model.autoDiscovery``; unset → true."""
    own = ModelView.of(model).extract_metadata
    if own is not None:
        return own
    fallback = ((config or {}).get("model") or {}).get("autoDiscovery")
    return True if fallback is None else bool(fallback)


def create_templates(model: Obj | ModelView) -> bool:
    """``spec.discovery.createServiceTemplates``; unset → true."""
    own = ModelView.of(model).create_templates
    return True if own is None else own


def metadata_source(model: Obj | ModelView, config: Mapping[str, Any] | None = None) -> str:
    """One of :data:`SPEC`, :data:`DISABLED`, :data:`CACHED`, :data:`REGISTRY` (see the module docstring)."""
    view = ModelView.of(model)
    if view.image_metadata is not None:
        return SPEC
    if not extract_metadata(view, config):
        return DISABLED
    if view.status_image_metadata is not None:
        resolved = view.resolved_image
        if resolved is None:
            return CACHED
        if resolved.get("source") == SOURCE_REGISTRY and (resolved.get("image") or "") == view.image:
            return CACHED
    return REGISTRY


def pull_secret_names(model: Obj | ModelView) -> list[str]:
    """Names in ``spec.imagePullSecrets``, blanks dropped, order kept, duplicates removed."""
    return list(ModelView.of(model).pull_secret_names)


def secrets_namespace(model: Obj | ModelView, operator_namespace: str) -> str:
    """Where a model's pull secrets live: its own namespace, or the operator's for a cluster model."""
    return ModelView.of(model).namespace or operator_namespace


def secret_problem(name: str, namespace: str, secret: Obj | None) -> str | None:
    """Why a referenced pull secret cannot be used (missing, wrong type), or None."""
    if secret is None:
        return (
            f"image pull secret {name!r} not found in namespace {namespace!r}: create it "
            f"(type {DOCKER_CONFIG_JSON}) or remove it from spec.imagePullSecrets"
        )
    kind = secret.get("type") or "Opaque"
    if kind != DOCKER_CONFIG_JSON:
        return (
            f"image pull secret {namespace}/{name} has type {kind!r}; registry credentials must be a "
            f"{DOCKER_CONFIG_JSON} Secret (kubectl create secret docker-registry)"
        )
    return None
