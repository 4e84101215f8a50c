"""Test images built in memory and pushed over the registry HTTP API (no Docker, no skopeo).

:class:`Registry` wraps a running server with what a test needs: its host,
credentials and a pull Secret for them, and push helpers for single images
(OCI or Docker v2), multi-arch indexes (OCI index or Docker manifest list) and
cheap extra tags.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import ssl
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import httpx

from aim_core.plugin.providers import RegistryCredentials

__all__ = ["PushedImage", "Registry", "layer_blob"]

OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer_blob(content: bytes = b"aim test layer\n") -> tuple[bytes, str]:
    """A reproducible gzipped tar with one file, and the digest of the uncompressed tar."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("aim-test.txt")
        info.size, info.mtime, info.mode = len(content), 0, 0o644
        tar.addfile(info, io.BytesIO(content))
    tar_bytes = raw.getvalue()
    return gzip.compress(tar_bytes, mtime=0), _digest(tar_bytes)


@attrs.frozen
class PushedImage:
    """What a push made: the manifest digest, the config digest, and the children of an index."""

    reference: str  #: ``127.0.0.1:PORT/repo:tag``
    digest: str
    config_digest: str | None = None
    children: Mapping[str, str] = attrs.field(factory=dict)  #: ``os/arch`` -> manifest digest


