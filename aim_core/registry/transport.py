"""HTTP to one registry host: auth challenges, retries, errors.

A :class:`RegistryTransport` owns one ``httpx.AsyncClient`` (keep-alive, one
pool) per event loop. Each request:

- carries what the host asked for last time (Basic credentials, or a bearer
  token cached per scope and credentials), so a warm client sends no extra
  round trip;
- on ``401`` follows the ``WWW-Authenticate`` challenge once: Basic resends
  with the credentials, Bearer fetches a token from the challenge's ``realm``
  (credentials go to the token service only, never to the registry);
- is retried with exponential backoff and jitter on ``429``, ``5xx``, timeouts
  and network errors, honouring ``Retry-After`` up to
  ``AIM_ENGINE_REGISTRY_MAX_RETRY_AFTER``;
- ends in a :class:`RegistryError` naming the registry and the image when it
  cannot succeed; credentials are redacted from every message.

Redirects (blob downloads from a CDN) are followed; httpx drops the
``Authorization`` header when a redirect leaves the origin. The headers registries
send are read in :mod:`aim_core.registry.headers`, failures turned into errors in
:mod:`aim_core.registry.failures`.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import logging
import os
import random
import ssl
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs
import httpx

from aim_core import metrics
from aim_core.registry.credentials import credentials_fingerprint
from aim_core.registry.errors import RegistryError
from aim_core.registry.failures import network_error, quota_exhausted, reset_wait, response_error
from aim_core.registry.headers import Challenge, parse_challenge, parse_link_next, retry_after_seconds
from aim_core.registry.settings import RegistrySettings, is_loopback

if TYPE_CHECKING:
    from aim_core.plugin.providers import RegistryCredentials

__all__ = [
    "Challenge",
    "RegistryTransport",
    "parse_challenge",
    "parse_link_next",
    "retry_after_seconds",
    "ssl_context",
]

logger = logging.getLogger("aim_engine.registry")

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# An unknown host name or a certificate that is not trusted does not get better in a second:
# the caller's backoff asks again later, without holding a worker for the retries.
_NOT_RETRIED = frozenset({"DNSFailure", "TLSError"})
_USER_AGENT = "aim-engine-registry/1"
_MAX_TOKENS = 1024


def ssl_context(settings: RegistrySettings) -> ssl.SSLContext:
    """The standard trust (``SSL_CERT_FILE``/``SSL_CERT_DIR`` honoured) plus ``AIM_ENGINE_REGISTRY_CA_FILE``.

    Loading a trust store takes a good part of a second; one context is shared by
    every client with the same trust settings.
    """
    return _ssl_context(settings.ca_file, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.lru_cache(maxsize=8)
def _ssl_context(ca_file: str | None, _cert_file: str | None, _cert_dir: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if context.cert_store_stats().get("x509_ca", 0) == 0 and not context.get_ca_certs():
        try:  # no system store (a bare container): fall back to the bundle httpx ships with
            import certifi

            context.load_verify_locations(certifi.where())
        except (ImportError, OSError):  # pragma: no cover - depends on the image
            pass
    if ca_file:
        context.load_verify_locations(ca_file)
    return context


@attrs.define
class _Token:
    value: str
    expires: float


class RegistryTransport:
    """Requests to one registry host with auth, retries and error mapping."""

    def __init__(
        self,
        registry: str,
        *,
        base_url: str | None = None,
        settings: RegistrySettings | None = None,
        challenge: Challenge | None = None,
    ) -> None:
        """:param challenge: the auth the host is known to ask for (e.g. a bearer realm), so
        the first request does not need a ``401`` round trip; a different answer still wins."""
        self.registry = registry
        self.settings = settings or RegistrySettings.from_env()
        self.base_url = (base_url or f"{self.settings.scheme(registry)}://{registry}").rstrip("/")
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._challenge: Challenge | None = challenge  # what the host asked for last
        self._tokens: dict[tuple[str, str, str], _Token] = {}
        self.requests = 0  #: HTTP requests sent (registry and token service), for tests and benchmarks

    # ------------------------------------------------------------ lifecycle

    @property
    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            # A pool belongs to the loop that made it: a new loop (a test, a restarted
            # operator) gets a new one instead of a pool that is bound to a dead loop.
            self._client = httpx.AsyncClient(
                verify=ssl_context(self.settings),
                timeout=httpx.Timeout(self.settings.timeout),
                follow_redirects=True,
                max_redirects=5,
                trust_env=not is_loopback(self.registry),  # proxies from the env, never for loopback
                headers={"User-Agent": _USER_AGENT},
                limits=httpx.Limits(max_connections=16, max_keepalive_connections=8),
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base_url}{path}"

    # ------------------------------------------------------------ requests

    @metrics.registry_errors
    async def request(
        self,
        method: str,
        path: str,
        *,
        image: str,
        scope: str | None,
        credentials: RegistryCredentials | None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        ok: tuple[int, ...] = (200,),
    ) -> httpx.Response:
        """Send with auth and retries; return a response whose status is in ``ok``.

        :param scope: the token scope this request needs, e.g. ``repository:org/repo:pull``.
        :raises RegistryError: for anything else.
        """
        url = self.url(path)
        tried_auth = False
        while True:
            auth = await self._authorization(scope, credentials, image)
            response = await self._send(method, url, image, credentials, headers, params, auth, json_body)
            if response.status_code != 401 or tried_auth:
                break
            challenge = parse_challenge(response.headers.get("WWW-Authenticate", ""))
            if challenge is None or challenge.scheme not in ("basic", "bearer"):
                break
            tried_auth = True
            self._challenge = challenge
            if challenge.scheme == "basic" and not _has_basic(credentials):
                break
            if challenge.scheme == "bearer" and auth is not None and auth.startswith("Bearer "):
                if challenge.params.get("error") != "invalid_token":
                    break  # the token was fine but does not reach far enough: asking again cannot help
                self._tokens.clear()  # expired or revoked: fetch a new one once
        if response.status_code in ok:
            return response
        raise await response_error(self.registry, response, image, credentials)

    async def get_json(
        self,
        path: str,
        *,
        image: str,
        scope: str | None,
        credentials: RegistryCredentials | None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[Any, httpx.Response]:
        response = await self.request(
            "GET", path, image=image, scope=scope, credentials=credentials, params=params, headers=headers
        )
        try:
            return response.json(), response
        except ValueError:
            raise RegistryError(
                "invalid",
                f"registry {self.registry} answered {response.url.path} for {image} with a body that is not JSON",
                registry=self.registry,
                image=image,
                reason="InvalidRegistryResponse",
                status=response.status_code,
            ) from None

    async def _send(
        self,
        method: str,
        url: str,
        image: str,
        credentials: RegistryCredentials | None,
        headers: Mapping[str, str] | None,
        params: Mapping[str, Any] | None,
        auth: str | None,
        json_body: Any = None,
    ) -> httpx.Response:
        all_headers = dict(headers or {})
        if auth is not None:
            all_headers["Authorization"] = auth
        settings = self.settings
        attempt = 0
        while True:
            failure: RegistryError | None = None
            wait = None
            try:
                self.requests += 1
                response = await self.client.request(method, url, headers=all_headers, params=params, json=json_body)
                metrics.registry_response(self.registry, method, response.status_code)
                if response.status_code not in _RETRY_STATUSES and not quota_exhausted(response):
                    return response
                wait = retry_after_seconds(response.headers.get("Retry-After"))
                if wait is None and quota_exhausted(response):
                    wait = reset_wait(response)
                if wait is not None and wait > settings.max_retry_after:
                    raise await response_error(self.registry, response, image, credentials, retry_after=wait)
                if attempt >= settings.retries:
                    raise await response_error(self.registry, response, image, credentials, retry_after=wait)
                await response.aclose()
            except httpx.TimeoutException:
                failure = RegistryError(
                    "timeout",
                    f"registry {self.registry} did not answer within {settings.timeout:g}s for {image}",
                    registry=self.registry,
                    image=image,
                )
            except httpx.TransportError as exc:
                failure = network_error(self.registry, exc, image, credentials)
            if failure is not None:
                metrics.registry_response(self.registry, method, "<error>")
            if failure is not None and (attempt >= settings.retries or failure.reason in _NOT_RETRIED):
                raise failure
            delay = min(settings.max_backoff, settings.backoff * (2**attempt)) * random.uniform(0.5, 1.0)
            if wait is not None:
                delay = max(delay, wait)
            logger.info("registry %s: retrying %s %s in %.2fs", self.registry, method, _path(url), delay)
            await asyncio.sleep(delay)
            attempt += 1

    # ------------------------------------------------------------ auth

    async def _authorization(
        self, scope: str | None, credentials: RegistryCredentials | None, image: str
    ) -> str | None:
        challenge = self._challenge
        if challenge is None:
            return None
        if challenge.scheme == "basic":
            if _has_basic(credentials):
                assert credentials is not None
                return _basic(credentials)
            return None
        if credentials is not None and credentials.token and not credentials.username:
            return f"Bearer {credentials.token}"  # a registry token from the pull secret, used as is
        token = await self._token(challenge, scope, credentials, image)
        return f"Bearer {token}"

    async def _token(
        self, challenge: Challenge, scope: str | None, credentials: RegistryCredentials | None, image: str
    ) -> str:
        realm = challenge.params.get("realm", "")
        service = challenge.params.get("service", "")
        scope = scope if scope is not None else challenge.params.get("scope", "")
        key = (realm, scope, credentials_fingerprint(credentials))  # never one password's token for another
        cached = self._tokens.get(key)
        if cached is not None and cached.expires > time.monotonic():
            return cached.value
        if not realm.startswith(("http://", "https://")):
            raise RegistryError(
                "auth",
                f"registry {self.registry} asked for a bearer token without a usable realm (image {image})",
                registry=self.registry,
                image=image,
            )
        headers: dict[str, str] = {}
        if _has_basic(credentials):
            assert credentials is not None
            realm_host = httpx.URL(realm).netloc.decode()
            if realm.startswith("http://") and self.settings.scheme(realm_host) != "http":
                raise RegistryError(
                    "auth",
                    f"registry {self.registry} sends its token requests to a plain-HTTP realm ({realm_host}); "
                    f"credentials are not sent there (image {image}). List that host in "
                    "AIM_ENGINE_REGISTRY_INSECURE if that is intended.",
                    registry=self.registry,
                    image=image,
                )
            headers["Authorization"] = _basic(credentials)
        params = {k: v for k, v in (("service", service), ("scope", scope)) if v}
        response = await self._send("GET", realm, image, credentials, headers, params, None)
        if response.status_code != 200:
            raise await response_error(self.registry, response, image, credentials, token_service=True)
        try:
            body = response.json()
            value = body.get("token") or body.get("access_token")
            expires_in = float(body.get("expires_in") or 60)
        except (ValueError, AttributeError, TypeError):
            value, expires_in = None, 0.0
        if not isinstance(value, str) or not value:
            raise RegistryError(
                "auth",
                f"token service of registry {self.registry} gave no token for {image}",
                registry=self.registry,
                image=image,
            )
        # renew a little early; a token that expires sooner than that is used once
        now = time.monotonic()
        self._tokens[key] = _Token(value, now + max(0.0, expires_in - 10))
        if len(self._tokens) > _MAX_TOKENS:  # one per repository scope: drop the expired, then the oldest
            for stale in [k for k, t in self._tokens.items() if t.expires <= now] or list(self._tokens)[:-_MAX_TOKENS]:
                self._tokens.pop(stale, None)
        return value


def _basic(credentials: RegistryCredentials) -> str:
    pair = f"{credentials.username or ''}:{credentials.password or ''}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def _has_basic(credentials: RegistryCredentials | None) -> bool:
    return credentials is not None and bool(credentials.username) and credentials.password is not None


def _path(url: str) -> str:
    return httpx.URL(url).path
