"""Names of child objects, reproduced byte for byte from upstream (spec 2.5).

Most names follow one scheme (:func:`derived_name`): sanitised parts joined by
``-`` plus a short SHA-256 over the hash inputs, encoded the way Go's
``encoding/json`` encodes them (:func:`go_json`) and joined with ``|``. When the
result is too long, the longest part loses characters from its end. Discovery
jobs use their own scheme (:func:`discovery_job_name`).

Every computed example of spec table 2.5 is pinned in
``tests/reconcile/test_naming.py``. Public names are those without underscore.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from aim_core.reconcile.errors import ReconcileError
from aim_core.reconcile.gojson import go_json

_MAX = 63


# ---------------------------------------------------------------- sanitisers


def sanitize_name_part(value: str) -> str:
    """Lower-case; each char outside ``[a-z0-9-]`` → ``-`` (runs kept); trim ``-``; cut to 63; empty → ``part``."""
    cleaned = re.sub(r"[^a-z0-9-]", "-", value.lower()).strip("-")
    return cleaned[:_MAX].rstrip("-") or "part"


@functools.lru_cache(maxsize=4096)  # pure; the store's indexes ask it on every write of a service
def sanitize_label_value(value: str) -> str | None:
    """Label-value sanitiser (2.3): runs outside ``[a-z0-9._-]`` → ``_``, trimmed, ≤ 63; None when empty."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "_", value.lower()).strip("_.-")
    return cleaned[:_MAX].strip("_.-") or None


_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


@functools.lru_cache(maxsize=4096)  # pure; the store's indexes ask it on every write of a service
def hashed_label_value(value: str) -> str:
    """A label value standing for ``value``: ``value`` itself when it is a valid label value, else
    the sanitised value cut short and followed by ``-`` and 8 hex chars of its SHA-256.

    Unlike :func:`sanitize_label_value`, two long names sharing their first 63
    characters get different values, and the result is never empty.
    """
    if value and _LABEL_VALUE.fullmatch(value):
        return value
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    clean = (sanitize_label_value(value) or "")[: _MAX - 9].strip("_.-")
    return f"{clean}-{digest}" if clean else digest


def rfc1123(value: str) -> str:
    """An RFC 1123 label: lower-case, runs of other chars (dots included) → one ``-``, trimmed, ≤ 63."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return cleaned[:_MAX].strip("-")


def _image_token(value: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", value.lower())).strip("-")


# ---------------------------------------------------------------- generic scheme


def _hash(inputs: Iterable[Any], length: int) -> str:
    payload = "|".join(go_json(i) for i in inputs)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:length]


def derived_name(parts: Sequence[str], hash_inputs: Sequence[Any], hash_len: int, limit: int = _MAX) -> str:
    """The generic derived-name algorithm of spec 2.5.

    Parts are sanitised and joined with ``-``; ``-<hash>`` follows unless there
    are no hash inputs. While too long, the first longest part drops its last
    character (and trailing ``-``); stops when the longest part is one character.
    """
    names = [sanitize_name_part(p) for p in parts]
    suffix = f"-{_hash(hash_inputs, hash_len)}" if hash_inputs else ""
    while len("-".join(names)) + len(suffix) > limit:
        longest = max(len(n) for n in names)
        if longest <= 1:
            break
        i = next(i for i, n in enumerate(names) if len(n) == longest)
        names[i] = names[i][:-1].rstrip("-")
    return "-".join(names) + suffix


# ---------------------------------------------------------------- images


class ImageParts(NamedTuple):
    registry: str
    name: str  #: last path segment, normalised
    tag: str  #: tag, or 6 hex chars of the digest, or ``latest``; normalised


def _invalid_image(image: str, why: str) -> ReconcileError:
    return ReconcileError.invalid_spec("InvalidImageReference", f"invalid image reference {image!r}: {why}")


def image_parts(image: str) -> ImageParts:
    """Split an image reference into registry, name and tag as model names need them.

    Registry is the first path segment when it contains ``.`` or ``:`` or is
    ``localhost``, else ``docker.io``. A digest wins over a tag. Name and tag are
    lower-cased, other chars → ``-``, dash runs collapsed, trimmed.
    Raises InvalidSpec ``InvalidImageReference`` for empty names, empty tags and
    malformed digests.
    """
    ref = image.strip()
    if not ref:
        raise _invalid_image(image, "empty")
    tag = ""
    if "@" in ref:
        ref, digest = ref.split("@", 1)
        algorithm, _, hexpart = digest.partition(":")
        if not algorithm or not re.fullmatch(r"[0-9a-fA-F]{6,}", hexpart):
            raise _invalid_image(image, "malformed digest")
        tag = hexpart[:6]
    segments = ref.split("/")
    first = segments[0]
    has_registry = len(segments) > 1 and ("." in first or ":" in first or first == "localhost")
    registry = first if has_registry else "docker.io"
    last = segments[-1]
    if ":" in last:
        last, _, explicit = last.partition(":")
        if not explicit:
            raise _invalid_image(image, "empty tag")
        tag = tag or explicit
    name, tag = _image_token(last), _image_token(tag or "latest")
    if not name or not tag:
        raise _invalid_image(image, "no usable name or tag")
    return ImageParts(registry, name, tag)


def model_name_from_image(image: str) -> str:
    """AIMModel created for a service's ``model.image``: ``aim-dummy-0-1-10-9bf80281``."""
    image = image.strip()
    parts = image_parts(image)
    return derived_name([parts.name, parts.tag], [image], 8)


