"""The Docker Hub registry client.

- Image metadata and tags go to the registry API (``registry-1.docker.io``)
  through the core's OCI client, with the token service
  (``auth.docker.io``, service ``registry.docker.io``) known in advance so the
  first request needs no ``401`` round trip. Anonymous pulls get anonymous
  tokens; a pull secret's username and password (or access token) go to the
  token service only. A repeated read of a tag is a ``HEAD``, which Docker Hub
  does not count as a pull.
- Repository wildcards (``org/aim-*``) use the Hub API,
  ``GET /v2/namespaces/<org>/repositories?page_size=100``, walking ``next``
  until it is ``null``. With credentials, the Hub API is asked with a JWT from
  ``POST /v2/auth/token``, so private repositories are listed too.
- ``429`` (registry pull limits and the Hub API's own limit) is retried with
  backoff honouring ``Retry-After``, as every registry call is.

Base URLs come from the environment so tests never leave the machine:

=====================================  ==================================
``AIM_ENGINE_DOCKERHUB_REGISTRY_URL``  ``https://registry-1.docker.io``
``AIM_ENGINE_DOCKERHUB_AUTH_URL``      ``https://auth.docker.io/token``
``AIM_ENGINE_DOCKERHUB_AUTH_SERVICE``  ``registry.docker.io``
``AIM_ENGINE_DOCKERHUB_API_URL``       ``https://hub.docker.com``
=====================================  ==================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from aim_core import (
    RegistryCredentials,
    RegistryError,
    RegistrySettings,
    VendorRegistryClient,
    credentials_fingerprint,
    repository_matches,
)

DOCKER_HUB = "docker.io"
ENV_REGISTRY_URL = "AIM_ENGINE_DOCKERHUB_REGISTRY_URL"
ENV_AUTH_URL = "AIM_ENGINE_DOCKERHUB_AUTH_URL"
ENV_AUTH_SERVICE = "AIM_ENGINE_DOCKERHUB_AUTH_SERVICE"
ENV_API_URL = "AIM_ENGINE_DOCKERHUB_API_URL"
HUB_PAGE_SIZE = 100  # the Hub API's maximum


@attrs.frozen
class DockerHubSettings:
    registry_url: str = "https://registry-1.docker.io"
    auth_url: str = "https://auth.docker.io/token"
    auth_service: str = "registry.docker.io"
    api_url: str = "https://hub.docker.com"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DockerHubSettings:
        env = os.environ if env is None else env
        defaults = cls()
        return cls(
            registry_url=env.get(ENV_REGISTRY_URL, "").strip() or defaults.registry_url,
            auth_url=env.get(ENV_AUTH_URL, "").strip() or defaults.auth_url,
            auth_service=env.get(ENV_AUTH_SERVICE, "").strip() or defaults.auth_service,
            api_url=(env.get(ENV_API_URL, "").strip() or defaults.api_url).rstrip("/"),
        )


class DockerHubClient(VendorRegistryClient):
    """A :class:`~aim_core.RegistryClient` for ``docker.io``; :attr:`api` is the Hub API."""

    name = "dockerhub"

    def __init__(
        self, settings: DockerHubSettings | None = None, registry_settings: RegistrySettings | None = None
    ) -> None:
        self.settings = settings or DockerHubSettings.from_env()
        super().__init__(
            DOCKER_HUB,
            registry_url=self.settings.registry_url,
            token_realm=self.settings.auth_url,
            token_service=self.settings.auth_service,
            api_url=self.settings.api_url,
            registry_settings=registry_settings,
        )
        self._jwt: dict[str, str] = {}  # by credentials_fingerprint: a wrong password never gets another's JWT

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        namespace = self.owner_of(
            pattern, vendor="Docker Hub", owner="namespace", placeholder="namespace", example="amdenterpriseai/aim-*"
        )
        try:
            return await self._list(namespace, pattern, credentials)
        except RegistryError as exc:
            if exc.kind != "auth" or not self._jwt.pop(credentials_fingerprint(credentials), None):
                raise
            return await self._list(namespace, pattern, credentials)  # the Hub JWT expired: log in again once

    async def _list(self, namespace: str, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        headers = {"Accept": "application/json"}
        token = await self._login(credentials, pattern)
        if token:
            headers["Authorization"] = f"Bearer {token}"
        found: list[str] = []
        pages = self.pages(
            f"/v2/namespaces/{namespace}/repositories",
            pattern=pattern,
            credentials=credentials,
            params={"page_size": HUB_PAGE_SIZE},
            headers=headers,
            next_page=_body_next,
        )
        try:
            async for data in pages:
                results = data.get("results") if isinstance(data, dict) else None
                if not isinstance(results, list):
                    raise RegistryError(
                        "invalid",
                        f"Docker Hub API answered {pattern} without a results list",
                        registry=DOCKER_HUB,
                        image=pattern,
                        reason="InvalidRegistryResponse",
                    )
                for entry in results:
                    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                        full = f"{entry.get('namespace') or namespace}/{entry['name']}"
                        if repository_matches(pattern, full):
                            found.append(full)
        except RegistryError as exc:
            if exc.kind == "not_found":
                raise RegistryError(
                    "not_found",
                    f"Docker Hub has no namespace {namespace!r} (listing {pattern})",
                    registry=DOCKER_HUB,
                    image=pattern,
                    status=exc.status,
                    reason="RepositoryNotFound",
                ) from None
            raise
        return found

    async def _login(self, credentials: RegistryCredentials | None, pattern: str) -> str | None:
        """A Hub API JWT for the pull secret's user (``None`` when anonymous)."""
        if credentials is None:
            return None
        if credentials.token and not credentials.username:
            return credentials.token
        if not credentials.username or not credentials.password:
            return None
        cached = self._jwt.get(credentials_fingerprint(credentials))
        if cached:
            return cached
        response = await self.api.request(
            "POST",
            "/v2/auth/token",
            image=pattern,
            scope=None,
            credentials=credentials,
            json_body={"identifier": credentials.username, "secret": credentials.password},
        )
        try:
            body = response.json()
            token = body.get("access_token") or body.get("token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise RegistryError(
                "auth", f"Docker Hub API login gave no token (listing {pattern})", registry=DOCKER_HUB, image=pattern
            )
        self._jwt[credentials_fingerprint(credentials)] = token
        return token


def _body_next(data: object, _response: object) -> str | None:
    """The Hub API names the next page, an absolute URL, in the body's ``next`` (``null`` at the end)."""
    following = data.get("next") if isinstance(data, dict) else None
    return following if isinstance(following, str) and following else None
