"""What a model source asks for: ``spec.images`` or ``spec.filters`` read into selectors (F77, F78, D41).

Each entry becomes one :class:`Selector`: a registry, a repository (possibly
a ``*`` pattern), an optional explicit tag, exclusions and the version
constraints that apply to it. Forms accepted, in both lists:

* ``org/repo`` and ``org/repo*``: repositories on ``spec.registry`` (default ``docker.io``);
* ``org/repo:tag``: exactly that tag (``versions`` are ignored for it);
* ``host/org/repo:tag``, ``host/org/repo*``: a first path segment with a ``.``
  or a ``:`` (or ``localhost``) is a registry host and overrides ``spec.registry``.

A ``*`` matches any run of characters, ``/`` included, over the whole
repository name. ``exclude`` lists repository names (registry ignored) that
never match. A filter's own ``versions`` win over the global ones.

Wildcards are HEAD behaviour; the newer model-sources document lists them as
unsupported (D42). We accept them: they are a superset and upstream's docs
show ``amdenterpriseai/aim-*``.

An entry that cannot be used (bad reference, bad constraint) still yields a
selector, carrying the :class:`Problem`; the source reports it and the other
entries sync. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from aim_core.modelsource.versions import ConstraintError, Constraints, parse_constraints

__all__ = [
    "DEFAULT_REGISTRY",
    "Match",
    "Problem",
    "Selector",
    "canonical_registry",
    "parse_selectors",
    "split_image",
]

DEFAULT_REGISTRY = "docker.io"
_DOCKER_HUB_ALIASES = {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}
_HOST = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]{1,5})?$"
)
_IPV6_HOST = re.compile(r"^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$")
_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")

# Reasons a selector cannot be used as written.
INVALID_IMAGE = "InvalidImage"
INVALID_REGISTRY = "InvalidRegistry"
INVALID_VERSION_CONSTRAINT = "InvalidVersionConstraint"


@attrs.frozen
class Problem:
    """Why a selector cannot sync; ``reason`` is a CamelCase word, ``message`` says what to fix."""

    reason: str
    message: str


@attrs.frozen(order=True)
class Match:
    """One image a selector matched: the unit a model is created for."""

    registry: str
    repository: str
    tag: str

    @property
    def image(self) -> str:
        """``spec.image`` of the model: Docker Hub images without a registry prefix (F79)."""
        if self.registry == DEFAULT_REGISTRY:
            return f"{self.repository}:{self.tag}"
        return f"{self.registry}/{self.repository}:{self.tag}"


@attrs.frozen
class Selector:
    """One entry of ``spec.images`` or ``spec.filters``, ready to list and match."""

    field: str  #: where it was written, e.g. ``spec.filters[1].image``
    text: str  #: as written
    registry: str = DEFAULT_REGISTRY
    repository: str = ""
    tag: str | None = None
    exclude: frozenset[str] = frozenset()
    constraints: Constraints = Constraints()
    problem: Problem | None = None
    _pattern: re.Pattern[str] | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def wildcard(self) -> bool:
        return "*" in self.repository

    @property
    def strategy(self) -> str:
        """How it is listed (F77): ``explicit`` (no network), ``tags`` (one repository) or ``repositories``."""
        if self.wildcard:
            return "repositories"
        return "explicit" if self.tag is not None else "tags"

    @property
    def label(self) -> str:
        """How messages name it: the field and the text."""
        return f"{self.field} ({self.text})"

    def matches_repository(self, repository: str) -> bool:
        """Whether ``repository`` is selected: the pattern matches it whole and it is not excluded."""
        if repository in self.exclude:
            return False
        if self._pattern is None:
            return repository == self.repository
        return self._pattern.fullmatch(repository) is not None

    def select_tags(self, repository: str, tags: Iterable[str]) -> list[Match]:
        """The matches among ``tags`` of ``repository``, in the order given (F78)."""
        if not self.matches_repository(repository):
            return []
        if self.tag is not None:
            return [Match(self.registry, repository, self.tag)] if self.tag in set(tags) else []
        return [Match(self.registry, repository, t) for t in self.constraints.filter(tags)]

    def explicit_match(self) -> Match | None:
        """The single image of an explicit ``repo:tag`` entry (strategy 1), unless excluded."""
        if self.strategy != "explicit" or self.problem is not None or self.repository in self.exclude:
            return None
        return Match(self.registry, self.repository, self.tag or "")


def canonical_registry(host: str) -> str:
    """A registry host as the source compares it: lower-case, Docker Hub aliases folded into ``docker.io``."""
    host = host.strip().lower()
    return DEFAULT_REGISTRY if host in _DOCKER_HUB_ALIASES else host


def _is_host(segment: str) -> bool:
    return "." in segment or ":" in segment or segment == "localhost" or segment.startswith("[")


def _registry_problem(host: str, where: str) -> Problem | None:
    if "://" in host or "/" in host:
        return Problem(
            INVALID_REGISTRY,
            f"{where}: {host!r} is not a registry host; write the host only, e.g. ghcr.io or registry.example.com:5000",
        )
    if not (_HOST.match(host) or _IPV6_HOST.match(host)):
        return Problem(INVALID_REGISTRY, f"{where}: {host!r} is not a registry host name")
    return None


def split_image(text: str) -> tuple[str | None, str, str | None]:
    """``(registry or None, repository, tag or None)`` of an entry, without validating them."""
    text = text.strip()
    segments = text.split("/")
    registry = None
    if len(segments) > 1 and _is_host(segments[0]):
        registry, text = segments[0], "/".join(segments[1:])
    tag = None
    last_slash = text.rfind("/")
    colon = text.rfind(":")
    if colon > last_slash:
        text, tag = text[:colon], text[colon + 1 :]
    return registry, text, tag


def _repository_problem(repository: str, where: str) -> str | None:
    if not repository:
        return f"{where}: no repository name"
    if repository != repository.lower():
        return f"{where}: repository {repository!r} must be lower-case"
    for component in repository.replace("*", "a").split("/"):
        if not _COMPONENT.match(component):
            return (
                f"{where}: {repository!r} is not a repository name (path components of lower-case letters, "
                "digits and single . _ or - separators; * as a wildcard)"
            )
    return None


def _pattern(repository: str) -> re.Pattern[str] | None:
    if "*" not in repository:
        return None
    return re.compile(".*".join(re.escape(part) for part in repository.split("*")))


def _exclusions(values: Sequence[str] | None) -> frozenset[str]:
    found = set()
    for value in values or ():
        if not isinstance(value, str) or not value.strip():
            continue
        registry, repository, _ = split_image(value)
        found.add(repository if registry is not None else value.strip())
    return frozenset(found)


def _selector(
    field: str,
    text: Any,
    default_registry: str,
    registry_problem: Problem | None,
    versions: Sequence[str] | None,
    versions_field: str,
    exclude: Sequence[str] | None = None,
) -> Selector:
    if not isinstance(text, str) or not text.strip():
        return Selector(field, str(text or ""), problem=Problem(INVALID_IMAGE, f"{field}: empty image"))
    text = text.strip()
    if "@" in text:
        return Selector(
            field,
            text,
            problem=Problem(
                INVALID_IMAGE, f"{field}: {text!r} pins a digest; model sources select by tag, write repo:tag"
            ),
        )
    host, repository, tag = split_image(text)
    if host is not None:
        registry, problem = canonical_registry(host), _registry_problem(host, field)
    else:
        registry, problem = default_registry, registry_problem
    if problem is not None:
        return Selector(field, text, registry=registry, problem=problem)
    if registry == DEFAULT_REGISTRY and "/" not in repository and repository and "*" not in repository:
        repository = f"library/{repository}"  # Docker Hub's official images
    why = _repository_problem(repository, field)
    if why is None and tag is not None:
        if "*" in tag:
            why = f"{field}: wildcards in tags are not supported; use versions constraints instead"
        elif not _TAG.match(tag):
            why = f"{field}: {tag!r} is not a valid tag"
    if why is not None:
        return Selector(field, text, registry=registry, repository=repository, problem=Problem(INVALID_IMAGE, why))
    constraints = Constraints()
    problem = None
    if tag is None and versions:
        try:
            constraints = parse_constraints(versions)
        except ConstraintError as exc:
            problem = Problem(INVALID_VERSION_CONSTRAINT, f"{versions_field}: {exc}")
    return Selector(
        field,
        text,
        registry=registry,
        repository=repository,
        tag=tag,
        exclude=_exclusions(exclude),
        constraints=constraints,
        problem=problem,
        pattern=_pattern(repository),
    )


def parse_selectors(spec: Mapping[str, Any]) -> list[Selector]:
    """The selectors of a source's spec, in spec order; unusable entries carry a :class:`Problem`."""
    raw_registry = spec.get("registry") or DEFAULT_REGISTRY
    registry_problem = _registry_problem(str(raw_registry).strip(), "spec.registry")
    default_registry = canonical_registry(str(raw_registry))
    global_versions = [v for v in (spec.get("versions") or [])]
    selectors: list[Selector] = []
    if spec.get("filters"):
        for i, entry in enumerate(spec.get("filters") or []):
            entry = entry if isinstance(entry, Mapping) else {"image": entry}
            own = entry.get("versions") or []
            selectors.append(
                _selector(
                    f"spec.filters[{i}].image",
                    entry.get("image"),
                    default_registry,
                    registry_problem,
                    own or global_versions,
                    f"spec.filters[{i}].versions" if own else "spec.versions",
                    exclude=entry.get("exclude"),
                )
            )
    else:
        for i, text in enumerate(spec.get("images") or []):
            selectors.append(
                _selector(
                    f"spec.images[{i}]",
                    text,
                    default_registry,
                    registry_problem,
                    global_versions,
                    "spec.versions",
                )
            )
    return selectors
