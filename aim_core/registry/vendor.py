"""What the registry clients of vendor plugins share, so a plugin holds only its vendor's facts.

A vendor registry (Docker Hub, GHCR, Harbor, ...) serves images and tags through the OCI
distribution API, usually with a bearer-token service known in advance, and lists
repositories through an API of its own. :class:`VendorRegistryClient` is the first part, complete:
image metadata and tags go to the core's OCI client, whose first request carries a
token instead of waiting for a ``401``. A plugin subclasses it and implements
``list_repositories`` with :meth:`~VendorRegistryClient.owner_of` (a wildcard lists one
namespace or owner) and :meth:`~VendorRegistryClient.pages` (a paged JSON API through
:attr:`~VendorRegistryClient.api`, with the same auth, retries and error mapping as
every registry request).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from aim_core.registry.errors import ImageInfo, RegistryError
from aim_core.registry.oci import OciRegistryClient
from aim_core.registry.transport import Challenge, RegistryTransport

if TYPE_CHECKING:
    import httpx

    from aim_core.plugin.providers import RegistryCredentials
    from aim_core.registry.reference import ImageReference
    from aim_core.registry.settings import RegistrySettings

__all__ = ["VendorRegistryClient"]

#: Where the next page is, from a page's body and response; ``None`` at the end.
NextPage = Callable[[Any, "httpx.Response"], "str | None"]


class VendorRegistryClient:
    """A :class:`~aim_core.RegistryClient` for one vendor host; subclasses add ``list_repositories``.

    :param registry: the host as image references name it (``docker.io``).
    :param registry_url: where its OCI distribution API answers.
    :param token_realm: the token service (``WWW-Authenticate`` realm) and
    :param token_service: its ``service`` parameter, when known in advance (else the
        registry's first ``401`` names them).
    :param api_url: the vendor's own API, reached through :attr:`api`.
    :param api_challenge: how the vendor API takes credentials when it is known without
        asking (``Challenge("basic", {})``: HTTP Basic whenever there are credentials).
    """

    name = "vendor"

    def __init__(
        self,
        registry: str,
        *,
        registry_url: str,
        api_url: str,
        token_realm: str | None = None,
        token_service: str | None = None,
        api_challenge: Challenge | None = None,
        registry_settings: RegistrySettings | None = None,
    ) -> None:
        self.host = registry
        known = Challenge("bearer", {"realm": token_realm, "service": token_service or ""}) if token_realm else None
        self.registry = OciRegistryClient(
            registry, base_url=registry_url, settings=registry_settings, name=self.name, challenge=known
        )
        self.api = RegistryTransport(registry, base_url=api_url, settings=registry_settings, challenge=api_challenge)

    @property
    def requests(self) -> int:
        """HTTP requests sent so far (registry, token service and vendor API)."""
        return self.registry.requests + self.api.requests

    async def aclose(self) -> None:
        await self.registry.aclose()
        await self.api.aclose()

    async def image_info(self, image: ImageReference, credentials: RegistryCredentials | None) -> ImageInfo:
        return await self.registry.image_info(image, credentials)

    async def list_tags(self, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        return await self.registry.list_tags(repository, credentials)

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        raise NotImplementedError

    def owner_of(self, pattern: str, *, vendor: str, owner: str, placeholder: str, example: str) -> str:
        """The namespace or owner a wildcard lists (``org`` of ``org/aim-*``), or an error saying how to write it.

        Vendor APIs list one namespace at a time, so the part before the ``/`` must be given
        and must not be a wildcard itself.
        """
        name, slash, _ = pattern.partition("/")
        if not slash or not name or "*" in name:
            raise RegistryError(
                "invalid",
                f"{vendor} repositories can only be listed within one {owner}: write {pattern!r} "
                f"as '<{placeholder}>/<glob>', e.g. '{example}'",
                registry=self.host,
                image=pattern,
                reason="InvalidRepositoryPattern",
            )
        return name

    async def pages(
        self,
        first: str,
        *,
        pattern: str,
        credentials: RegistryCredentials | None,
        params: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        next_page: NextPage,
    ) -> AsyncIterator[Any]:
        """The JSON bodies of a paged API listing, from ``first`` until ``next_page`` says there is no more.

        ``params`` go with the first request only (next-page URLs carry their own query).
        A next page seen before ends the walk, and so does ``max_pages``
        (``AIM_ENGINE_REGISTRY_MAX_PAGES``).
        """
        url: str | None = first
        seen: set[str] = set()
        for _ in range(self.api.settings.max_pages):
            if url is None:
                return
            data, response = await self.api.get_json(
                url, image=pattern, scope=None, credentials=credentials, params=params, headers=headers
            )
            yield data
            following = next_page(data, response)
            url = following if following and following not in seen else None
            if url:
                seen.add(url)
            params = None
