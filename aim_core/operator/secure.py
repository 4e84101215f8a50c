"""``/metrics`` as controller-runtime serves it with ``--metrics-secure`` (F85): HTTPS, authenticated, authorized.

The certificate is ``--metrics-cert-path``/``--metrics-cert-name``/``--metrics-cert-key`` (cert-manager's
Secret mounted as a directory; loaded again when the files change, :mod:`aim_core.metrics.certwatcher`), else a self-signed one made at start, in memory, as controller-runtime
makes one when no certificate is given. Every request needs a bearer token: the API server is asked who it
belongs to (TokenReview, else 401) and whether that user may ``get`` the non-resource URL ``/metrics``
(SubjectAccessReview, else 403), as ``filters.WithAuthenticationAndAuthorization`` does. Grant it with the
``aim-engine-metrics-reader`` ClusterRole (``deploy/metrics_reader_role.yaml``, the chart). Answers are
kept for a while (authenticated tokens 1 minute, allowed users 5 minutes, denials 30 seconds, as
controller-runtime's delegating authenticator and authorizer cache them), so a scrape every 15 s costs the
API server nothing most of the time.
"""

from __future__ import annotations

import datetime
import logging
import os
import ssl
import time
from collections.abc import Callable
from typing import Any

from aim_core.kube import private_dir
from aim_core.metrics.certwatcher import CertWatcher
from aim_core.reconcile.resources import SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS

log = logging.getLogger("aim_engine.probes")

AUTHENTICATED_TTL = 60.0
ALLOWED_TTL = 300.0
DENIED_TTL = 30.0


def _server_context() -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def serving_context(
    cert_dir: str | None, cert_name: str = "tls.crt", key_name: str = "tls.key"
) -> tuple[ssl.SSLContext, CertWatcher | None]:
    """The TLS context of the metrics server: the certificate in ``cert_dir``, else a self-signed one.

    With ``cert_dir``, the :class:`~aim_core.metrics.certwatcher.CertWatcher` that loads the pair again
    when cert-manager rotates it (start it on the server's loop); None for the self-signed certificate.
    """
    if cert_dir:
        watcher = CertWatcher(
            os.path.join(cert_dir, cert_name), os.path.join(cert_dir, key_name), make_context=_server_context
        )
        return watcher.context, watcher
    ctx = _server_context()
    cert, key = self_signed()
    with private_dir() as scratch:
        cert_path, key_path = os.path.join(scratch, "tls.crt"), os.path.join(scratch, "tls.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
                file.write(data)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx, None


def self_signed(host: str = "aim-engine-controller-manager-metrics-service") -> tuple[bytes, bytes]:
    """A self-signed certificate and its key (PEM), valid for a year, as controller-runtime makes when given none."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host), x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


class Gate:
    """Authentication (TokenReview) and authorization (SubjectAccessReview) of one non-resource URL."""

    def __init__(self, client: Callable[[], Any], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._client = client
        self._clock = clock
        self._users: dict[str, tuple[float, dict[str, Any] | None]] = {}  # token -> (until, user or None)
        self._decisions: dict[tuple[str, str, str], tuple[float, bool, str]] = {}  # (user, verb, path) -> ...

    async def check(self, authorization: str | None, verb: str, path: str) -> tuple[int, str]:
        """``(200, user)`` when allowed, else ``(401 or 403 or 503, why)``."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return 401, "Unauthorized: a bearer token is required"
        kube = self._client()
        if kube is None:
            return 503, "the operator has not logged in to the API server yet"
        try:
            user = await self._authenticate(kube, token.strip())
            if user is None:
                return 401, "Unauthorized"
            allowed, reason = await self._authorize(kube, user, verb, path)
        except Exception as exc:  # noqa: BLE001 - the API server cannot answer: nobody is let in
            log.warning("cannot check a request for %s with the API server: %s", path, exc)
            return 503, f"the API server cannot check this request: {exc}"
        name = user.get("username") or ""
        if not allowed:
            return 403, f'Forbidden: user "{name}" may not {verb} {path}' + (f" ({reason})" if reason else "")
        return 200, name

    async def _authenticate(self, kube: Any, token: str) -> dict[str, Any] | None:
        now = self._clock()
        cached = self._users.get(token)
        if cached is not None and cached[0] > now:
            return cached[1]
        answer = await kube.create(
            TOKEN_REVIEWS,
            {
                "apiVersion": TOKEN_REVIEWS.api_version,
                "kind": TOKEN_REVIEWS.kind,
                "metadata": {},
                "spec": {"token": token},
            },
        )
        status = (answer or {}).get("status") or {}
        user = dict(status.get("user") or {}) if status.get("authenticated") else None
        self._prune(self._users, now)
        self._users[token] = (now + (AUTHENTICATED_TTL if user else DENIED_TTL), user)
        return user

    async def _authorize(self, kube: Any, user: dict[str, Any], verb: str, path: str) -> tuple[bool, str]:
        now = self._clock()
        key = (user.get("username") or "", verb, path)
        cached = self._decisions.get(key)
        if cached is not None and cached[0] > now:
            return cached[1], cached[2]
        spec: dict[str, Any] = {
            "user": user.get("username") or "",
            "groups": list(user.get("groups") or ()),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.get("uid"):
            spec["uid"] = user["uid"]
        if user.get("extra"):
            spec["extra"] = user["extra"]
        answer = await kube.create(
            SUBJECT_ACCESS_REVIEWS,
            {
                "apiVersion": SUBJECT_ACCESS_REVIEWS.api_version,
                "kind": SUBJECT_ACCESS_REVIEWS.kind,
                "metadata": {},
                "spec": spec,
            },
        )
        status = (answer or {}).get("status") or {}
        allowed = bool(status.get("allowed")) and not status.get("denied")
        reason = str(status.get("reason") or status.get("evaluationError") or "")
        self._prune(self._decisions, now)
        self._decisions[key] = (now + (ALLOWED_TTL if allowed else DENIED_TTL), allowed, reason)
        return allowed, reason

    @staticmethod
    def _prune(cache: dict[Any, Any], now: float) -> None:
        if len(cache) > 1000:
            for key in [k for k, v in cache.items() if v[0] <= now]:
                del cache[key]
