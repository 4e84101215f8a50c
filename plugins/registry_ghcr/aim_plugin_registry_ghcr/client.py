"""The GHCR client.

- Image metadata and tags use the registry API at ``ghcr.io`` through the
  core's OCI client, with GHCR's token service (``https://ghcr.io/token``,
  service ``ghcr.io``) known in advance. Public images get anonymous tokens; a
  ``ghcr.io`` pull-secret entry (a GitHub user and a token with
  ``read:packages``) is sent to the token service only. GHCR gives tokens no
  ``expires_in``; a refused token is fetched again once. Tags come 100 per page
  unless asked for more, with ``Link: <...>; rel="next"``, which is followed.
- Repository wildcards (``org/aim-*``) use the GitHub REST API,
  ``GET /orgs/<org>/packages?package_type=container&per_page=100`` (``/users/<user>/packages``
  when ``<org>`` is a user), following ``Link`` pages, with the pull secret's
  token as ``Authorization: Bearer``: GitHub lists packages only to a caller
  with a token.
- A used-up GitHub API quota (``403`` with ``X-RateLimit-Remaining: 0``) and
  ``429`` are rate limits: retried after ``Retry-After``/``X-RateLimit-Reset``
  when that is soon, else reported with ``retry_after``.

Base URLs come from the environment so tests never leave the machine:

=================================  ==========================
``AIM_ENGINE_GHCR_REGISTRY_URL``   ``https://ghcr.io``
``AIM_ENGINE_GHCR_API_URL``        ``https://api.github.com``
``AIM_ENGINE_GHCR_AUTH_URL``       ``<registry URL>/token``
``AIM_ENGINE_GHCR_AUTH_SERVICE``   ``ghcr.io``
=================================  ==========================
"""

from __future__ import annotations

import os
from collections.abc import Mapping

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

GHCR = "ghcr.io"
ENV_REGISTRY_URL = "AIM_ENGINE_GHCR_REGISTRY_URL"
ENV_API_URL = "AIM_ENGINE_GHCR_API_URL"
ENV_AUTH_URL = "AIM_ENGINE_GHCR_AUTH_URL"
ENV_AUTH_SERVICE = "AIM_ENGINE_GHCR_AUTH_SERVICE"
_API_HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}


@attrs.frozen
class GhcrSettings:
    registry_url: str = "https://ghcr.io"
    api_url: str = "https://api.github.com"
    auth_url: str = ""  #: the token service; ``<registry_url>/token`` when empty
    auth_service: str = GHCR

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> GhcrSettings:
        env = os.environ if env is None else env
        defaults = cls()
        return cls(
            registry_url=(env.get(ENV_REGISTRY_URL, "").strip() or defaults.registry_url).rstrip("/"),
            api_url=(env.get(ENV_API_URL, "").strip() or defaults.api_url).rstrip("/"),
            auth_url=env.get(ENV_AUTH_URL, "").strip(),
            auth_service=env.get(ENV_AUTH_SERVICE, "").strip() or defaults.auth_service,
        )


class GhcrClient:
    """A :class:`~aim_core.RegistryClient` for ``ghcr.io``."""

    name = "ghcr"

    def __init__(self, settings: GhcrSettings | None = None, registry_settings: RegistrySettings | None = None) -> None:
        self.settings = settings or GhcrSettings.from_env()
        realm = self.settings.auth_url or f"{self.settings.registry_url}/token"
        known = Challenge("bearer", {"realm": realm, "service": self.settings.auth_service})
        self.registry = OciRegistryClient(
            GHCR, base_url=self.settings.registry_url, settings=registry_settings, name=self.name, challenge=known
        )
        self.api = RegistryTransport(GHCR, base_url=self.settings.api_url, settings=registry_settings)

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
        owner, slash, _ = pattern.partition("/")
        if not slash or not owner or "*" in owner:
            raise RegistryError(
                "invalid",
                f"ghcr.io repositories can only be listed within one organisation or user: write {pattern!r} "
                "as '<owner>/<glob>', e.g. 'amd/aim-*'",
                registry=GHCR, image=pattern, reason="InvalidRepositoryPattern",
            )
        token = credentials and (credentials.password or credentials.token)
        if not token:
            raise RegistryError(
                "auth",
                f"listing ghcr.io repositories for {pattern} needs a GitHub token with read:packages: "
                "add a ghcr.io entry (user and token) to a pull secret of the model source",
                registry=GHCR, image=pattern, reason="Unauthorized",
            )
        headers = {**_API_HEADERS, "Authorization": f"Bearer {token}"}
        try:
            names = await self._packages(f"/orgs/{owner}/packages", pattern, credentials, headers)
        except RegistryError as exc:
            if exc.kind != "not_found":
                raise
            try:
                names = await self._packages(f"/users/{owner}/packages", pattern, credentials, headers)
            except RegistryError as again:
                if again.kind != "not_found":
                    raise
                raise RegistryError(
                    "not_found", f"GitHub has no organisation or user {owner!r} with packages (listing {pattern})",
                    registry=GHCR, image=pattern, status=again.status, reason="RepositoryNotFound",
                ) from None
        return [full for full in (f"{owner}/{name}" for name in names) if repository_matches(pattern, full)]

    async def _packages(
        self, path: str, pattern: str, credentials: RegistryCredentials | None, headers: dict[str, str]
    ) -> list[str]:
        names: list[str] = []
        url: str | None = path
        params: dict[str, object] | None = {"package_type": "container", "per_page": 100}
        seen: set[str] = set()
        for _ in range(self.api.settings.max_pages):
            if url is None:
                return names
            data, response = await self.api.get_json(
                url, image=pattern, scope=None, credentials=credentials, params=params, headers=headers
            )
            if not isinstance(data, list):
                raise RegistryError(
                    "invalid", f"GitHub packages API answered {pattern} without a list",
                    registry=GHCR, image=pattern, reason="InvalidRegistryResponse",
                )
            names.extend(p["name"] for p in data if isinstance(p, dict) and isinstance(p.get("name"), str))
            link = parse_link_next(response.headers.get("Link"))
            url = str(response.url.join(link)) if link else None
            if url in seen:
                url = None
            elif url:
                seen.add(url)
            params = None
        return names
