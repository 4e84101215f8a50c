"""How the operator reaches and authenticates to the API server: credentials, TLS and proxy.

:class:`Credentials` hold what a login produced (kopf's, or
:mod:`aim_core.operator.login` for the CLI), inline certificate and key data
included, in memory. :func:`ssl_context` turns them into the TLS context of the
adapter's connection pools (:mod:`aim_core.kube.client`), writing inline key
material to disk only for as long as ``ssl`` needs to read it, and
:func:`proxy_for` finds the proxy the environment names for the server.

Credentials that expire are kept fresh by :class:`Authenticator`, as client-go
keeps them: a token file (the pod's service-account token, a kubeconfig's
``tokenFile``) is read again every minute and after a 401; an exec plugin runs
again when its ``expirationTimestamp`` passes and after a 401; when it returns a new client
certificate, :attr:`Authenticator.tls_generation` changes and the client makes new connections
with it (:mod:`aim_core.kube.client`). A 401 that comes
back although the credentials were just read again is an authentication failure:
:meth:`Authenticator.refused_for` says for how long, and ``/healthz`` fails once
that lasts (:mod:`aim_core.operator.probes`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import shutil
import ssl
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator

import attrs


@attrs.frozen
class Credentials:
    """How to reach and authenticate to the API server."""

    server: str
    token: str | None = attrs.field(default=None, repr=False)
    ca_path: str | None = None
    ca_data: str | bytes | None = None  # inline data: PEM, or base64 of PEM as in a kubeconfig
    certificate_path: str | None = None
    certificate_data: str | bytes | None = None
    private_key_path: str | None = None
    private_key_data: str | bytes | None = attrs.field(default=None, repr=False)
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    insecure: bool = False
    default_namespace: str | None = None
    # Where the token comes from, when it changes under a running process (client-go re-reads both):
    token_file: str | None = None  # read again every minute and after a 401 (bound service-account tokens, tokenFile)
    expires: float | None = None  # epoch seconds when an exec plugin's token expires (its expirationTimestamp)
    relogin: Callable[[], Credentials] | None = attrs.field(default=None, eq=False, repr=False)  # runs the plugin again


log = logging.getLogger("aim_engine.kube")

TOKEN_FILE_REREAD_SECONDS = 60.0  # client-go's cachedFileTokenSource reads the file again after a minute
REREAD_AT_MOST_EVERY = 1.0  # a burst of 401s runs an exec plugin once, not once per refused request


def read_token_file(path: str) -> str:
    """The token in ``path``, without the surrounding whitespace (a final newline is usual; client-go trims it too)."""
    with open(path, encoding="utf-8") as file:
        token = file.read().strip()
    if not token:
        raise ValueError(f"the token file {path} is empty")
    return token


class Authenticator:
    """The ``Authorization`` header of every request, read again when the credentials may have changed.

    Thread-safe (the CLI and tests use one client from several event loops): a refresh runs in a
    worker thread under a lock, and callers that saw the same stale header share one refresh.
    """

    def __init__(
        self,
        creds: Credentials,
        *,
        reread_seconds: float = TOKEN_FILE_REREAD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.creds = creds
        self.reread_seconds = reread_seconds
        self._clock = clock
        self._header = authorization(creds)
        self.tls_generation = 0  # counts changes of the client certificate (an exec plugin that returns one)
        self._read_at = clock()
        self._lock = threading.Lock()
        self._relogin_refused_at = -REREAD_AT_MOST_EVERY  # when a 401 last ran the plugin again
        self._refused_since: float | None = None  # first 401 with freshly read credentials; None once accepted

    @property
    def refreshable(self) -> bool:
        return bool(self.creds.token_file or self.creds.relogin)

    def current(self) -> str | None:
        return self._header

    def stale(self) -> bool:
        """Whether the credentials should be read again before the next request."""
        creds = self.creds
        if creds.relogin is not None and creds.expires is not None and time.time() >= creds.expires:
            return True
        return bool(creds.token_file) and self._clock() - self._read_at >= self.reread_seconds

    async def header(self) -> str | None:
        """The header for the next request, read again first when it is due."""
        if self.stale():
            await self.refresh(self._header, due=True)
        return self._header

    async def refresh(self, used: str | None, *, due: bool = False) -> bool:
        """Read the credentials again after ``used`` was refused (or, ``due``, when their time is up).

        Returns whether a request refused with ``used`` should be sent again: the header
        changed (here or in a concurrent refresh). Never raises: a token file that cannot
        be read or a plugin that fails is logged and the old credentials stay.
        """
        if not self.refreshable:
            return False
        if used != self._header:
            return True  # someone else refreshed meanwhile
        return await asyncio.to_thread(self._reread, used, due)

    def _reread(self, used: str | None, due: bool) -> bool:
        with self._lock:
            if used != self._header:
                return True
            creds = self.creds
            if not due and creds.relogin is not None:
                if self._clock() - self._relogin_refused_at < REREAD_AT_MOST_EVERY:
                    return False  # the plugin just ran for a 401: running it once per refused request helps nobody
                self._relogin_refused_at = self._clock()
            try:
                if creds.relogin is not None:
                    fresh = creds.relogin()
                else:
                    fresh = attrs.evolve(creds, token=read_token_file(creds.token_file or ""))
            except Exception as exc:  # noqa: BLE001 - keep what we have; the next 401 or minute tries again
                log.warning("cannot read the API credentials again: %s", exc)
                self._read_at = self._clock()
                return False
            renewed = client_certificate(fresh) != client_certificate(creds)
            if renewed:
                self.tls_generation += 1  # the client rebuilds its TLS context and connections (as client-go does)
            self.creds = fresh
            self._header = authorization(fresh)
            self._read_at = self._clock()
            return self._header != used or renewed

    def accepted(self) -> None:
        """The server answered a request with something other than 401."""
        self._refused_since = None

    def refused(self) -> None:
        """The server refused freshly read credentials (401): an authentication failure."""
        if self._refused_since is None:
            self._refused_since = self._clock()
            log.error(
                "the API server refuses the operator's credentials (401 Unauthorized)%s",
                " although they were just read again" if self.refreshable else "",
            )

    def refused_for(self) -> float | None:
        """For how long every answer has been 401 although the credentials were fresh; None if not refused."""
        since = self._refused_since
        return None if since is None else self._clock() - since


def client_certificate(creds: Credentials) -> tuple[object, ...]:
    """What identifies the client certificate ``creds`` present (paths or inline data)."""
    return (creds.certificate_path, creds.certificate_data, creds.private_key_path, creds.private_key_data)


def authorization(creds: Credentials) -> str | None:
    """The ``Authorization`` header for ``creds``: a bearer token, else basic auth, else none (a client certificate)."""
    if creds.token:
        return f"Bearer {creds.token}"
    if creds.username and creds.password:
        pair = f"{creds.username}:{creds.password}".encode()
        return f"Basic {base64.b64encode(pair).decode()}"
    return None


def pem(data: str | bytes) -> bytes:
    """Certificate or key data as PEM bytes, given as PEM or (as kubeconfigs hold it) base64 of PEM."""
    raw = data.encode() if isinstance(data, str) else data
    return raw if raw.lstrip().startswith(b"-----BEGIN") else base64.b64decode(raw)


@contextlib.contextmanager
def private_dir() -> Iterator[str]:
    """A temporary directory only this user may enter (0700), removed with everything in it when the block ends.

    For libraries that read key material only from files (``ssl``, the kubernetes client's kubeconfig
    loader): the files live for the block, never for the process.
    """
    path = tempfile.mkdtemp(prefix="aim-engine-")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def ssl_context(creds: Credentials) -> ssl.SSLContext | bool:
    """How to verify the server and present a client certificate: ``False`` (no verification) when ``insecure``."""
    if creds.insecure:
        return False
    # A named CA is the only trust for the API server, as for client-go; the system's store (about
    # 1 MB per context) is loaded only when the kubeconfig names none.
    if creds.ca_path:
        ctx = ssl.create_default_context(cafile=creds.ca_path)
    elif creds.ca_data:
        ctx = ssl.create_default_context(cadata=pem(creds.ca_data).decode())
    else:
        ctx = ssl.create_default_context()
    if not (creds.certificate_path or creds.certificate_data):
        return ctx
    # ssl loads a client certificate and key from files only: inline data is written (0600, in a 0700
    # directory) just long enough to load, so no private key is left on disk.
    with private_dir() as scratch:
        paths = []
        for name, path, data in (
            ("client.crt", creds.certificate_path, creds.certificate_data),
            ("client.key", creds.private_key_path, creds.private_key_data),
        ):
            if data and not path:
                path = os.path.join(scratch, name)
                with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
                    file.write(pem(data))
            paths.append(path)
        ctx.load_cert_chain(paths[0], paths[1])
    return ctx


def proxy_for(server: str) -> str | None:
    """The proxy the environment names for ``server`` (HTTPS_PROXY/HTTP_PROXY, NO_PROXY), as other clients use it.

    Looked up once: aiohttp's ``trust_env`` would look it up again on every request, which doubled the
    client's CPU per request.
    """
    parts = urllib.parse.urlsplit(server)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(parts.netloc, proxies):
        return None
    return proxy
