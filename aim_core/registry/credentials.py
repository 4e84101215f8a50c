"""Registry credentials from image pull secrets.

Reads Secrets as the API returns them: ``kubernetes.io/dockerconfigjson``
(``data[".dockerconfigjson"]``, base64 of ``{"auths": {host: entry}}``) and the
legacy ``kubernetes.io/dockercfg`` (``data[".dockercfg"]``, the map without the
``auths`` wrapper). Keys are matched by host after dropping scheme and path, so
``https://index.docker.io/v1/``, ``registry-1.docker.io`` and ``docker.io`` all
name Docker Hub. An entry gives ``username``/``password``, else ``auth``
(base64 ``user:password``), else ``registrytoken`` (a bearer token used as is).

Pure: no I/O. Error messages name the Secret, never its values.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.plugin.providers import RegistryCredentials
from aim_core.registry.reference import normalize_registry

__all__ = ["InvalidPullSecret", "credentials_fingerprint", "credentials_for", "registry_key"]

DOCKERCONFIGJSON = ".dockerconfigjson"
DOCKERCFG = ".dockercfg"
# Secret types no reader ever names: the operator's Secret watch asks the API server to leave them out
# (Helm keeps each release, up to 1 MiB, in a Secret). Any other type is watched, so that a Secret of the
# wrong type named as a pull secret is reported as such as soon as it appears.
UNREAD_SECRET_TYPES = (
    "helm.sh/release.v1",
    "kubernetes.io/service-account-token",
    "kubernetes.io/tls",
    "bootstrap.kubernetes.io/token",
)
SECRET_FIELD_SELECTOR = ",".join(f"type!={kind}" for kind in UNREAD_SECRET_TYPES)


def watched_secret(secret: dict[str, Any]) -> bool:
    """Whether the operator's Secret watch carries this Secret (see :data:`SECRET_FIELD_SELECTOR`)."""
    return (secret.get("type") or "Opaque") not in UNREAD_SECRET_TYPES


class InvalidPullSecret(ValueError):
    """A pull secret whose content cannot be read; the message names the Secret."""


def registry_key(key: str) -> str:
    """The host a dockerconfig ``auths`` key names: ``https://index.docker.io/v1/`` -> ``docker.io``."""
    host = key.strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0]
    return normalize_registry(host)


def credentials_fingerprint(credentials: RegistryCredentials | None) -> str:
    """A digest of all of ``credentials`` (user, password, token); ``""`` when anonymous.

    Caches of what a registry granted (tokens, metadata) are keyed by it, so a pull
    secret with the right user but a wrong password, or none at all, never gets what
    another one was given.
    """
    if credentials is None:
        return ""
    raw = "\0".join(str(v or "") for v in (credentials.username, credentials.password, credentials.token))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def credentials_for(registry: str, secrets: Sequence[Mapping[str, Any]]) -> RegistryCredentials | None:
    """The credentials for ``registry`` from the first Secret that has an entry for it.

    :param registry: host[:port] as in :attr:`ImageReference.registry`.
    :param secrets: Secrets as read from the API, in the order they are referenced.
    :returns: ``None`` when no Secret has an entry for that host (anonymous access).
    :raises InvalidPullSecret: a Secret is not a readable docker config, or the
        matching entry has no usable credentials.
    """
    wanted = normalize_registry(registry)
    for secret in secrets:
        auths = _auths(secret)
        for key, entry in auths.items():
            if registry_key(key) == wanted:
                return _entry_credentials(_name(secret), key, entry)
    return None


def _name(secret: Mapping[str, Any]) -> str:
    meta = secret.get("metadata") or {}
    name = meta.get("name") if isinstance(meta, Mapping) else None
    namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
    if name and namespace:
        return f"{namespace}/{name}"
    return str(name or "<unnamed>")


def _auths(secret: Mapping[str, Any]) -> Mapping[str, Any]:
    name = _name(secret)
    data = secret.get("data") or {}
    string_data = secret.get("stringData") or {}
    if not isinstance(data, Mapping) or not isinstance(string_data, Mapping):
        raise InvalidPullSecret(f"pull secret {name}: data is not a map")
    for key, wrapped in ((DOCKERCONFIGJSON, True), (DOCKERCFG, False)):
        if key in string_data:
            raw: bytes | str = string_data[key]
        elif key in data:
            try:
                raw = base64.b64decode(data[key], validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise InvalidPullSecret(f"pull secret {name}: {key} is not valid base64") from None
        else:
            continue
        try:
            config = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise InvalidPullSecret(f"pull secret {name}: {key} is not valid JSON") from None
        if not isinstance(config, Mapping):
            raise InvalidPullSecret(f"pull secret {name}: {key} is not a JSON object")
        auths = config.get("auths", {}) if wrapped else config
        if not isinstance(auths, Mapping):
            raise InvalidPullSecret(f"pull secret {name}: {key} 'auths' is not a JSON object")
        return auths
    raise InvalidPullSecret(
        f"pull secret {name} has no {DOCKERCONFIGJSON} key; create it with `kubectl create secret docker-registry`"
    )


def _entry_credentials(name: str, key: str, entry: Any) -> RegistryCredentials:
    where = f"pull secret {name}, entry {key!r}"
    if not isinstance(entry, Mapping):
        raise InvalidPullSecret(f"{where} is not a JSON object")
    username, password = entry.get("username"), entry.get("password")
    if isinstance(username, str) and isinstance(password, str) and username and password:
        return RegistryCredentials(username=username, password=password)
    auth = entry.get("auth")
    if isinstance(auth, str) and auth:
        try:
            decoded = base64.b64decode(auth, validate=True).decode()
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise InvalidPullSecret(f"{where}: 'auth' is not base64 of 'username:password'") from None
        user, sep, secret = decoded.partition(":")
        if not sep or not user:
            raise InvalidPullSecret(f"{where}: 'auth' is not base64 of 'username:password'")
        return RegistryCredentials(username=user, password=secret)
    token = entry.get("registrytoken")
    if isinstance(token, str) and token:
        return RegistryCredentials(token=token)
    raise InvalidPullSecret(f"{where} has neither username/password, auth nor registrytoken")
