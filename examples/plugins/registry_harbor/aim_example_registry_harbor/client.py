"""The Harbor client: a :class:`~aim_core.RegistryClient` for one Harbor host.

- Image metadata and tags use the registry API (``/v2/...``) through the core's
  OCI client (:class:`~aim_core.VendorRegistryClient` does that part). Harbor
  answers the first request with a bearer challenge for its token service
  (``/service/token``, service ``harbor-registry``); the core fetches tokens
  with the pull secret's user and password (a Harbor user or a robot account),
  anonymously for public projects.
- Repository wildcards (``project/aim-*``) use Harbor's REST API,
  ``GET /api/v2.0/projects/<project>/repositories?page_size=100``, following
  ``Link: <...>; rel="next"`` pages, with the pull secret's user and password
  as HTTP Basic auth (Harbor's API does not take registry tokens). Repository
  names come back with their project (``project/team/repo``). A project that
  does not exist is ``not_found`` / ``RepositoryNotFound``.

Everything that makes a request robust (retries with backoff, ``Retry-After``,
TLS with a private CA, error kinds and reasons, credentials kept out of
messages, a page limit) comes from the core; this module only knows Harbor's
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
from typing import Any
from urllib.parse import quote

import attrs

from aim_core import (
    Challenge,
    RegistryCredentials,
    RegistryError,
    RegistrySettings,
    VendorRegistryClient,
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


class HarborClient(VendorRegistryClient):
    """Reads images and lists repositories of one Harbor host."""

    name = "harbor"

    def __init__(
        self, settings: HarborSettings | None = None, registry_settings: RegistrySettings | None = None
    ) -> None:
        self.settings = settings or HarborSettings.from_env()
        # The registry's token service is learnt from its first challenge. Harbor's API takes the user and
        # password directly (HTTP Basic) and shows public projects to anonymous callers: Basic is sent when
        # there are credentials, nothing otherwise.
        super().__init__(
            self.settings.host,
            registry_url=self.settings.registry_url,
            api_url=self.settings.rest_url,
            api_challenge=Challenge("basic", {}),
            registry_settings=registry_settings,
        )

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        """Repositories of one project matching ``pattern`` (``project/aim-*``); the project must be literal."""
        project = self.owner_of(
            pattern, vendor=self.host, owner="project", placeholder="project", example="library/aim-*"
        )
        names: list[str] = []
        try:
            async for data in self.pages(
                f"/api/v2.0/projects/{quote(project, safe='')}/repositories",
                pattern=pattern,
                credentials=credentials,
                params={"page": 1, "page_size": PAGE_SIZE},
                headers={"Accept": "application/json"},
                next_page=_link_next,
            ):
                if not isinstance(data, list):
                    raise RegistryError(
                        "invalid",
                        f"{self.host} answered the repository list of {project!r} without a list",
                        registry=self.host,
                        image=pattern,
                        reason="InvalidRegistryResponse",
                    )
                names.extend(r["name"] for r in data if isinstance(r, dict) and isinstance(r.get("name"), str))
        except RegistryError as exc:
            if exc.kind != "not_found":
                raise
            raise RegistryError(
                "not_found",
                f"{self.host} has no project {project!r} (listing {pattern})",
                registry=self.host,
                image=pattern,
                status=exc.status,
                reason="RepositoryNotFound",
            ) from None
        return sorted(n for n in set(names) if repository_matches(pattern, n))


def _link_next(_data: object, response: Any) -> str | None:
    """Harbor names the next page in the ``Link`` header, relative to this one."""
    link = parse_link_next(response.headers.get("Link"))
    return str(response.url.join(link)) if link else None
