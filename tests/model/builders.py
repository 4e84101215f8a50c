"""Small builders for model plan tests: wire-format models, templates and Observed values."""

from __future__ import annotations

import copy
from typing import Any

from aim_core.model.fetch import Lookup
from aim_core.model.images import metadata_source
from aim_core.model.observed import CLUSTER, NAMESPACE, Observed
from aim_core.model.templates import generated_digest
from aim_core.reconcile.labels import GENERATED_SPEC_ANNOTATION
from aim_core.registry import ImageInfo, ImageReference, RegistryError
from aim_core.runtimeconfig.resolution import config_name, resolve

API = "aim.eai.amd.com/v1alpha1"
NS = "ml-team"
IMAGE = "ghcr.io/silogen/aim-dummy:0.1.10"
DIGEST = "sha256:" + "ab" * 32


def model(name: str = "m", image: str = IMAGE, namespace: str | None = NS, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "generation": 1}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": API,
        "kind": "AIMModel" if namespace else "AIMClusterModel",
        "metadata": meta,
        "spec": {"image": image, **copy.deepcopy(spec)},
    }


def template(
    name: str,
    model_name: str = "m",
    namespace: str | None = NS,
    state: str | None = None,
    owner: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": API,
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
        meta["labels"] = {"aim.eai.amd.com/origin": "auto-generated"}
    obj = {
        "apiVersion": API,
        "kind": "AIMServiceTemplate" if namespace else "AIMClusterServiceTemplate",
        "metadata": meta,
        "spec": {"modelName": model_name, **spec},
    }
    if owner is not None:  # as the model made it: the digest of what it chose
        meta["annotations"] = {GENERATED_SPEC_ANNOTATION: generated_digest(obj["spec"])}
    if state:
        obj["status"] = {"status": state}
    return obj


def info(labels: dict[str, str] | None = None, digest: str = DIGEST) -> ImageInfo:
    return ImageInfo(digest=digest, labels=labels or {})


def observed(
    m: dict[str, Any],
    *,
    lookup: Lookup | ImageInfo | RegistryError | None = None,
    templates: list[dict[str, Any]] = (),
    configs: tuple[Any, Any] = (None, None),
    **extra: Any,
) -> Observed:
    ns = m["metadata"].get("namespace")
    config = resolve(config_name(m["spec"]), *configs)
    if isinstance(lookup, ImageInfo):
        lookup = Lookup(info=lookup, fetched=True)
    elif isinstance(lookup, RegistryError):
        lookup = Lookup(error=lookup, retry_in=60.0, backoff=60.0, fetched=True)
    reference = None
    try:
        reference = ImageReference.parse(m["spec"]["image"])
    except ValueError as exc:
        extra.setdefault("reference_error", str(exc))
    return Observed(
        scope=NAMESPACE if ns else CLUSTER,
        config=config,
        source=metadata_source(m, config.spec),
        reference=reference,
        lookup=lookup,
        templates=tuple(templates),
        **extra,
    )