class ModelSourceKey(NamedTuple):
    """What identifies an inline model source for naming and de-duplication (F29)."""

    model_id: str
    source_uri: str
    endpoint_url: str = ""  #: value of the source's ``AWS_ENDPOINT_URL`` env var

    @classmethod
    def from_spec(cls, source: Mapping[str, Any]) -> ModelSourceKey:
        env = source.get("env") or []
        endpoint = next((e.get("value") or "" for e in env if e.get("name") == "AWS_ENDPOINT_URL"), "")
        return cls(source.get("modelId", ""), source.get("sourceUri", ""), endpoint)


def custom_model_name(base_image: str, sources: Sequence[ModelSourceKey]) -> str:
    """AIMModel created for a service's ``model.custom``: ``inline-test-model-2cfa2a00``."""
    if not sources:
        raise ReconcileError.invalid_spec("InvalidSpec", "model.custom needs at least one model source")
    inputs: list[Any] = [base_image]
    for source in sources:
        inputs += [source.model_id, source.source_uri]
        if source.endpoint_url:
            inputs.append(source.endpoint_url)
    return derived_name([sources[0].model_id], inputs, 8)


def cluster_model_name_from_source(registry: str, repository: str, tag: str) -> str:
    """AIMClusterModel created by a model source: ``amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-72f726``."""
    return derived_name([repository, tag], [registry, repository, tag], 6)


# ---------------------------------------------------------------- services


@functools.lru_cache(maxsize=4096)  # pure, and asked several times per reconcile
def inference_service_name(service: str, namespace: str) -> str:
    """InferenceService name, short enough that ``<isvc>-predictor-<namespace>`` is a DNS label."""
    limit = _MAX - len("-predictor-") - len(namespace)
    if limit < 10:
        raise ReconcileError.invalid_spec(
            "NamespaceTooLong",
            f"namespace {namespace!r} is too long ({len(namespace)} chars) to name an InferenceService: "
            f"'<name>-predictor-<namespace>' must fit in 63 characters; use a namespace of at most 42 characters",
        )
    return derived_name([service], [namespace], 8, limit)


@functools.lru_cache(maxsize=4096)  # pure, and asked several times per reconcile
def route_name(service: str, namespace: str) -> str:
    """HTTPRoute name: as the InferenceService's but with the plain 63 limit."""
    return derived_name([service], [namespace], 8)


@functools.lru_cache(maxsize=4096)  # pure, and asked several times per reconcile
def shared_cache_name(template: str, namespace: str) -> str:
    """Template cache a service uses in Shared mode: ``my-template-1080a608``."""
    return derived_name([template], [namespace], 8)


def dedicated_cache_name(template: str, service: str, service_uid: str) -> str:
    """Template cache a service owns alone (Dedicated mode)."""
    return derived_name([template, service], [service_uid], 8)


# ---------------------------------------------------------------- templates


_METRIC_ABBREV = {"latency": "lat", "throughput": "thr"}


def recommended_template_name(
    model_name: str, image: str, gpu_model: str = "", gpu_count: int = 0, metric: str = "", precision: str = ""
) -> str:
    """Template auto-created from a recommended deployment: ``ghcr-io-...-1x-mi300x-lat-fp16-0823``.

    The suffix is ``<count>x-<gpu>-<metric abbrev>-<precision>`` with unset
    fields left out (the all-set layout is pinned by the spec example; partial
    layouts are our reading of the rule). The hash covers
    ``<model>-<image>[-<gpu>][-x<count>][-<metric>][-<precision>]``.
    """
    metric_part = _METRIC_ABBREV.get(metric.lower(), metric)
    suffix = [f"{gpu_count}x" if gpu_count > 0 else "", gpu_model.lower(), metric_part, precision]
    key = [model_name, image, gpu_model, f"x{gpu_count}" if gpu_count > 0 else "", metric, precision]
    parts = [image] + (["-".join(s for s in suffix if s)] if any(suffix) else [])
    return derived_name(parts, ["-".join(k for k in key if k)], 4)


