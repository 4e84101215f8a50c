"""Registry settings, read from the environment.

=====================================  =====================================================
``AIM_ENGINE_REGISTRY_CA_FILE``        PEM file of extra CA certificates trusted for
                                       registries, on top of the standard trust (which
                                       honours ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``).
``AIM_ENGINE_REGISTRY_INSECURE``       Comma-separated registry hosts (``host`` or
                                       ``host:port``) reached over plain HTTP. Loopback
                                       hosts (``localhost``, ``127.0.0.0/8``, ``::1``) are
                                       always plain HTTP, as Docker treats them.
``AIM_ENGINE_REGISTRY_TIMEOUT``        Seconds for one HTTP request (default 20).
``AIM_ENGINE_REGISTRY_RETRIES``        Retries of one request on 429, 5xx and network
                                       errors, with exponential backoff (default 3).
``AIM_ENGINE_REGISTRY_MAX_RETRY_AFTER``  Longest ``Retry-After`` waited for in place
                                       (default 60 s); a longer one fails the call as
                                       ``rate_limited`` carrying ``retry_after``.
``AIM_ENGINE_REGISTRY_DEADLINE``       Seconds for one whole call such as listing every
                                       tag of a repository (default 300).
``AIM_ENGINE_REGISTRY_BACKOFF``        First retry delay in seconds (default 0.5); it
                                       doubles per retry, with jitter, up to 20 s.
=====================================  =====================================================
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping

import attrs

__all__ = ["RegistrySettings", "is_loopback"]

ENV_CA_FILE = "AIM_ENGINE_REGISTRY_CA_FILE"
ENV_INSECURE = "AIM_ENGINE_REGISTRY_INSECURE"
ENV_TIMEOUT = "AIM_ENGINE_REGISTRY_TIMEOUT"
ENV_RETRIES = "AIM_ENGINE_REGISTRY_RETRIES"
ENV_MAX_RETRY_AFTER = "AIM_ENGINE_REGISTRY_MAX_RETRY_AFTER"
ENV_DEADLINE = "AIM_ENGINE_REGISTRY_DEADLINE"
ENV_BACKOFF = "AIM_ENGINE_REGISTRY_BACKOFF"


class InvalidRegistrySetting(ValueError):
    """A registry environment variable holds something unusable."""


def _number(env: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise InvalidRegistrySetting(f"{name}={raw!r} is not a number") from None
    if value < minimum or value != value:
        raise InvalidRegistrySetting(f"{name}={raw!r} must be at least {minimum}")
    return value


def is_loopback(registry: str) -> bool:
    """Whether ``registry`` (host[:port]) is this machine."""
    host = registry.lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@attrs.frozen
class RegistrySettings:
    ca_file: str | None = None
    insecure: frozenset[str] = frozenset()
    timeout: float = 20.0
    retries: int = 3
    backoff: float = 0.5  #: first backoff; doubles per retry, with jitter
    max_backoff: float = 20.0
    max_retry_after: float = 60.0
    deadline: float = 300.0
    max_pages: int = 10_000  #: a registry whose Link never ends is cut off here

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RegistrySettings:
        env = os.environ if env is None else env
        ca_file = env.get(ENV_CA_FILE, "").strip() or None
        if ca_file is not None and not os.path.isfile(ca_file):
            raise InvalidRegistrySetting(f"{ENV_CA_FILE}={ca_file!r} is not a readable file")
        insecure = frozenset(h.strip().lower() for h in env.get(ENV_INSECURE, "").split(",") if h.strip())
        return cls(
            ca_file=ca_file,
            insecure=insecure,
            timeout=_number(env, ENV_TIMEOUT, _DEFAULTS.timeout, minimum=0.001),
            retries=int(_number(env, ENV_RETRIES, _DEFAULTS.retries)),
            max_retry_after=_number(env, ENV_MAX_RETRY_AFTER, _DEFAULTS.max_retry_after),
            deadline=_number(env, ENV_DEADLINE, _DEFAULTS.deadline, minimum=0.001),
            backoff=_number(env, ENV_BACKOFF, _DEFAULTS.backoff),
        )

    def scheme(self, registry: str) -> str:
        """``http`` for loopback and listed insecure hosts, else ``https``."""
        host = registry.lower()
        bare = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        if is_loopback(host) or host in self.insecure or bare in self.insecure:
            return "http"
        return "https"


_DEFAULTS = RegistrySettings()
