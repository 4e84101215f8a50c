"""The AIMModel / AIMClusterModel plan: runtime config, image metadata, templates, status (F20-F28).

Pure: :func:`plan_model` takes the model and what the controller observed and
returns a :class:`~aim_core.reconcile.plan.Plan`. Components, in this order
(the first failing one explains ``Ready``):

``RuntimeConfig``
    True ``ConfigFound``/``DefaultConfigNotFound``; a missing named config is
    ``ConfigNotFound`` (AIMModel) or ``ReferenceNotFound`` (AIMClusterModel),
    with ``ConfigValid`` False ``ReferenceNotFound`` and the model Failed.
``ImageMetadata``
    True ``ImageMetadataFound`` on the pass that read a canonical name, else
    ``ImageFound`` (so it reads ``ImageFound`` once settled, Q19). False:
    ``InvalidImageReference`` (InvalidSpec, Failed), ``SecretNotFound`` /
    ``InvalidPullSecret`` (the model Failed, no registry call made),
    ``InvalidImageMetadata`` (labels that cannot be read: Failed), and the
    registry error's own reason (below).
``ServiceTemplates`` (AIMModel) / ``ClusterServiceTemplates`` (AIMClusterModel)
    aggregated from the templates serving the model (F24).

Registry errors (:class:`~aim_core.registry.RegistryError`) by kind:
``not_found`` → Degraded, as upstream (Q8); ``auth`` → Failed with ``AuthValid``
False; ``invalid`` → Failed with ``ConfigValid`` False; ``rate_limited``,
``unavailable``, ``timeout`` → Degraded with ``DependenciesReachable`` False.
The plan asks to look again when the fetcher's backoff ends; existing
templates are kept while the metadata cannot be read.
"""

from __future__ import annotations

import copy
from typing import Any

from aim_core.model import images
from aim_core.model.aggregate import CLUSTER_COMPONENT, NAMESPACED_COMPONENT, templates_health
from aim_core.model.metadata import InvalidMetadata, ParsedMetadata, from_object, parse_labels
from aim_core.model.observed import CLUSTER, Observed
from aim_core.model.templates import custom_templates, is_as_generated, normalized_hardware, recommended_templates
from aim_core.model.validation import spec_problems
from aim_core.model.view import ModelView
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.labels import ORIGIN_AUTO_GENERATED, ORIGIN_LABEL
from aim_core.reconcile.obj import Obj, meta_of, spec_of
from aim_core.reconcile.plan import Deletion, Plan
from aim_core.reconcile.resources import CLUSTER_TEMPLATES, TEMPLATES
from aim_core.runtime.applyset import is_subset

RUNTIME_CONFIG = "RuntimeConfig"
IMAGE_METADATA = "ImageMetadata"
SOURCE_IMAGE = "Image"
SOURCE_CUSTOM = "Custom"
_IMMUTABLE = ("modelName", "metric", "precision", "hardware")

_REGISTRY_CATEGORY = {
    "auth": (Category.AUTH, State.FAILED),
    "invalid": (Category.INVALID_SPEC, State.FAILED),
    "not_found": (None, State.DEGRADED),
}


def describe(model: Obj, scope: str) -> str:
    meta = meta_of(model)
    if scope == CLUSTER:
        return f"AIMClusterModel {meta.get('name', '')}"
    return f"AIMModel {meta.get('namespace', '')}/{meta.get('name', '')}"


def plan_model(model: dict[str, Any], ob: Observed) -> Plan:
    plan = Plan()
    view = ModelView.of(model)
    plan.labels = ob.config.view.labels
    plan.status["sourceType"] = SOURCE_CUSTOM if view.model_sources else SOURCE_IMAGE

    # --- runtime config (F17)
    missing = "ReferenceNotFound" if ob.scope == CLUSTER else "ConfigNotFound"
    plan.component(RUNTIME_CONFIG, ob.config.health(missing_reason=missing))
    if ob.config.issue is not None:
        plan.issue(ob.config.issue.category, ob.config.issue_reason, ob.config.issue.message)
    if ob.config.reference is not None:
        plan.status["resolvedRuntimeConfig"] = ob.config.reference

    # --- what the schema cannot check
    for reason, message in spec_problems(model):
        plan.issue(Category.INVALID_SPEC, reason, message)

    # --- image metadata (F21, F22)
    parsed = _image_metadata(plan, view, ob)

    # --- templates (F23, F24, F27, F28)
    _plan_templates(plan, view, ob, parsed)
    return plan


