"""Label and annotation keys, label propagation and controller identity labels (2.3, F81, F82, F13).

Propagation patterns use Go's ``path/filepath.Match`` semantics (Q20), not
:mod:`fnmatch`: ``*`` and ``?`` never cross ``/``, ``[...]`` classes (``^``
negates) and ``\\`` escapes work, and a malformed pattern matches nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from aim_core.reconcile.naming import sanitize_label_value

__all__ = [
    "AIM_PREFIX",
    "glob_match",
    "glob_problem",
    "controller_labels",
    "is_paused",
    "propagate_labels",
]

AIM_PREFIX = "aim.eai.amd.com/"

# Labels written by the operator.
MODEL_LABEL = AIM_PREFIX + "model"
ORIGIN_LABEL = AIM_PREFIX + "origin"
TEMPLATE_ALIAS_LABEL = AIM_PREFIX + "template.alias"
CUSTOM_MODEL_LABEL = AIM_PREFIX + "custom-model"
SERVICE_LABEL = AIM_PREFIX + "service"
TEMPLATE_LABEL = AIM_PREFIX + "template"
METRIC_LABEL = AIM_PREFIX + "metric"
PRECISION_LABEL = AIM_PREFIX + "precision"
TEMPLATE_NAME_LABEL = AIM_PREFIX + "template.name"
TEMPLATE_SCOPE_LABEL = AIM_PREFIX + "template.scope"
TEMPLATE_INDEX_LABEL = AIM_PREFIX + "template.index"
TEMPLATE_CACHE_NAME_LABEL = AIM_PREFIX + "template-cache.name"
TEMPLATE_CREATED_LABEL = "template-created"  # unprefixed legacy key on cache-created artifacts
CACHE_NAME_LABEL = AIM_PREFIX + "cache.name"
CACHE_TYPE_LABEL = AIM_PREFIX + "cache.type"
COMPONENT_LABEL = AIM_PREFIX + "component"
SOURCE_MODEL_LABEL = AIM_PREFIX + "source-model"
MODEL_SOURCE_LABEL = AIM_PREFIX + "model-source"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
K8S_COMPONENT_LABEL = "app.kubernetes.io/component"
K8S_NAME_LABEL = "app.kubernetes.io/name"

ORIGIN_AUTO_GENERATED = "auto-generated"
ORIGIN_DERIVED = "derived"
MANAGED_BY_ENGINE = "aim-engine"  # ISVC, HTTPRoute, derived templates
MANAGED_BY_DISCOVERY = "aim-controller"  # discovery Jobs

# The Jobs the operator runs, as their labels tell them apart (the metrics count them by type).
DISCOVERY_JOB_LABELS = {
    K8S_NAME_LABEL: "aim-discovery",
    K8S_COMPONENT_LABEL: "discovery",
    MANAGED_BY_LABEL: MANAGED_BY_DISCOVERY,
}
ARTIFACT_DOWNLOAD = "download"  # COMPONENT_LABEL of an artifact's download Job and pods
ARTIFACT_CHECK_SIZE = "check-size"  # COMPONENT_LABEL of an artifact's size-check Job and pods

# Labels read from other systems.
KSERVE_ISVC_LABEL = "serving.kserve.io/inferenceservice"
JOB_NAME_LABEL = "job-name"

# Annotations.
PAUSED_ANNOTATION = AIM_PREFIX + "reconciliation-paused"
AUTOSCALER_CLASS_ANNOTATION = "serving.kserve.io/autoscalerClass"
OTEL_INJECT_ANNOTATION = "sidecar.opentelemetry.io/inject"
PROMETHEUS_PORT_ANNOTATION = "prometheus.kserve.io/port"
SOURCE_REGISTRY_ANNOTATION = AIM_PREFIX + "source-registry"
SOURCE_REPOSITORY_ANNOTATION = AIM_PREFIX + "source-repository"
SOURCE_TAG_ANNOTATION = AIM_PREFIX + "source-tag"

# Finalizers and leases.
SERVICE_FINALIZER = AIM_PREFIX + "template-cache-cleanup"
# On templates a model generates: a digest of the fields it chose (model, metric, precision, hardware). A model
# deletes a template it no longer wants only while the template still matches it: a copy a user made and changed
# (upstream's hack/clone-templates-for-gpu.sh keeps the owner and origin label) is never touched (issue 18).
GENERATED_SPEC_ANNOTATION = AIM_PREFIX + "generated-spec"
TEMPLATE_CACHE_FINALIZER = AIM_PREFIX + "artifactcleanup"
DISCOVERY_LEASE = "aim-discovery-lock"


def is_paused(metadata: Mapping[str, Any] | None) -> bool:
    """True when the reconciliation-paused annotation is exactly ``"true"`` (F13)."""
    annotations = (metadata or {}).get("annotations") or {}
    return annotations.get(PAUSED_ANNOTATION) == "true"


# ---------------------------------------------------------------- glob


class _BadPattern(Exception):
    pass


def _escaped(chunk: str) -> tuple[str, str]:
    """One (possibly ``\\``-escaped) char of a character class, and the rest."""
    if not chunk or chunk[0] in "-]":
        raise _BadPattern
    if chunk[0] == "\\":
        chunk = chunk[1:]
        if not chunk:
            raise _BadPattern
    char, rest = chunk[0], chunk[1:]
    if not rest:
        raise _BadPattern
    return char, rest


def _scan_chunk(pattern: str) -> tuple[bool, str, str]:
    star = False
    while pattern.startswith("*"):
        pattern, star = pattern[1:], True
    in_range, i = False, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            i += 1
        elif ch == "[":
            in_range = True
        elif ch == "]":
            in_range = False
        elif ch == "*" and not in_range:
            break
        i += 1
    return star, pattern[:i], pattern[i:]


def _match_chunk(chunk: str, s: str) -> str | None:
    """Match ``chunk`` at the start of ``s``: the rest of ``s``, or None. Raises on bad syntax."""
    failed = False
    while chunk:
        failed = failed or not s
        head = chunk[0]
        if head == "[":
            char = "" if failed else s[0]
            s = s if failed else s[1:]
            chunk = chunk[1:]
            negated = chunk.startswith("^")
            chunk = chunk[1:] if negated else chunk
            matched, count = False, 0
            while not (chunk.startswith("]") and count > 0):
                lo, chunk = _escaped(chunk)
                hi = lo
                if chunk[0] == "-":
                    hi, chunk = _escaped(chunk[1:])
                matched = matched or (lo <= char <= hi and char != "")
                count += 1
            chunk = chunk[1:]
            failed = failed or matched == negated
        elif head == "?":
            failed = failed or s[0] == "/"
            s = s if failed else s[1:]
            chunk = chunk[1:]
        else:
            if head == "\\":
                chunk = chunk[1:]
                if not chunk:
                    raise _BadPattern
            if not failed:
                failed = chunk[0] != s[0]
                s = s[1:]
            chunk = chunk[1:]
    return None if failed else s


def _skip_and_match(chunk: str, name: str, last: bool) -> str | None:
    """After a ``*``: try the chunk after skipping 1, 2, ... chars, never skipping a ``/``."""
    for i, ch in enumerate(name):
        if ch == "/":
            return None
        rest = _match_chunk(chunk, name[i + 1 :])
        if rest is not None and not (last and rest):
            return rest
    return None


def _match(pattern: str, name: str) -> bool:
    while pattern:
        star, chunk, pattern = _scan_chunk(pattern)
        if star and not chunk:
            return "/" not in name  # a trailing * takes the rest unless it holds a /
        rest = _match_chunk(chunk, name)
        if rest is not None and (not rest or pattern):
            name = rest
            continue
        rest = _skip_and_match(chunk, name, last=not pattern) if star else None
        if rest is not None:
            name = rest
            continue
        while pattern:  # no match; a malformed remainder is still an error, as in Go
            _, chunk, pattern = _scan_chunk(pattern)
            _match_chunk(chunk, "")
        return False
    return not name


def glob_match(pattern: str, key: str) -> bool:
    """``filepath.Match(pattern, key)`` on a ``/`` system; a malformed pattern gives False."""
    try:
        return _match(pattern, key)
    except _BadPattern:
        return False


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is malformed (Go would return ``ErrBadPattern``), or None when it is fine."""
    try:
        _match(pattern, "")  # matching the empty name scans every chunk of the pattern
    except _BadPattern:
        return f"malformed glob pattern {pattern!r}: check '[...]' classes and '\\' escapes; it never matches"
    return None


