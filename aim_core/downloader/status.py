"""Merge patches on the artifact's ``status`` subresource, as the pod's service account.

In a pod the API server is ``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT``,
trusted through the service account's ``ca.crt`` and addressed with its ``token`` (read
again before each patch, since projected tokens rotate). The artifact is named by
``ARTIFACT_NAME`` and ``ARTIFACT_NAMESPACE`` (the namespace falls back to the service
account's own). Without them, or outside a cluster, reporting is off and the download
runs anyway: status reporting never fails a download.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
from pathlib import Path
from typing import Any

import httpx

from aim_core.downloader.config import Settings

log = logging.getLogger("aim.downloader")

GROUP_VERSION = "aim.eai.amd.com/v1alpha1"


class StatusReporter:
    """Sends ``{"status": ...}`` merge patches; failures are logged (once per kind), never raised."""

    def __init__(
        self,
        base_url: str | None,
        namespace: str,
        name: str,
        token_file: Path | None = None,
        ca_file: Path | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.enabled = bool(base_url and namespace and name)
        self.namespace, self.name = namespace, name
        self.patches = 0
        self._token_file = token_file
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._client: httpx.Client | None = None
        if self.enabled:
            verify: ssl.SSLContext | bool = True
            if ca_file is not None and ca_file.is_file():
                verify = ssl.create_default_context(cafile=str(ca_file))
            self._client = httpx.Client(
                base_url=base_url or "",
                verify=verify,
                timeout=timeout,
                headers={"User-Agent": "aim-downloader"},
                trust_env=False,
            )
            self._path = f"/apis/{GROUP_VERSION}/namespaces/{namespace}/aimartifacts/{name}/status"

    @classmethod
    def from_settings(cls, settings: Settings, env: dict[str, str] | None = None) -> StatusReporter:
        env = dict(os.environ) if env is None else env
        sa = Path(settings.serviceaccount_dir)
        namespace = settings.artifact_namespace or _read(sa / "namespace")
        host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "443")
        if not host or not settings.artifact_name or not namespace:
            missing = [
                n
                for n, v in (
                    ("KUBERNETES_SERVICE_HOST", host),
                    ("ARTIFACT_NAME", settings.artifact_name),
                    ("ARTIFACT_NAMESPACE", namespace),
                )
                if not v
            ]
            log.info("status reporting is off (%s not set)", ", ".join(missing))
            return cls(None, "", "")
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return cls(
            f"https://{host}:{port}", namespace, settings.artifact_name, token_file=sa / "token", ca_file=sa / "ca.crt"
        )

    def patch(self, status: dict[str, Any]) -> bool:
        """Merge ``status`` into the artifact's status; True when the API server accepted it."""
        if not self.enabled or self._client is None:
            return False
        headers = {"Content-Type": "application/merge-patch+json"}
        token = _read(self._token_file) if self._token_file else ""
        if token:
            headers["Authorization"] = f"Bearer {token}"
        with self._lock:
            try:
                response = self._client.patch(self._path, json={"status": status}, headers=headers)
            except httpx.HTTPError as exc:
                self._warn("transport", f"cannot reach the API server to patch status: {type(exc).__name__}: {exc}")
                return False
            if response.status_code >= 400:
                self._warn(
                    str(response.status_code),
                    f"patching {self.namespace}/{self.name} status was refused: HTTP {response.status_code} "
                    f"{_reason(response)}",
                )
                return False
            self.patches += 1
            return True

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("%s", message)


def progress_status(downloaded: int, total: int, *, done: bool = False) -> dict[str, Any]:
    """``status.progress``: percent of ``total``, held at 99 until ``done``."""
    if done:
        percent = 100
    elif total <= 0:
        percent = 0
    else:
        percent = min(99, downloaded * 100 // total)
    return {
        "progress": {
            "percentage": percent,
            "displayPercentage": f"{percent} %",
            "downloadedBytes": downloaded,
            "totalBytes": total,
        }
    }


def download_status(protocol: str, attempt: int, total: int, sequence: tuple[str, ...], message: str) -> dict[str, Any]:
    return {
        "download": {
            "protocol": protocol,
            "attempt": attempt,
            "totalAttempts": total,
            "protocolSequence": ",".join(sequence),
            "message": message,
        }
    }


def _read(path: Path | None) -> str:
    try:
        return path.read_text().strip() if path else ""
    except OSError:
        return ""


def _reason(response: httpx.Response) -> str:
    try:
        return str(response.json().get("message", ""))[:300]
    except ValueError:
        return response.text[:300]
