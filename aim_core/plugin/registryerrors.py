"""What a registry call returns: :class:`ImageInfo`, or a :class:`RegistryError`.

Pure values: no I/O here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

import attrs

__all__ = ["KINDS", "ImageInfo", "RegistryError", "redact"]

Kind = Literal["auth", "not_found", "rate_limited", "unavailable", "timeout", "invalid"]
KINDS: tuple[str, ...] = ("auth", "not_found", "rate_limited", "unavailable", "timeout", "invalid")
PERMANENT = frozenset({"auth", "not_found", "invalid"})

# Default condition reason per kind; a more specific one can be passed in.
_REASONS: Mapping[str, str] = {
    "auth": "Unauthorized",
    "not_found": "ImageNotFound",
    "rate_limited": "RateLimited",
    "unavailable": "RegistryUnavailable",
    "timeout": "NetworkTimeout",
    "invalid": "InvalidImageManifest",
}


@attrs.frozen
class ImageInfo:
    """Metadata of one image, for the linux/amd64 platform of a multi-arch index."""

    digest: str  #: manifest digest of the chosen linux/amd64 image
    labels: Mapping[str, str] = attrs.field(factory=dict, converter=lambda v: dict(v or {}))
    created: str | None = None
    architecture: str | None = None
    os: str | None = None
    config_digest: str | None = None  #: digest of the config blob the labels came from
    index_digest: str | None = None  #: digest of the index the image was chosen from, if any


class RegistryError(Exception):
    """A registry call failed; ``kind`` says how and whether a retry can help.

    ``kind`` is one of ``auth``, ``not_found``, ``invalid`` (permanent: retrying
    without a change to the spec or the secret cannot help) or ``rate_limited``,
    ``unavailable``, ``timeout`` (transient). ``reason`` is the condition reason a
    controller puts on its status. The message names the registry and the image
    and never contains credentials.
    """

    def __init__(
        self,
        kind: Kind | str,
        message: str,
        *,
        registry: str,
        image: str = "",
        reason: str | None = None,
        retry_after: float | None = None,
        status: int | None = None,
        anonymous: bool = False,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown registry error kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.registry = registry
        self.image = image
        self.reason = reason or _REASONS[kind]
        self.retry_after = retry_after
        self.status = status
        # refused without credentials: a private image, or (as registries answer for names they do not know)
        # one that does not exist; the two cannot be told apart
        self.anonymous = anonymous

    @property
    def permanent(self) -> bool:
        """``True`` when retrying without a user change cannot help."""
        return self.kind in PERMANENT

    @property
    def transient(self) -> bool:
        return not self.permanent

    def __repr__(self) -> str:
        return f"RegistryError({self.kind!r}, {self.message!r}, reason={self.reason!r})"


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every non-trivial secret value replaced by ``***``."""
    for value in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(value, "***")
    return text
