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
from typing import Any

import attrs

from aim_core import (
    RegistryCredentials,
    RegistryError,
    RegistrySettings,
    VendorRegistryClient,
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


class GhcrClient(VendorRegistryClient):
    """A :class:`~aim_core.RegistryClient` for ``ghcr.io``."""

    name = "ghcr"

    def __init__(self, settings: GhcrSettings | None = None, registry_settings: RegistrySettings | None = None) -> None:
        self.settings = settings or GhcrSettings.from_env()
        super().__init__(
            GHCR,
            registry_url=self.settings.registry_url,
            token_realm=self.settings.auth_url or f"{self.settings.registry_url}/token",
            token_service=self.settings.auth_service,
            api_url=self.settings.api_url,
            registry_settings=registry_settings,
        )

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        owner = self.owner_of(
            pattern, vendor="ghcr.io", owner="organisation or user", placeholder="owner", example="amd/aim-*"
        )
        token = credentials and (credentials.password or credentials.token)
        if not token:
            raise RegistryError(
                "auth",
                f"listing ghcr.io repositories for {pattern} needs a GitHub token with read:packages: "
                "add a ghcr.io entry (user and token) to a pull secret of the model source",
                registry=GHCR,
                image=pattern,
                reason="Unauthorized",
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
                    "not_found",
                    f"GitHub has no organisation or user {owner!r} with packages (listing {pattern})",
                    registry=GHCR,
                    image=pattern,
                    status=again.status,
                    reason="RepositoryNotFound",
                ) from None
        return [full for full in (f"{owner}/{name}" for name in names) if repository_matches(pattern, full)]

    async def _packages(
        self, path: str, pattern: str, credentials: RegistryCredentials | None, headers: dict[str, str]
    ) -> list[str]:
        names: list[str] = []
        params = {"package_type": "container", "per_page": 100}
        async for data in self.pages(
            path, pattern=pattern, credentials=credentials, params=params, headers=headers, next_page=_link_next
        ):
            if not isinstance(data, list):
                raise RegistryError(
                    "invalid",
                    f"GitHub packages API answered {pattern} without a list",
                    registry=GHCR,
                    image=pattern,
                    reason="InvalidRegistryResponse",
                )
            names.extend(p["name"] for p in data if isinstance(p, dict) and isinstance(p.get("name"), str))
        return names


def _link_next(_data: object, response: Any) -> str | None:
    """GitHub names the next page in the ``Link`` header, possibly relative to this one."""
    link = parse_link_next(response.headers.get("Link"))
    return str(response.url.join(link)) if link else None
