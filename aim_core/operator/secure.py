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

Every replica answers scrapes, the standbys of a leader election too: the reviews go through a client of
their own (:data:`REVIEW_CONNECTIONS` connections, never the engine's, whose writes only the leader may
send), so a review is not refused as a standby's write, and a flood of requests with made-up tokens waits
for those few connections (at most :data:`MAX_PENDING` at a time; more are answered 503 at once) instead of
taking the ones reconciles need. The caches are bounded (:data:`CACHE_SIZE` entries each, the oldest
dropped first); tokens are kept only as a SHA-256 hash, and a decision is kept for the whole user (name,
uid, groups and extra), so two tokens of one name in different groups are never confused.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import logging
import os
import ssl
import subprocess
import sys
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from aim_core.kube import private_dir
from aim_core.metrics.certwatcher import CertWatcher
from aim_core.reconcile.resources import SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS

log = logging.getLogger("aim_engine.probes")

AUTHENTICATED_TTL = 60.0
ALLOWED_TTL = 300.0
DENIED_TTL = 30.0
REVIEW_CONNECTIONS = 2  # the reviews' own connection budget (a pool apart from the engine's)
MAX_PENDING = 32  # requests waiting for a review at once; more are answered 503 without asking
CACHE_SIZE = 1024  # entries per cache (tokens, decisions)


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
    cert, key = self_signed_in_child()
    with private_dir() as scratch:
        cert_path, key_path = os.path.join(scratch, "tls.crt"), os.path.join(scratch, "tls.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
                file.write(data)
        ctx.load_cert_chain(cert_path, key_path)
    return ctx, None


METRICS_HOST = "aim-engine-controller-manager-metrics-service"


def self_signed_in_child(host: str = METRICS_HOST) -> tuple[bytes, bytes]:
    """:func:`self_signed`, made by a child process: the operator never loads the cryptography package
    (its native library is about 10 MB resident in a process that signs once). The key comes back over
    a pipe, never through a file."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "aim_core.operator.secure", host], capture_output=True, check=False, timeout=60
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError("making the metrics certificate took over 60 s") from None
    if done.returncode != 0:
        raise RuntimeError(f"making the metrics certificate failed: {done.stderr.decode(errors='replace')[-300:]}")
    pair = json.loads(done.stdout)
    return pair["cert"].encode(), pair["key"].encode()


def self_signed(host: str = METRICS_HOST) -> tuple[bytes, bytes]:
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
    """Authentication (TokenReview) and authorization (SubjectAccessReview) of one non-resource URL.

    ``client`` returns the API client the reviews go through (None before the operator logged in): one
    without the leader-only write guard, with a connection pool apart from the engine's.
    """

    def __init__(
        self,
        client: Callable[[], Any],
        *,
        clock: Callable[[], float] = time.monotonic,
        cache_size: int = CACHE_SIZE,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._client = client
        self._clock = clock
        self._cache_size = max(1, cache_size)
        self._max_pending = max(1, max_pending)
        self._pending = 0
        # sha256(token) -> (until, user or None); (sha256(user), verb, path) -> (until, allowed, reason)
        self._users: OrderedDict[str, tuple[float, dict[str, Any] | None]] = OrderedDict()
        self._decisions: OrderedDict[tuple[str, str, str], tuple[float, bool, str]] = OrderedDict()

    async def check(self, authorization: str | None, verb: str, path: str) -> tuple[int, str]:
        """``(200, user)`` when allowed, else ``(401 or 403 or 503, why)``."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return 401, "Unauthorized: a bearer token is required"
        kube = self._client()
        if kube is None:
            return 503, "the operator has not logged in to the API server yet"
        if self._pending >= self._max_pending:
            return 503, "too many requests are waiting for the API server to check them; try again later"
        self._pending += 1
        try:
            user = await self._authenticate(kube, token.strip())
            if user is None:
                return 401, "Unauthorized"
            allowed, reason = await self._authorize(kube, user, verb, path)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the API server cannot answer: nobody is let in
            log.warning("cannot check a request for %s with the API server: %s", path, exc)
            return 503, f"the API server cannot check this request: {exc}"
        finally:
            self._pending -= 1
        name = user.get("username") or ""
        if not allowed:
            return 403, f'Forbidden: user "{name}" may not {verb} {path}' + (f" ({reason})" if reason else "")
        return 200, name

    async def _authenticate(self, kube: Any, token: str) -> dict[str, Any] | None:
        now = self._clock()
        key = _digest(token)
        cached = self._users.get(key)
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
        self._keep(self._users, key, (self._clock() + (AUTHENTICATED_TTL if user else DENIED_TTL), user))
        return user

    async def _authorize(self, kube: Any, user: dict[str, Any], verb: str, path: str) -> tuple[bool, str]:
        now = self._clock()
        key = (_user_key(user), verb, path)
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
        until = self._clock() + (ALLOWED_TTL if allowed else DENIED_TTL)
        self._keep(self._decisions, key, (until, allowed, reason))
        return allowed, reason

    def _keep(self, cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
        """Store ``value``; past the bound, expired entries go first, then the oldest."""
        cache[key] = value
        cache.move_to_end(key)
        if len(cache) <= self._cache_size:
            return
        now = self._clock()
        for stale in [k for k, v in cache.items() if v[0] <= now]:
            del cache[stale]
        while len(cache) > self._cache_size:
            cache.popitem(last=False)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _user_key(user: dict[str, Any]) -> str:
    """The whole identity a decision was made for: name, uid, groups (as a set) and extra."""
    extra = user.get("extra") or {}
    whole = {
        "username": user.get("username") or "",
        "uid": user.get("uid") or "",
        "groups": sorted(str(g) for g in user.get("groups") or ()),
        "extra": {str(k): sorted(str(v) for v in (vs or ())) for k, vs in extra.items()}
        if isinstance(extra, dict)
        else {},
    }
    return _digest(json.dumps(whole, sort_keys=True))


if __name__ == "__main__":  # the child of self_signed_in_child
    made = self_signed(*sys.argv[1:2])
    sys.stdout.write(json.dumps({"cert": made[0].decode(), "key": made[1].decode()}))
