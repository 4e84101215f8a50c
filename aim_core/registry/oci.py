"""The generic OCI distribution client: image metadata, tags, catalog.

Works with any registry that speaks the OCI distribution API (Distribution,
Harbor, Quay, Artifactory, ECR, GHCR, Docker Hub's registry API):

- ``image_info``: the manifest (OCI or Docker v2, all four media types asked
  for, since a registry answers 404 for a type the client did not accept); an
  index or manifest list is resolved to its ``linux/amd64`` image; then the
  config blob, whose ``config.Labels`` are the labels. Every body is checked
  against its digest. Metadata is cached by digest and credentials: a digest
  reference read before with the same pull secret costs no request, a tag read
  before costs one ``HEAD`` (another pull secret, or none, asks the registry).
- ``list_tags``: ``tags/list`` with ``n``, following ``Link: <...>; rel="next"``
  as given (never assuming ``n`` is honoured, nor that a short page is the end).
- ``list_repositories``: ``_catalog`` with the same paging, filtered by the
  ``*`` glob on the client.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs

from aim_core.registry.credentials import credentials_fingerprint
from aim_core.registry.errors import ImageInfo, RegistryError
from aim_core.registry.patterns import repository_matches
from aim_core.registry.transport import Challenge, RegistryTransport, parse_link_next

if TYPE_CHECKING:
    import httpx

    from aim_core.plugin.providers import RegistryCredentials
    from aim_core.registry.reference import ImageReference
    from aim_core.registry.settings import RegistrySettings

__all__ = ["MANIFEST_TYPES", "OciRegistryClient"]

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
MANIFEST_TYPES = (OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST)
INDEX_TYPES = frozenset({OCI_INDEX, DOCKER_LIST})
_ACCEPT = ", ".join(MANIFEST_TYPES)
_CONFIG_TYPES = frozenset(
    {"application/vnd.oci.image.config.v1+json", "application/vnd.docker.container.image.v1+json"}
)
_MAX_MANIFEST = 4 * 1024 * 1024
_MAX_CONFIG = 16 * 1024 * 1024
_CACHE_SIZE = 2048
WANTED_PLATFORM = ("linux", "amd64")


class OciRegistryClient:
    """A :class:`~aim_core.plugin.providers.RegistryClient` for one host speaking the OCI distribution API.

    :param registry: the host as users write it (``registry.example.com:5000``).
    :param base_url: where to send requests instead of ``https://<registry>``
        (Docker Hub's API lives at ``registry-1.docker.io``; tests use loopback).
    :param page_size: the ``n`` asked for on ``tags/list`` and ``_catalog``;
        ``None`` sends none.
    :param challenge: the auth the host is known to ask for, to skip the first ``401``.
    """

    name = "oci"

    def __init__(
        self,
        registry: str,
        *,
        base_url: str | None = None,
        settings: RegistrySettings | None = None,
        page_size: int | None = 1000,
        name: str | None = None,
        challenge: Challenge | None = None,
    ) -> None:
        self.registry = registry
        self.transport = RegistryTransport(registry, base_url=base_url, settings=settings, challenge=challenge)
        self.page_size = page_size
        if name is not None:
            self.name = name
        # keyed by the credentials too: what one pull secret may read is never served to another
        self._by_digest: OrderedDict[tuple[str, str, str], ImageInfo] = OrderedDict()
        self._seen_tags: set[tuple[str, str, str]] = set()

    @property
    def requests(self) -> int:
        """HTTP requests sent so far (registry and token service)."""
        return self.transport.requests

    async def aclose(self) -> None:
        await self.transport.aclose()

    # ------------------------------------------------------------ image metadata

    async def image_info(self, image: ImageReference, credentials: RegistryCredentials | None) -> ImageInfo:
        repo, shown = image.repository, str(image)
        who = credentials_fingerprint(credentials)
        scope = f"repository:{repo}:pull"
        ref = image.reference
        if image.digest:
            cached = self._cached(who, repo, image.digest)
            if cached is not None:
                return cached
        elif (who, repo, ref) in self._seen_tags:
            # read before: a HEAD (not a pull on Docker Hub) says whether it changed
            head = await self.transport.request(
                "HEAD",
                f"/v2/{repo}/manifests/{ref}",
                image=shown,
                scope=scope,
                credentials=credentials,
                headers={"Accept": _ACCEPT},
            )
            digest = head.headers.get("Docker-Content-Digest")
            cached = self._cached(who, repo, digest) if digest else None
            if cached is not None:
                return cached
        body, media_type, top_digest = await self._manifest(repo, ref, shown, scope, credentials)
        digest, index_digest = top_digest, None
        info: ImageInfo | None = None
        if media_type in INDEX_TYPES:
            index_digest = top_digest
            digest = _choose_platform(body, self.registry, shown)
            info = self._cached(who, repo, digest)
            if info is None:
                body, media_type, _ = await self._manifest(repo, digest, shown, scope, credentials)
                if media_type in INDEX_TYPES:
                    raise _invalid(self.registry, shown, "an image index points at another index")
        info = info or self._cached(who, repo, digest)
        if info is None:
            config = body.get("config")
            if not isinstance(config, dict) or not isinstance(config.get("digest"), str):
                raise _invalid(self.registry, shown, f"manifest {digest} has no config descriptor")
            config_type = config.get("mediaType", "")
            if config_type and config_type not in _CONFIG_TYPES:
                raise _invalid(self.registry, shown, f"not a container image (config type {config_type})")
            info = await self._config(repo, config["digest"], digest, index_digest, shown, scope, credentials)
        if info.index_digest != index_digest:
            info = attrs.evolve(info, index_digest=index_digest)
        self._remember(who, repo, info.digest, info)
        self._remember(who, repo, top_digest, info)
        if not image.digest:
            self._seen_tags.add((who, repo, ref))
        return info

    async def _manifest(
        self, repo: str, ref: str, shown: str, scope: str, credentials: RegistryCredentials | None
    ) -> tuple[Any, str, str]:
        response = await self.transport.request(
            "GET",
            f"/v2/{repo}/manifests/{ref}",
            image=shown,
            scope=scope,
            credentials=credentials,
            headers={"Accept": _ACCEPT},
        )
        raw = _limited(response, _MAX_MANIFEST, self.registry, shown, "manifest")
        digest = "sha256:" + hashlib.sha256(raw).hexdigest()
        expected = ref if ref.startswith("sha256:") else response.headers.get("Docker-Content-Digest", "")
        if expected.startswith("sha256:") and expected != digest:
            raise _invalid(self.registry, shown, f"manifest digest mismatch (expected {expected}, got {digest})")
        try:
            body = json.loads(raw)
        except ValueError:
            raise _invalid(self.registry, shown, "manifest is not JSON") from None
        if not isinstance(body, dict):
            raise _invalid(self.registry, shown, "manifest is not a JSON object")
        media_type = response.headers.get("Content-Type", "").split(";")[0].strip()
        if media_type not in MANIFEST_TYPES:
            media_type = body.get("mediaType") or ""
            if not media_type and isinstance(body.get("manifests"), list):
                media_type = OCI_INDEX
            elif not media_type and isinstance(body.get("config"), dict):
                media_type = OCI_MANIFEST
        if media_type not in MANIFEST_TYPES:
            raise _invalid(self.registry, shown, f"unsupported manifest type {media_type or 'unknown'!r}")
        return body, media_type, digest

    async def _config(
        self,
        repo: str,
        config_digest: str,
        manifest_digest: str,
        index_digest: str | None,
        shown: str,
        scope: str,
        credentials: RegistryCredentials | None,
    ) -> ImageInfo:
        response = await self.transport.request(
            "GET", f"/v2/{repo}/blobs/{config_digest}", image=shown, scope=scope, credentials=credentials
        )
        raw = _limited(response, _MAX_CONFIG, self.registry, shown, "config")
        if config_digest.startswith("sha256:") and "sha256:" + hashlib.sha256(raw).hexdigest() != config_digest:
            raise _invalid(self.registry, shown, f"config blob does not match its digest {config_digest}")
        try:
            config = json.loads(raw)
        except ValueError:
            raise _invalid(self.registry, shown, "image config is not JSON") from None
        if not isinstance(config, dict):
            raise _invalid(self.registry, shown, "image config is not a JSON object")
        inner = config.get("config") or {}
        labels = inner.get("Labels") if isinstance(inner, dict) else None
        labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
        return ImageInfo(
            digest=manifest_digest,
            labels=labels,
            created=config.get("created") if isinstance(config.get("created"), str) else None,
            architecture=config.get("architecture") if isinstance(config.get("architecture"), str) else None,
            os=config.get("os") if isinstance(config.get("os"), str) else None,
            config_digest=config_digest,
            index_digest=index_digest,
        )

    def _cached(self, who: str, repo: str, digest: str | None) -> ImageInfo | None:
        if not digest:
            return None
        info = self._by_digest.get((who, repo, digest))
        if info is not None:
            self._by_digest.move_to_end((who, repo, digest))
        return info

    def _remember(self, who: str, repo: str, digest: str, info: ImageInfo) -> None:
        self._by_digest[(who, repo, digest)] = info
        self._by_digest.move_to_end((who, repo, digest))
        while len(self._by_digest) > _CACHE_SIZE:
            self._by_digest.popitem(last=False)

    # ------------------------------------------------------------ listing

    async def list_tags(self, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        pages = self.pages(
            f"/v2/{repository}/tags/list",
            "tags",
            image=repository,
            scope=f"repository:{repository}:pull",
            credentials=credentials,
        )
        return [tag async for tag in pages]

    async def list_repositories(self, pattern: str, credentials: RegistryCredentials | None) -> list[str]:
        pages = self.pages(
            "/v2/_catalog", "repositories", image=pattern, scope="registry:catalog:*", credentials=credentials
        )
        return [repo async for repo in pages if repository_matches(pattern, repo)]

    async def pages(self, path: str, key: str, *, image: str, scope: str, credentials: RegistryCredentials | None):
        """Yield the ``key`` list of every page, following ``Link`` headers."""
        params: dict[str, Any] | None = {"n": self.page_size} if self.page_size else None
        url: str | None = path
        seen: set[str] = set()
        for _ in range(self.transport.settings.max_pages):
            if url is None:
                return
            try:
                data, response = await self.transport.get_json(
                    url, image=image, scope=scope, credentials=credentials, params=params
                )
            except RegistryError as exc:
                if exc.status == 400 and params and url == path:
                    # a registry refusing our page size (PAGINATION_NUMBER_INVALID): let it choose
                    params = None
                    continue
                raise
            items = data.get(key) if isinstance(data, dict) else None
            if items is not None and not isinstance(items, list):
                raise _invalid(
                    self.registry,
                    image,
                    f"{path} answered a {key!r} that is not a list",
                    reason="InvalidRegistryResponse",
                )
            for item in items or ():
                if isinstance(item, str):
                    yield item
            url = _next_url(response, parse_link_next(response.headers.get("Link")))
            params = None  # the Link target carries its own query
            if url is not None:
                if url in seen:
                    return
                seen.add(url)
        raise RegistryError(
            "unavailable",
            f"registry {self.registry} kept paging {path} past {self.transport.settings.max_pages} pages for {image}",
            registry=self.registry,
            image=image,
            reason="InvalidRegistryResponse",
        )


def _next_url(response: httpx.Response, link: str | None) -> str | None:
    if not link:
        return None
    return str(response.url.join(link))


def _limited(response: httpx.Response, limit: int, registry: str, shown: str, what: str) -> bytes:
    raw = response.content
    if len(raw) > limit:
        raise _invalid(registry, shown, f"{what} is larger than {limit // (1024 * 1024)} MiB")
    return raw


def _choose_platform(index: dict[str, Any], registry: str, shown: str) -> str:
    manifests = index.get("manifests")
    if not isinstance(manifests, list):
        raise _invalid(registry, shown, "image index has no manifests list")
    found: list[str] = []
    candidates: list[tuple[int, str]] = []
    for entry in manifests:
        if not isinstance(entry, dict):
            continue
        platform = entry.get("platform") or {}
        annotations = entry.get("annotations") or {}
        if isinstance(annotations, dict) and annotations.get("vnd.docker.reference.type") == "attestation-manifest":
            continue
        os_, arch = platform.get("os"), platform.get("architecture")
        found.append(f"{os_}/{arch}" + (f"/{platform['variant']}" if platform.get("variant") else ""))
        if (os_, arch) == WANTED_PLATFORM and isinstance(entry.get("digest"), str):
            variant = platform.get("variant")
            candidates.append((0 if variant in (None, "", "v1") else 1, entry["digest"]))
    if not candidates:
        platforms = ", ".join(sorted(set(found))) or "none"
        raise RegistryError(
            "invalid",
            f"image {shown} on registry {registry} has no linux/amd64 image (platforms: {platforms})",
            registry=registry,
            image=shown,
            reason="PlatformNotFound",
        )
    return sorted(candidates)[0][1]


def _invalid(registry: str, shown: str, what: str, *, reason: str = "InvalidImageManifest") -> RegistryError:
    return RegistryError(
        "invalid", f"registry {registry}, image {shown}: {what}", registry=registry, image=shown, reason=reason
    )