# ---------------------------------------------------------------- image metadata


def _image_metadata(plan: Plan, model: ModelView, ob: Observed) -> ParsedMetadata | None:
    """Report the ``ImageMetadata`` component and status fields; the metadata when it is known."""
    image = model.image
    if ob.reference_error is not None:
        message = f"spec.image: {ob.reference_error}"
        plan.component(
            IMAGE_METADATA,
            Health.error(Category.INVALID_SPEC, "InvalidImageReference", message, upstream=True),
            blocking=True,
        )
        return None
    if ob.source == images.SPEC:
        parsed = from_object(model.image_metadata)
        plan.status["imageMetadata"] = copy.deepcopy(dict(model.image_metadata))
        plan.status["resolvedImage"] = {"image": image, "source": images.SOURCE_SPEC}
        fresh = model.status_image_metadata != model.image_metadata
        _metadata_ready(plan, parsed, fresh, "image metadata taken from spec.imageMetadata")
        return parsed
    if ob.source == images.DISABLED:
        plan.component(
            IMAGE_METADATA,
            Health.ok(
                "ImageFound",
                "image metadata extraction is disabled (spec.discovery.extractMetadata: false)",
                upstream=True,
            ),
        )
        return ParsedMetadata({})
    if ob.source == images.CACHED:
        parsed = from_object(model.status_image_metadata, "status.imageMetadata")
        _metadata_ready(plan, parsed, False, "image metadata available")
        return parsed
    # --- from the registry
    for read_error in ob.read_errors:
        plan.issue(read_error.category, read_error.reason, read_error.message)
    if ob.read_errors:
        first = ob.read_errors[0]
        plan.component(
            IMAGE_METADATA, Health(State.DEGRADED, first.reason, first.message, category=first.category, upstream=True)
        )
        return None
    if ob.secret_problems:
        for reason, message in ob.secret_problems:
            secret_category = Category.MISSING_UPSTREAM if reason == "SecretNotFound" else Category.INVALID_SPEC
            plan.issue(secret_category, "ReferenceNotFound" if reason == "SecretNotFound" else reason, message)
        reason, message = ob.secret_problems[0]
        plan.component(IMAGE_METADATA, Health(State.FAILED, reason, message, upstream=True))
        return None
    if ob.credentials_error is not None:
        plan.component(
            IMAGE_METADATA,
            Health.error(Category.INVALID_SPEC, "InvalidPullSecret", ob.credentials_error, upstream=True),
            blocking=True,
        )
        return None
    lookup = ob.lookup
    if lookup is None:  # blocked before asking (missing runtime config, invalid spec)
        return None
    if lookup.error is not None:
        error = lookup.error
        category, state = _REGISTRY_CATEGORY.get(error.kind, (Category.INFRASTRUCTURE, State.DEGRADED))
        if error.kind == "auth" and getattr(error, "anonymous", False):
            # Refused without credentials: registries answer so for images that do not exist, too. Degraded as a
            # missing image (Q8, upstream's custom-models/nonexistent-image), not an auth failure (issue 18).
            category, state = None, State.DEGRADED
        # the backoff of this failure, not the time left: the message must not change between reconciles
        retry = f"; next attempt within {lookup.backoff:.0f}s" if lookup.backoff else ""
        hint = _hint("anonymous" if error.kind == "auth" and getattr(error, "anonymous", False) else error.kind)
        message = f"{error.message}{hint}{retry}"
        plan.component(IMAGE_METADATA, Health(state, error.reason, message, category=category, upstream=True))
        if lookup.retry_in:
            plan.requeue(max(1.0, lookup.retry_in))
        return None
    info = lookup.info
    assert info is not None
    try:
        parsed = parse_labels(info.labels)
    except InvalidMetadata as exc:
        plan.component(
            IMAGE_METADATA,
            Health(
                State.FAILED,
                "InvalidImageMetadata",
                f"image {image}: {exc}; fix the image label or give the metadata in spec.imageMetadata",
                upstream=True,
            ),
        )
        return None
    plan.status["imageMetadata"] = parsed.metadata
    plan.status["resolvedImage"] = {"image": image, "digest": info.digest, "source": images.SOURCE_REGISTRY}
    _metadata_ready(plan, parsed, True, f"image metadata read from {image} ({info.digest})")
    return parsed