# ---------------------------------------------------------------- propagation


def propagate_labels(
    parent_labels: Mapping[str, str] | None,
    child_labels: Mapping[str, str] | None,
    enabled: bool,
    patterns: Iterable[str] = (),
) -> dict[str, str]:
    """Child labels plus the parent labels that propagate (F81); child keys are never overwritten.

    ``aim.eai.amd.com/*`` keys always propagate; others only when ``enabled`` and
    the key matches one of ``patterns``.
    """
    result = dict(child_labels or {})
    patterns = list(patterns)
    for key, value in (parent_labels or {}).items():
        if key in result:
            continue
        if key.startswith(AIM_PREFIX) or (enabled and any(glob_match(p, key) for p in patterns)):
            result[key] = value
    return result


def controller_labels(controller: str, parent_name: str, child_labels: Mapping[str, str] | None) -> dict[str, str]:
    """Child labels plus the controller identity labels, where absent (F82).

    ``controller`` is the short name (``service``, ``template-cache``, ...):
    adds ``app.kubernetes.io/managed-by=aim-<controller>-controller`` and
    ``aim.eai.amd.com/<controller>.name=<parent>`` (label-sanitised).
    """
    result = dict(child_labels or {})
    result.setdefault(MANAGED_BY_LABEL, f"aim-{controller}-controller")
    value = sanitize_label_value(parent_name)
    if value is not None:
        result.setdefault(f"{AIM_PREFIX}{controller}.name", value)
    return result
