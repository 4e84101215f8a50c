"""Bearer tokens a test can issue and revoke on a real kube-apiserver: a token-review webhook on loopback.

kube-apiserver reads its ``--token-auth-file`` only at start, so a token listed there can be neither
revoked nor added while the server runs. Tokens a test makes up are answered by this webhook instead
(``--authentication-token-webhook-config-file``, with the cache off: ``--authentication-token-webhook-cache-ttl=0s``):
the server asks it about every bearer token its token file does not know, so a token taken out of
:attr:`TokenWebhook.accepted` is refused (401) from the next request on, as a revoked or expired
token is on a real cluster.

* :attr:`TokenWebhook.users`: token -> the user it authenticates (``username``, ``groups``, ``uid``), as
  the emulator's ``users`` (TokenReviews of the metrics server);
* :attr:`TokenWebhook.accepted`: tokens authenticated as an administrator (``system:masters``),
  as the emulator's ``tokens`` accepts them; ``None`` (the default) accepts none.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

ADMIN_GROUPS = ("system:masters", "system:authenticated")


class TokenWebhook:
    """An HTTP server on 127.0.0.1 answering kube-apiserver's TokenReviews, in a thread of its own."""

    def __init__(self) -> None:
        self.users: dict[str, dict[str, Any]] = {}
        self.accepted: frozenset[str] | None = None
        self.reviews = 0  # TokenReviews answered (how often the server asked)
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                review = json.loads(self.rfile.read(length) or b"{}")
                answer = webhook.review(review)
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/authenticate"
        self._thread = threading.Thread(target=self._server.serve_forever, name="aim-envtest-tokens", daemon=True)

    def start(self) -> TokenWebhook:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        self.users = {}
        self.accepted = None

    def user_of(self, token: str) -> dict[str, Any] | None:
        if token in self.users:
            return self.users[token]
        if self.accepted is not None and token in self.accepted:
            return {"username": f"aim-test-token:{token[:12]}", "groups": list(ADMIN_GROUPS)}
        return None

    def review(self, review: dict[str, Any]) -> dict[str, Any]:
        self.reviews += 1
        spec = review.get("spec") or {}
        user = self.user_of(str(spec.get("token") or ""))
        status: dict[str, Any] = {"authenticated": user is not None}
        if user is not None:
            status["user"] = {k: v for k, v in user.items() if k in ("username", "uid", "groups", "extra")}
            if spec.get("audiences"):
                status["audiences"] = spec["audiences"]  # valid for whatever the server asks for
        return {
            "apiVersion": review.get("apiVersion") or "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "status": status,
        }

    def config_file(self, path: Path) -> Path:
        """The kubeconfig-format file kube-apiserver's ``--authentication-token-webhook-config-file`` names."""
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "tokens", "cluster": {"server": self.url}}],
                    "users": [{"name": "kube-apiserver", "user": {}}],
                    "contexts": [{"name": "tokens", "context": {"cluster": "tokens", "user": "kube-apiserver"}}],
                    "current-context": "tokens",
                }
            )
        )
        return path