def _hint(kind: str) -> str:
    return {
        "auth": "; check spec.imagePullSecrets and the credentials in them",
        "not_found": "; check spec.image",
        "anonymous": "; check spec.image (the image may not exist), or add spec.imagePullSecrets if it is private",
        "invalid": "; spec.image must name a linux/amd64 container image",
    }.get(kind, "")


def _metadata_ready(plan: Plan, parsed: ParsedMetadata, fresh: bool, message: str) -> None:
    reason = "ImageMetadataFound" if fresh and parsed.canonical_name else "ImageFound"
    if parsed.problems:
        message += "; not turned into templates: " + "; ".join(parsed.problems)
        plan.notes += list(parsed.problems)
    plan.component(IMAGE_METADATA, Health.ok(reason, message, upstream=True))


# ---------------------------------------------------------------- templates


def _owned_by(obj: Obj, model: ModelView) -> bool:
    uid = model.uid
    return bool(uid) and any(
        r.get("uid") == uid and r.get("controller") for r in meta_of(obj).get("ownerReferences") or ()
    )


def _immutable_changed(want: Obj, live: Obj) -> bool:
    for key in _IMMUTABLE:
        w, h = want.get(key), live.get(key)
        if key == "hardware":
            w, h = normalized_hardware(w), normalized_hardware(h)
        if not (is_subset(w, h) and is_subset(h, w)):
            return True
    return False


def desired_templates(
    model: Obj | ModelView, ob: Observed, parsed: ParsedMetadata
) -> tuple[list[dict[str, Any]], list[str]]:
    """Templates the model wants, de-duplicated by name, and the names that collided."""
    model = ModelView.of(model)
    wanted: list[dict[str, Any]] = []
    if not model.model_sources and images.create_templates(model):
        wanted += recommended_templates(model, parsed.deployments)
    wanted += custom_templates(model)
    out: dict[str, dict[str, Any]] = {}
    duplicates: list[str] = []
    for tpl in wanted:
        name = tpl["metadata"]["name"]
        if name in out:
            duplicates.append(name)
            continue
        out[name] = tpl
    return list(out.values()), duplicates


def _plan_templates(plan: Plan, model: ModelView, ob: Observed, parsed: ParsedMetadata | None) -> None:
    component = CLUSTER_COMPONENT if ob.scope == CLUSTER else NAMESPACED_COMPONENT
    resource = CLUSTER_TEMPLATES if ob.scope == CLUSTER else TEMPLATES
    live = {t["metadata"]["name"]: t for t in ob.templates}
    if parsed is None or plan.issues and any(i.category.blocks_apply for i in plan.issues):
        # Metadata unknown (or the model is blocked): keep what exists, create nothing.
        plan.component(component, templates_health(ob.templates, metadata_known=parsed is not None, expected=True))
        return
    desired, duplicates = desired_templates(model, ob, parsed)
    for name in duplicates:
        plan.notes.append(f"two templates of this model would be named {name}; the first one is kept")
    kept: set[str] = set()
    for tpl in desired:
        name = tpl["metadata"]["name"]
        current = live.get(name)
        if current is not None and not _owned_by(current, model):
            plan.notes.append(f"template {name} exists and is not owned by this model; left alone")
            kept.add(name)
            continue
        if current is not None and _immutable_changed(tpl["spec"], spec_of(current)):
            # model name, metric, precision and hardware are immutable: replace the template
            plan.delete.append(Deletion(resource, current["metadata"].get("namespace"), name))
            plan.notes.append(f"template {name} is replaced: an immutable field changed")
            continue
        plan.want(resource, tpl)
        kept.add(name)
    for name, current in live.items():
        labels = meta_of(current).get("labels") or {}
        if name not in kept and _owned_by(current, model) and labels.get(ORIGIN_LABEL) == ORIGIN_AUTO_GENERATED:
            if not is_as_generated(current):  # a copy a user made and changed (or one we cannot vouch for): kept
                continue
            if not any(d.name == name for d in plan.delete):
                plan.delete.append(Deletion(resource, current["metadata"].get("namespace"), name))
                plan.notes.append(f"template {name} is no longer wanted and is deleted")
    serving = [t for t in ob.templates if not any(d.name == t["metadata"]["name"] for d in plan.delete)]
    plan.component(component, templates_health(serving, metadata_known=True, expected=bool(desired)))