class Registry:
    """A running test registry: where it is, who may use it, and how to fill it.

    :param url: base URL tests push to (``http://127.0.0.1:PORT``).
    :param storage: the server's storage root, for :meth:`add_tags`.
    :param admin: a user allowed to push (``None`` for an anonymous registry).
    :param credentials: what a client should use to read (``None`` = anonymous).
    """

    def __init__(
        self,
        url: str,
        *,
        storage: Path | None = None,
        admin: tuple[str, str] | None = None,
        credentials: RegistryCredentials | None = None,
        verify: Any = False,
    ) -> None:
        self.url = url.rstrip("/")
        self.host = httpx.URL(self.url).netloc.decode()
        self.storage = storage
        self.admin = admin
        self.credentials = credentials
        if isinstance(verify, str):
            verify = ssl.create_default_context(cafile=verify)
        self._http = httpx.Client(trust_env=False, timeout=30, verify=verify)
        self._tokens: dict[str, str] = {}

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------ references and secrets

    def image(self, repository: str, tag: str = "latest") -> str:
        """``127.0.0.1:PORT/repository:tag``."""
        return f"{self.host}/{repository}:{tag}"

    def pull_secret(
        self, name: str = "registry-pull", namespace: str = "default", credentials: RegistryCredentials | None = None
    ) -> dict[str, Any]:
        """A ``kubernetes.io/dockerconfigjson`` Secret as ``kubectl create secret docker-registry`` makes it."""
        creds = credentials or self.credentials
        if creds is None or not creds.username:
            raise ValueError("this registry has no credentials to put in a pull secret")
        auth = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
        config = {"auths": {self.host: {"username": creds.username, "password": creds.password, "auth": auth}}}
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": name, "namespace": namespace},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
        }

    # ------------------------------------------------------------ pushing

    def push_image(
        self,
        repository: str,
        tag: str | None = "latest",
        *,
        labels: Mapping[str, str] | None = None,
        architecture: str = "amd64",
        os: str = "linux",
        docker: bool = False,
        created: str = "2025-01-01T00:00:00Z",
    ) -> PushedImage:
        """Push one image whose config carries ``labels``; ``tag=None`` pushes by digest only."""
        layer, diff_id = layer_blob()
        config = {
            "architecture": architecture,
            "os": os,
            "created": created,
            "config": {"Labels": dict(labels) if labels is not None else None},
            "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        }
        config_bytes = json.dumps(config, sort_keys=True).encode()
        self.push_blob(repository, layer)
        self.push_blob(repository, config_bytes)
        manifest = {
            "schemaVersion": 2,
            "mediaType": DOCKER_MANIFEST if docker else OCI_MANIFEST,
            "config": {
                "mediaType": DOCKER_CONFIG if docker else OCI_CONFIG,
                "digest": _digest(config_bytes),
                "size": len(config_bytes),
            },
            "layers": [
                {"mediaType": DOCKER_LAYER if docker else OCI_LAYER, "digest": _digest(layer), "size": len(layer)}
            ],
        }
        digest = self.push_manifest(repository, tag, manifest)
        return PushedImage(self._ref(repository, tag, digest), digest, _digest(config_bytes))

    def push_index(
        self,
        repository: str,
        tag: str,
        platforms: Mapping[str, Mapping[str, str] | None],
        *,
        docker: bool = False,
        attestation: bool = False,
    ) -> PushedImage:
        """Push a multi-arch index; ``platforms`` maps ``os/arch[/variant]`` to that image's labels.

        ``attestation=True`` adds an ``unknown/unknown`` attestation entry, as BuildKit does.
        """
        entries, children = [], {}
        for platform, labels in platforms.items():
            os_, arch, *variant = platform.split("/")
            child = self.push_image(repository, None, labels=labels, architecture=arch, os=os_, docker=docker)
            children[platform] = child.digest
            entry: dict[str, Any] = {
                "mediaType": DOCKER_MANIFEST if docker else OCI_MANIFEST,
                "digest": child.digest,
                "size": len(self._manifest_bytes(repository, child.digest)),
                "platform": {"architecture": arch, "os": os_, **({"variant": variant[0]} if variant else {})},
            }
            entries.append(entry)
        if attestation:
            first = next(iter(children.values()))
            entries.append(
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": first,
                    "size": len(self._manifest_bytes(repository, first)),
                    "platform": {"architecture": "unknown", "os": "unknown"},
                    "annotations": {
                        "vnd.docker.reference.type": "attestation-manifest",
                        "vnd.docker.reference.digest": first,
                    },
                }
            )
        index = {"schemaVersion": 2, "mediaType": DOCKER_LIST if docker else OCI_INDEX, "manifests": entries}
        digest = self.push_manifest(repository, tag, index)
        return PushedImage(self._ref(repository, tag, digest), digest, None, children)

    def push_blob(self, repository: str, data: bytes) -> str:
        digest = _digest(data)
        if self._send("HEAD", f"/v2/{repository}/blobs/{digest}", repository).status_code == 200:
            return digest
        started = self._send("POST", f"/v2/{repository}/blobs/uploads/", repository)
        _check(started, 202)
        location = str(started.url.join(started.headers["Location"]))
        separator = "&" if "?" in location else "?"
        done = self._send(
            "PUT",
            f"{location}{separator}digest={digest}",
            repository,
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        _check(done, 201)
        return digest

    def push_manifest(self, repository: str, tag: str | None, manifest: Mapping[str, Any]) -> str:
        body = json.dumps(manifest, sort_keys=True).encode()
        digest = _digest(body)
        response = self._send(
            "PUT",
            f"/v2/{repository}/manifests/{tag or digest}",
            repository,
            content=body,
            headers={"Content-Type": manifest["mediaType"]},
        )
        _check(response, 201)
        return digest

    def tag(self, repository: str, source: str, tags: Sequence[str]) -> None:
        """Point more tags at the manifest of ``source`` (a tag or digest), one PUT each."""
        response = self._send(
            "GET",
            f"/v2/{repository}/manifests/{source}",
            repository,
            headers={"Accept": ", ".join((OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST))},
        )
        _check(response, 200)
        for tag in tags:
            put = self._send(
                "PUT",
                f"/v2/{repository}/manifests/{tag}",
                repository,
                content=response.content,
                headers={"Content-Type": response.headers["Content-Type"]},
            )
            _check(put, 201)

    def add_tags(self, repository: str, digest: str, tags: Sequence[str]) -> None:
        """Create many tags at once as link files in the storage tree (Distribution 2.x reads them live).

        ``digest`` must already be a manifest in ``repository`` (push it first).
        """
        if self.storage is None:
            raise ValueError("add_tags needs the registry's storage directory")
        base = self.storage / "docker/registry/v2/repositories" / repository / "_manifests/tags"
        algorithm, hexpart = digest.split(":", 1)
        for tag in tags:
            current = base / tag / "current"
            index = base / tag / "index" / algorithm / hexpart
            current.mkdir(parents=True, exist_ok=True)
            index.mkdir(parents=True, exist_ok=True)
            (current / "link").write_text(digest)
            (index / "link").write_text(digest)

    # ------------------------------------------------------------ plumbing

    def _manifest_bytes(self, repository: str, digest: str) -> bytes:
        response = self._send(
            "GET",
            f"/v2/{repository}/manifests/{digest}",
            repository,
            headers={"Accept": ", ".join((OCI_MANIFEST, DOCKER_MANIFEST))},
        )
        _check(response, 200)
        return response.content

    def _ref(self, repository: str, tag: str | None, digest: str) -> str:
        return f"{self.host}/{repository}:{tag}" if tag else f"{self.host}/{repository}@{digest}"

    def _send(self, method: str, path: str, repository: str, **kwargs: Any) -> httpx.Response:
        url = path if "://" in path else f"{self.url}{path}"
        headers = dict(kwargs.pop("headers", {}) or {})
        auth = self._tokens.get(repository) or self._tokens.get("*")
        if auth:
            headers["Authorization"] = auth
        response = self._http.request(method, url, headers=headers, **kwargs)
        if response.status_code != 401 or self.admin is None:
            return response
        challenge = response.headers.get("WWW-Authenticate", "")
        user, password = self.admin
        basic = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if challenge.lower().startswith("basic"):
            self._tokens["*"] = basic
        else:
            params = dict(_challenge_params(challenge))
            got = self._http.get(
                params["realm"],
                headers={"Authorization": basic},
                params={"service": params.get("service", ""), "scope": f"repository:{repository}:pull,push"},
            )
            _check(got, 200)
            self._tokens[repository] = f"Bearer {got.json()['token']}"
        headers["Authorization"] = self._tokens.get(repository) or self._tokens["*"]
        return self._http.request(method, url, headers=headers, **kwargs)


def _challenge_params(header: str) -> list[tuple[str, str]]:
    import re

    return re.findall(r'(\w+)="([^"]*)"', header)


def _check(response: httpx.Response, status: int) -> None:
    if response.status_code != status:
        raise AssertionError(
            f"{response.request.method} {response.request.url} answered {response.status_code}, "
            f"expected {status}: {response.text[:500]}"
        )
