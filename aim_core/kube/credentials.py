"""How the operator reaches and authenticates to the API server: credentials, TLS and proxy.

:class:`Credentials` hold what a login produced (kopf's, or
:mod:`aim_core.operator.login` for the CLI), inline certificate and key data
included, in memory. :func:`ssl_context` turns them into the TLS context of the
adapter's connection pools (:mod:`aim_core.kube.client`), writing inline key
material to disk only for as long as ``ssl`` needs to read it, and
:func:`proxy_for` finds the proxy the environment names for the server.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import ssl
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Iterator

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
    ctx = ssl.create_default_context()
    if creds.ca_path:
        ctx.load_verify_locations(cafile=creds.ca_path)
    elif creds.ca_data:
        ctx.load_verify_locations(cadata=pem(creds.ca_data).decode())
    if not (creds.certificate_path or creds.certificate_data):
        return ctx
    # ssl loads a client certificate and key from files only: inline data is written (0600, in a 0700
    # directory) just long enough to load, so no private key is left on disk.
    with private_dir() as scratch:
        paths = []
        for name, path, data in (("client.crt", creds.certificate_path, creds.certificate_data),
                                 ("client.key", creds.private_key_path, creds.private_key_data)):
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
