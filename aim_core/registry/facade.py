"""What controllers call: image metadata, tags and repositories of a registry.

Each function picks the client for the registry host through the
``aim_registry_client`` hook (asked once per host and plugin manager, so one
client, and one HTTP connection pool, serves each host), bounds the whole call
by ``AIM_ENGINE_REGISTRY_DEADLINE`` and turns anything a client raises into a
:class:`RegistryError` whose message never carries the credentials. Retries
with backoff on 429/5xx happen per HTTP request inside the clients, where a
paged listing can resume at the failed page.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aim_core.plugin import manager as plugin_host
from aim_core.registry.errors import ImageInfo, RegistryError, redact
from aim_core.registry.reference import ImageReference, normalize_registry
from aim_core.registry.settings import InvalidRegistrySetting, RegistrySettings

if TYPE_CHECKING:
    import pluggy

    from aim_core.plugin.providers import RegistryClient, RegistryCredentials

__all__ = ["client_for", "close_clients", "fetch_image_info", "list_repositories", "list_tags"]

logger = logging.getLogger("aim_engine.registry")
T = TypeVar("T")

_clients: weakref.WeakKeyDictionary[Any, dict[str, RegistryClient]] = weakref.WeakKeyDictionary()


def client_for(plugins: pluggy.PluginManager, registry: str) -> RegistryClient:
    """The client for ``registry``, created once per plugin manager and host.

    :raises RegistryError: ``unavailable`` when no plugin handles the host.
    """
    host = normalize_registry(registry)
    per_host = _clients.setdefault(plugins, {})
    client = per_host.get(host)
    if client is None:
        try:
            client = plugin_host.registry_client(plugins, host)
        except plugin_host.PluginNotFoundError as exc:
            raise RegistryError("unavailable", str(exc), registry=host, reason="RegistryUnavailable") from None
        except InvalidRegistrySetting as exc:
            raise _bad_setting(exc, host) from None
        per_host[host] = client
    return client


async def close_clients(plugins: pluggy.PluginManager) -> None:
    """Close the connection pools of every client made for ``plugins``."""
    for client in (_clients.pop(plugins, None) or {}).values():
        close = getattr(client, "aclose", None)
        if close is not None:
            await close()


async def fetch_image_info(
    plugins: pluggy.PluginManager, image: ImageReference, credentials: RegistryCredentials | None
) -> ImageInfo:
    """Digest, config labels and platform of ``image`` (linux/amd64 of an index).

    :raises RegistryError: with a kind saying whether retrying can help.
    """
    client = client_for(plugins, image.registry)
    return await _call(image.registry, str(image), credentials, lambda: client.image_info(image, credentials))


async def list_tags(
    plugins: pluggy.PluginManager, registry: str, repository: str, credentials: RegistryCredentials | None
) -> list[str]:
    """Every tag of ``repository`` on ``registry``, sorted, without duplicates."""
    client = client_for(plugins, registry)
    tags = await _call(registry, repository, credentials, lambda: client.list_tags(repository, credentials))
    return sorted(set(tags))


async def list_repositories(
    plugins: pluggy.PluginManager, registry: str, pattern: str, credentials: RegistryCredentials | None
) -> list[str]:
    """Repositories on ``registry`` matching the ``*`` glob ``pattern``, sorted."""
    client = client_for(plugins, registry)
    repos = await _call(registry, pattern, credentials, lambda: client.list_repositories(pattern, credentials))
    return sorted(set(repos))


async def _call(
    registry: str,
    image: str,
    credentials: RegistryCredentials | None,
    call: Callable[[], Awaitable[T]],
) -> T:
    try:
        deadline = RegistrySettings.from_env().deadline
    except InvalidRegistrySetting as exc:
        raise _bad_setting(exc, registry, image) from None
    try:
        async with asyncio.timeout(deadline):
            return await call()
    except RegistryError:
        raise
    except TimeoutError:
        raise RegistryError(
            "timeout",
            f"registry {registry} did not finish answering for {image} within {deadline:g}s",
            registry=registry,
            image=image,
        ) from None
    except Exception as exc:  # a third-party client's own failure becomes a condition, not a crash
        secrets = (credentials.username, credentials.password, credentials.token) if credentials else ()
        detail = redact(f"{type(exc).__name__}: {exc}", secrets)
        logger.warning("registry client for %s failed on %s: %s", registry, image, detail)
        raise RegistryError(
            "unavailable",
            f"registry {registry} client failed for {image}: {detail}",
            registry=registry,
            image=image,
            reason="RegistryClientError",
        ) from None


def _bad_setting(exc: InvalidRegistrySetting, registry: str, image: str = "") -> RegistryError:
    """A registry setting of the operator itself is unusable: say which, on every call, until fixed."""
    return RegistryError(
        "invalid", f"operator registry setting: {exc}", registry=registry, image=image, reason="InvalidRegistrySetting"
    )
