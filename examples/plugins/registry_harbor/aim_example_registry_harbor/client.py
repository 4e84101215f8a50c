"""The Harbor client: a :class:`~aim_core.RegistryClient` for one Harbor host.

- Image metadata and tags use the registry API (``/v2/...``) through the core's
  OCI client. Harbor answers the first request with a bearer challenge for its
  token service (``/service/token``, service ``harbor-registry``); the core
  fetches tokens with the pull secret's user and password (a Harbor user or a
  robot account), anonymously for public projects.
- Repository wildcards (``project/aim-*``) use Harbor's REST API,
  ``GET /api/v2.0/projects/<project>/repositories?page_size=100``, following
  ``Link: <...>; rel="next"`` pages, with the pull secret's user and password
  as HTTP Basic auth (Harbor's API does not take registry tokens). Repository
  names come back with their project (``project/team/repo``). A project that
  does not exist is ``not_found`` / ``RepositoryNotFound``.

Everything that makes a request robust (retries with backoff, ``Retry-After``,
TLS with a private CA, error kinds and reasons, credentials kept out of
messages) comes from the core's transport; this module only knows Harbor's
URLs and JSON.

Settings, from the environment:

================================  ================================================
``AIM_EXAMPLE_HARBOR_HOST``       the registry host it answers for, as image
                                  references name it (``harbor.example.com``)
``AIM_EXAMPLE_HARBOR_URL``        base URL of the registry API (``https://<host>``)
``AIM_EXAMPLE_HARBOR_API_URL``    base URL of Harbor's REST API (the registry URL)
================================  ================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import quote

import attrs
from aim_core import (
    Challenge,
    ImageInfo,
    ImageReference,
    OciRegistryClient,
    RegistryCredentials,
    RegistryError,
    RegistrySettings,
    RegistryTransport,
    parse_link_next,
    repository_matches,
)

ENV_HOST = "AIM_EXAMPLE_HARBOR_HOST"
ENV_URL = "AIM_EXAMPLE_HARBOR_URL"
ENV_API_URL = "AIM_EXAMPLE_HARBOR_API_URL"
PAGE_SIZE = 100


@attrs.frozen
class HarborSettings:
    host: str = "harbor.example.com"
    url: str = ""  #: the registry API; ``https://<host>`` when empty
    api_url: str = ""  #: Harbor's REST API; the registry URL when empty

    @property
    def registry_url(self) -> str:
        return (self.url or f"https://{self.host}").rstrip("/")

    @property
    def rest_url(self) -> str:
        return (self.api_url or self.registry_url).rstrip("/")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> HarborSettings:
        env = os.environ if env is None else env
        return cls(
            host=env.get(ENV_HOST, "").strip().lower() or cls.host,
            url=env.get(ENV_URL, "").strip(),
            api_url=env.get(ENV_API_URL, "").strip(),
        )


class HarborClient:
    """Reads images and lists repositories of one Harbor host."""

    name = "harbor"

    def __init__(self, settings: HarborSettings | None = None, registry_settings: RegistrySettings | None = None) -> None:
        self.settings = settings or HarborSettings.from_env()
        host = self.settings.host
        self.registry = OciRegistryClient(host, base_url=self.settings.registry_url, settings=registry_settings,
                                          name=self.name)
        # Harbor's API takes the user and password directly (HTTP Basic), and lets anonymous
        # callers see public projects: Basic is sent when there are credentials, nothing otherwise.
        self.api = RegistryTransport(host, base_url=self.settings.rest_url, settings=registry_settings,
                                     challenge=Challenge("basic", {}))

    @property
    def requests(self) -> int:
        return self.registry.requests + self.api.requests

    async def aclose(self) -> None:
        await self.registry.aclose()
        await self.api.aclose()

    async def image_info(self, image: ImageReference, credentials: RegistryCredentials | None) -> ImageInfo:
        return await self.registry.image_info(image, credentials)

    async def list_tags(self, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        return await self.registry.list_tags(repository, credentials)

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        """Repositories of one project matching ``pattern`` (``project/aim-*``); the project must be literal."""
        project, slash, _ = pattern.partition("/")
        if not slash or not project or "*" in project:
            raise RegistryError(
                "invalid",
                f"{self.settings.host} lists repositories per project: write {pattern!r} as '<project>/<glob>', "
                "e.g. 'library/aim-*'",
                registry=self.settings.host, image=pattern, reason="InvalidRepositoryPattern",
            )
        names: list[str] = []
        url: str | None = f"/api/v2.0/projects/{quote(project, safe='')}/repositories"
        params: dict[str, object] | None = {"page": 1, "page_size": PAGE_SIZE}
        seen: set[str] = set()
        for _ in range(self.api.settings.max_pages):
            if url is None:
                break
            try:
                data, response = await self.api.get_json(url, image=pattern, scope=None, credentials=credentials,
                                                         params=params, headers={"Accept": "application/json"})
            except RegistryError as exc:
                if exc.kind == "not_found":
                    raise RegistryError(
                        "not_found", f"{self.settings.host} has no project {project!r} (listing {pattern})",
                        registry=self.settings.host, image=pattern, status=exc.status, reason="RepositoryNotFound",
                    ) from None
                raise
            if not isinstance(data, list):
                raise RegistryError(
                    "invalid", f"{self.settings.host} answered the repository list of {project!r} without a list",
                    registry=self.settings.host, image=pattern, reason="InvalidRegistryResponse",
                )
            names.extend(r["name"] for r in data if isinstance(r, dict) and isinstance(r.get("name"), str))
            link = parse_link_next(response.headers.get("Link"))
            url = str(response.url.join(link)) if link else None
            if url in seen:
                url = None
            elif url:
                seen.add(url)
            params = None  # the next link carries its own query
        return sorted(n for n in set(names) if repository_matches(pattern, n))