def custom_template_name(
    model_name: str,
    index: int,
    alias: str = "",
    profile: tuple[str, str] | None = None,
    gpu: tuple[int, str] | None = None,
) -> str:
    """Template for ``customTemplates[index]``: ``custom-model-test-custom-multi-gpu-mi300x-e999d587``.

    :param profile: ``(precision, metric)`` when the entry has a profile.
    :param gpu: ``(requests, model)`` when the merged hardware has a GPU.
    """
    parts = [model_name, "custom"]
    inputs: list[Any] = [model_name, index, alias]
    if alias:
        parts.append(alias)
    if profile is not None:
        inputs += [profile[0], profile[1]]
        if profile[0]:
            parts.append(profile[0])
    if gpu is not None:
        inputs += [gpu[0], gpu[1]]
        if gpu[1]:
            parts.append(gpu[1])
    return derived_name(parts, inputs, 8)


def auto_custom_template_name(model_name: str) -> str:
    """The single template of a custom model without ``customTemplates``: ``<model>-custom-<hash>``."""
    return derived_name([model_name, "custom"], [model_name, 0], 8)


def derived_template_name(
    base: str, gpu_model: str = "", gpu_count: int = 0, precision: str = "", metric: str = ""
) -> str:
    """Template derived from ``base`` by service overrides: ``my-template-ovr-mi300x-4gpu-fp8-throughput-b295``."""
    fields = [
        ("gpu", gpu_model, gpu_model.lower()),
        ("count", gpu_count, f"{gpu_count}gpu"),
        ("precision", precision, precision),
        ("metric", metric, metric),
    ]
    parts: list[str] = [base, "ovr"]
    inputs: list[Any] = []
    for key, value, part in fields:
        if value:
            parts.append(part)
            inputs += [key, value]
    return derived_name(parts, inputs, 4)


def discovery_job_name(
    template: str,
    model_name: str,
    image: str,
    *,
    service_account: str = "",
    env: Sequence[Mapping[str, Any]] = (),
    pull_secrets: Sequence[str] = (),
    metric: str = "",
    precision: str = "",
    gpu: tuple[str, int] | None = None,
    profile_id: str = "",
) -> str:
    """Discovery Job: ``discover-<template[:45]>-<8 hex>`` over the plain concatenation of the spec.

    Upstream keeps 46 characters of the template name, which makes 64-character
    names the API server refuses (the ``job-name`` pod label allows 63); 45 fit,
    and shorter names come out as upstream's. Dots (allowed in template names)
    become ``-`` so the name stays a valid label value ending in a letter or digit.

    :param gpu: ``(model, count)`` when the template has a GPU block.
    """
    pieces = [model_name, image, service_account]
    pieces += [f"{e.get('name', '')}{e.get('value') or ''}" for e in env]
    pieces += list(pull_secrets) + [metric, precision]
    if gpu is not None:
        pieces += [gpu[0], str(gpu[1])]
    pieces.append(profile_id)
    digest = hashlib.sha256("".join(pieces).encode("utf-8")).hexdigest()[:8]
    stem = template[:45].replace(".", "-").rstrip("-")
    return f"discover-{stem}-{digest}"


def discovery_spec_hash(
    model_name: str,
    image: str,
    metric: str = "",
    precision: str = "",
    gpu_model: str = "",
    gpu_count: int = 0,
    profile_id: str = "",
) -> str:
    """Template ``status.discovery.specHash``: 16 hex chars; a change resets discovery backoff."""
    text = f"{model_name}{image}{metric}{precision}{gpu_model}{gpu_count}{profile_id}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------- caches and artifacts


def artifact_name(
    source_uri: str,
    env: Sequence[Mapping[str, Any]] | None = None,
    storage_class: str = "",
    *,
    dedicated_to: str = "",
    storage: Mapping[str, Any] | None = None,
) -> str:
    """Artifact a template cache creates per model source: ``hf---sshleifer-tiny-gpt2-fc6a9647bb``.

    :param env: the merged env (cache env + source env); empty and None hash alike.
    :param dedicated_to: the cache name when the cache is in Dedicated mode.
    :param storage: the cache's own ``pvcHeadroomPercent``/``downloadFilter`` (issue 20); hashed only
        when set, so names without them stay upstream's.
    """
    inputs: list[Any] = [source_uri, list(env or []), storage_class]
    if dedicated_to:
        inputs += ["dedicated", dedicated_to]
    if storage:
        inputs += ["storage", {k: storage[k] for k in sorted(storage)}]
    return derived_name([source_uri.replace(".", "-")], inputs, 10)


def artifact_pvc_name(artifact: str, artifact_uid: str) -> str:
    return derived_name([artifact, "cache"], [artifact_uid], 8)


def download_job_name(artifact: str, artifact_uid: str) -> str:
    return derived_name([artifact, "download"], [artifact_uid], 8)


def check_size_job_name(artifact: str, artifact_uid: str) -> str:
    return derived_name([artifact, "check-size"], [artifact_uid], 8)


def cache_volume_name(artifact: str) -> str:
    """Volume name of a cached artifact on the InferenceService."""
    return rfc1123(artifact.replace(".", "-"))
