"""Debian's ``docker-registry`` (CNCF Distribution 2.8) on 127.0.0.1, plain, htpasswd or token auth.

A :class:`RegistryServer` writes a config, starts ``docker-registry serve`` on a
free loopback port with its storage on tmpfs when there is one, waits for
``/v2/`` and stops the process on :meth:`stop`. :class:`TokenServer` is the
bearer-token service the ``token`` variant points at (the Docker Hub / GHCR
flow): ES256 JWTs carrying an ``x5c`` certificate that is the registry's
``rootcertbundle``.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs
import httpx

from aim_testing.registry.loopback import Answer, LoopbackServer, free_port

__all__ = ["REGISTRY_BIN", "BlobCdn", "RegistryServer", "TokenServer", "find_registry_binary", "free_port"]

REGISTRY_BIN = os.environ.get("REGISTRY_BIN", "")
_CANDIDATES = ("docker-registry", "registry")


def find_registry_binary() -> str | None:
    """``$REGISTRY_BIN``, else ``docker-registry`` or ``registry`` on PATH."""
    if REGISTRY_BIN:
        return REGISTRY_BIN
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _storage_base() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


class RegistryServer:
    """One ``docker-registry`` process.

    :param auth: ``None`` (anonymous), ``"htpasswd"`` (Basic, ``users``) or
        ``"token"`` (bearer, through ``token_server``).
    :param tls: ``(cert_file, key_file)`` to serve HTTPS instead of HTTP.
    :param redirect_to: answer blob GETs with a redirect to this base URL (a
        :class:`BlobCdn` serving the storage), as Docker Hub and GHCR send blobs
        to a CDN.
    """

    def __init__(
        self,
        *,
        auth: str | None = None,
        users: Mapping[str, str] | None = None,
        token_server: TokenServer | None = None,
        tls: tuple[str, str] | None = None,
        redirect_to: str | None = None,
        binary: str | None = None,
    ) -> None:
        self.binary = binary or find_registry_binary()
        if self.binary is None:
            raise FileNotFoundError("docker-registry is not installed (apt-get install -y docker-registry)")
        self.auth = auth
        self.users = dict(users or {})
        self.token_server = token_server
        self.tls = tls
        self.redirect_to = redirect_to
        self.dir = Path(tempfile.mkdtemp(prefix="aim-registry-", dir=_storage_base()))
        self.storage = self.dir / "storage"
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}"

    def _config(self) -> str:
        lines = [
            "version: 0.1",
            "log: {level: error, accesslog: {disabled: true}}",
            f"storage: {{filesystem: {{rootdirectory: {json.dumps(str(self.storage))}}}, delete: {{enabled: true}},"
            " maintenance: {uploadpurging: {enabled: false}}}",
        ]
        http = f"addr: 127.0.0.1:{self.port}, secret: test-only-http-secret"
        if self.tls:
            http += f", tls: {{certificate: {json.dumps(self.tls[0])}, key: {json.dumps(self.tls[1])}}}"
        lines.append(f"http: {{{http}}}")
        if self.redirect_to:
            lines.append(
                f"middleware: {{storage: [{{name: redirect, options: {{baseurl: {json.dumps(self.redirect_to)}}}}}]}}"
            )
        if self.auth == "htpasswd":
            import bcrypt

            path = self.dir / "htpasswd"
            path.write_text(
                "".join(
                    f"{user}:{bcrypt.hashpw(pw.encode(), bcrypt.gensalt(rounds=5)).decode()}\n"
                    for user, pw in self.users.items()
                )
            )
            lines.append(f"auth: {{htpasswd: {{realm: test-registry, path: {json.dumps(str(path))}}}}}")
        elif self.auth == "token":
            assert self.token_server is not None, "token auth needs a TokenServer"
            bundle = self.dir / "token-signer.pem"
            bundle.write_bytes(self.token_server.certificate_pem)
            lines.append(
                "auth: {token: {"
                f"realm: {json.dumps(self.token_server.realm)}, service: {json.dumps(self.token_server.service)}, "
                f"issuer: {json.dumps(self.token_server.issuer)}, rootcertbundle: {json.dumps(str(bundle))}"
                "}}"
            )
        return "\n".join(lines) + "\n"

    def start(self) -> RegistryServer:
        for _ in range(5):
            self.port = free_port()
            config = self.dir / "config.yml"
            config.write_text(self._config())
            log = open(self.dir / "registry.log", "ab")  # noqa: SIM115 - closed with the process
            self.process = subprocess.Popen(
                [self.binary, "serve", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            log.close()
            if self._wait_ready():
                return self
            self._kill()
        raise RuntimeError(f"docker-registry did not start; log: {(self.dir / 'registry.log').read_text()[-2000:]}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + 15
        with httpx.Client(trust_env=False, verify=False, timeout=1) as client:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    return False
                try:
                    if client.get(f"{self.url}/v2/").status_code in (200, 401):
                        # Another server may have answered on a port this one lost the race for: a
                        # registry that could not bind exits at once, so it must still run a moment later.
                        time.sleep(0.2)
                        return self.process.poll() is None
                except httpx.TransportError:
                    pass
                time.sleep(0.005)
        return False

    def _kill(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None

    def stop(self) -> None:
        self._kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
# Token service
# ---------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@attrs.define
class TokenRequest:
    """One request the token service saw."""

    scope: list[str]
    service: str
    user: str | None  #: the Basic user, ``None`` when anonymous
    granted: bool


class TokenServer(LoopbackServer):
    """A bearer-token service for ``docker-registry``'s ``auth: token`` mode, on a thread.

    Anonymous callers get ``pull`` on repositories for which ``anonymous_pull``
    says yes (default: all but those under ``private/``); users with the right
    password get ``pull``, ``push``, ``delete`` and ``registry:catalog:*``. A
    wrong password is answered ``401``.
    """

    def __init__(
        self,
        users: Mapping[str, str],
        *,
        service: str = "test-registry",
        issuer: str = "test-token-issuer",
        anonymous_pull: Callable[[str], bool] | None = None,
        expires_in: int = 300,
    ) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        super().__init__()
        self.users = dict(users)
        self.service = service
        self.issuer = issuer
        self.expires_in = expires_in
        self.anonymous_pull = anonymous_pull or (lambda repo: not repo.startswith("private/"))
        self.requests: list[TokenRequest] = []
        self.issued: list[str] = []  #: every token handed out, e.g. to look for them where they must not be
        self._key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "aim-test-token-signer")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.certificate_pem = cert.public_bytes(serialization.Encoding.PEM)
        self._x5c = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()

    @property
    def realm(self) -> str:
        return f"{self.url}/token"

    def start(self, port: int = 0) -> TokenServer:
        return super().start(port)

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        authorization = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        status, answer = self._answer(path, authorization)
        extra = [("WWW-Authenticate", 'Basic realm="token"')] if status == 401 else []
        return status, [("Content-Type", "application/json"), *extra], json.dumps(answer).encode()

    def _answer(self, path: str, authorization: str | None) -> tuple[int, dict[str, Any]]:
        query = parse_qs(urlsplit(path).query)
        scopes = [s for value in query.get("scope", []) for s in value.split(" ") if s]
        service = (query.get("service") or [""])[0]
        user = None
        if authorization and authorization.lower().startswith("basic "):
            try:
                user, _, password = base64.b64decode(authorization[6:]).decode().partition(":")
            except ValueError:
                user, password = "", ""
            if self.users.get(user) != password:
                self.requests.append(TokenRequest(scopes, service, user, False))
                return 401, {"errors": [{"code": "UNAUTHORIZED", "message": "bad credentials"}]}
        access = list(self._access(scopes, user))
        self.requests.append(TokenRequest(scopes, service, user, True))
        token = self.sign(user or "", access)
        self.issued.append(token)
        return 200, {
            "token": token,
            "expires_in": self.expires_in,
            "issued_at": datetime.datetime.now(datetime.UTC).isoformat(),
        }

    def _access(self, scopes: Iterable[str], user: str | None) -> Iterable[dict[str, Any]]:
        for scope in scopes:
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            wanted = [a for a in actions.split(",") if a]
            if kind == "repository":
                allowed = (
                    {"pull", "push", "delete", "*"} if user else ({"pull"} if self.anonymous_pull(name) else set())
                )
            elif kind == "registry" and name == "catalog":
                allowed = {"*"} if user else set()
            else:
                allowed = set()
            granted = [a for a in wanted if a in allowed]
            if granted:
                yield {"type": kind, "name": name, "actions": granted}

    def sign(self, subject: str, access: list[dict[str, Any]]) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        now = int(time.time())
        header = {"alg": "ES256", "typ": "JWT", "x5c": [self._x5c]}
        claims = {
            "iss": self.issuer,
            "sub": subject,
            "aud": self.service,
            "exp": now + self.expires_in,
            "nbf": now - 5,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing_input = f"{_b64url(json.dumps(header).encode())}.{_b64url(json.dumps(claims).encode())}"
        der = self._key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{signing_input}.{_b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


# ---------------------------------------------------------------------------
# A CDN for blob redirects
# ---------------------------------------------------------------------------


class BlobCdn(LoopbackServer):
    """Serves a registry's storage tree over HTTP, as the CDN a registry redirects blob GETs to.

    Start it first, pass :attr:`url` as ``RegistryServer(redirect_to=...)``, then
    :meth:`serve` the server's storage. ``.requests`` logs ``(path, headers)``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.port = free_port()  # known before serving: the registry's config names it
        self.root: Path | None = None
        self.requests: list[tuple[str, dict[str, str]]] = []

    def serve(self, root: Path) -> BlobCdn:
        self.root = root
        return self.start(self.port)

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        path = urlsplit(path).path
        self.requests.append((path, {k.lower(): v for k, v in headers.items()}))
        assert self.root is not None
        target = (self.root / path.lstrip("/")).resolve()
        ok = target.is_file() and self.root.resolve() in target.parents
        return (
            200 if ok else 404,
            [("Content-Type", "application/octet-stream")],
            (target.read_bytes() if ok else b"not found"),
        )
