"""Image references: parsing and the canonical form.

Follows the grammar of the distribution project's ``reference`` package
(the one ``docker pull`` and the kubelet use): an optional registry host,
lower-case path components, an optional tag and an optional digest. Docker Hub
is spelled ``docker.io`` whatever alias the user wrote, and a one-component
Docker Hub name gets the ``library/`` namespace.

Pure: importable by plan code.
"""

from __future__ import annotations

import re

import attrs

__all__ = ["DOCKER_HUB", "InvalidImageReference", "ImageReference", "normalize_registry"]

DOCKER_HUB = "docker.io"
_DOCKER_HUB_ALIASES = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"})

_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_HOST_LABEL = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = re.compile(rf"(?:{_HOST_LABEL}(?:\.{_HOST_LABEL})*|\[[0-9a-fA-F:.]+\])(?::[0-9]{{1,5}})?")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_MAX_NAME = 255


class InvalidImageReference(ValueError):
    """A string that is not a valid container image reference; the message says why."""


def normalize_registry(host: str) -> str:
    """``host`` lower-cased, with every Docker Hub alias spelled ``docker.io``."""
    host = host.strip().lower()
    return DOCKER_HUB if host in _DOCKER_HUB_ALIASES else host


@attrs.frozen
class ImageReference:
    """A parsed image reference such as ``ghcr.io/org/repo:1.0@sha256:...``."""

    registry: str  #: host[:port], ``docker.io`` for Docker Hub
    repository: str  #: path on the registry, e.g. ``library/ubuntu``
    tag: str | None = None
    digest: str | None = None

    @classmethod
    def parse(cls, text: str) -> ImageReference:
        """Parse ``text``; raises :class:`InvalidImageReference` saying what is wrong."""
        if not isinstance(text, str):
            raise InvalidImageReference(f"image reference must be a string, not {type(text).__name__}")
        if not text:
            raise InvalidImageReference("image reference is empty")
        bad = next((c for c in text if c.isspace() or not c.isprintable()), None)
        if bad is not None:
            raise InvalidImageReference(f"image reference {text!r} contains whitespace or a control character")
        rest, digest = text, None
        if "@" in rest:
            rest, digest = rest.split("@", 1)
            if not _DIGEST.fullmatch(digest):
                raise InvalidImageReference(f"image reference {text!r} has a malformed digest {digest!r}")
            if digest.startswith("sha256:") and not _SHA256.fullmatch(digest):
                raise InvalidImageReference(
                    f"image reference {text!r}: a sha256 digest is 64 lower-case hex characters"
                )
        tag = None
        last_slash = rest.rfind("/")
        colon = rest.rfind(":")
        if colon > last_slash:
            rest, tag = rest[:colon], rest[colon + 1 :]
            if not _TAG.fullmatch(tag):
                raise InvalidImageReference(
                    f"image reference {text!r} has an invalid tag {tag!r} "
                    "(letters, digits, '_', '.', '-'; at most 128; not starting with '.' or '-')"
                )
        if not rest:
            raise InvalidImageReference(f"image reference {text!r} has no repository name")
        segments = rest.split("/")
        first = segments[0]
        if len(segments) > 1 and ("." in first or ":" in first or first == "localhost" or first.startswith("[")):
            if not _HOST.fullmatch(first):
                raise InvalidImageReference(f"image reference {text!r} has an invalid registry host {first!r}")
            registry, path = normalize_registry(first), segments[1:]
        else:
            registry, path = DOCKER_HUB, segments
        for component in path:
            if not _COMPONENT.fullmatch(component):
                raise InvalidImageReference(_component_problem(text, component))
        if registry == DOCKER_HUB and len(path) == 1:
            path = ["library", *path]
        repository = "/".join(path)
        if len(repository) > _MAX_NAME:
            raise InvalidImageReference(f"image reference {text!r}: repository name longer than {_MAX_NAME}")
        return cls(registry=registry, repository=repository, tag=tag, digest=digest)

    @property
    def reference(self) -> str:
        """What to ask the registry for: the digest, else the tag, else ``latest``."""
        return self.digest or self.tag or "latest"

    @property
    def familiar(self) -> str:
        """The short form people write: Docker Hub without ``docker.io/`` and ``library/``."""
        name = f"{self.registry}/{self.repository}"
        if self.registry == DOCKER_HUB:
            name = self.repository.removeprefix("library/") if self.repository.count("/") == 1 else self.repository
        return name + self._suffix()

    def with_digest(self, digest: str) -> ImageReference:
        return attrs.evolve(self, digest=digest)

    def _suffix(self) -> str:
        return (f":{self.tag}" if self.tag else "") + (f"@{self.digest}" if self.digest else "")

    def __str__(self) -> str:
        return f"{self.registry}/{self.repository}{self._suffix()}"


def _component_problem(text: str, component: str) -> str:
    if not component:
        return f"image reference {text!r} has an empty path component ('//' or a trailing '/')"
    if component in {".", ".."}:
        return f"image reference {text!r} has a {component!r} path component"
    if component != component.lower():
        return f"image reference {text!r}: repository names must be lower-case ({component!r})"
    return (
        f"image reference {text!r} has an invalid path component {component!r} "
        "(lower-case letters and digits, separated by '.', '_', '__' or '-')"
    )
