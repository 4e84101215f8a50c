"""``aim-engine inspect IMAGE``: an image's metadata as the model controller reads it.

The same path as the controller: :func:`aim_core.registry.fetch_image_info`
through the registry hook, then the label parsing that fills
``status.imageMetadata``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import attrs

from aim_core.model.metadata import InvalidMetadata, ParsedMetadata, parse_labels
from aim_core.registry.credentials import credentials_for
from aim_core.registry.errors import ImageInfo
from aim_core.registry.facade import client_for, close_clients, fetch_image_info
from aim_core.registry.reference import ImageReference

__all__ = ["Inspection", "format_inspection", "inspect_image"]


@attrs.frozen
class Inspection:
    image: ImageReference
    client: str  #: name of the registry client that answered
    info: ImageInfo
    parsed: ParsedMetadata | None
    label_error: str | None = None
    requests: int | None = None  #: HTTP requests the client sent, when it counts them


def docker_config_secret(path: str) -> dict[str, Any]:
    """A docker config file (``~/.docker/config.json``) shaped like a pull Secret."""
    raw = Path(path).read_bytes()
    return {"metadata": {"name": path}, "data": {".dockerconfigjson": base64.b64encode(raw).decode()}}


async def inspect_image(plugins: Any, text: str, *, docker_config: str | None = None) -> Inspection:
    """Read ``text``'s metadata; raises InvalidImageReference, InvalidPullSecret, OSError or RegistryError."""
    image = ImageReference.parse(text)
    secrets = [docker_config_secret(docker_config)] if docker_config else []
    credentials = credentials_for(image.registry, secrets)
    try:
        client = client_for(plugins, image.registry)
        info = await fetch_image_info(plugins, image, credentials)
        requests = getattr(client, "requests", None)
    finally:
        await close_clients(plugins)
    try:
        parsed, problem = parse_labels(info.labels), None
    except InvalidMetadata as exc:
        parsed, problem = None, str(exc)
    return Inspection(
        image, getattr(client, "name", "?"), info, parsed, problem, requests if isinstance(requests, int) else None
    )


def as_dict(result: Inspection) -> dict[str, Any]:
    info = result.info
    out: dict[str, Any] = {
        "image": str(result.image),
        "registry": result.image.registry,
        "client": result.client,
        "digest": info.digest,
        "indexDigest": info.index_digest,
        "platform": f"{info.os}/{info.architecture}" if info.os and info.architecture else None,
        "created": info.created,
        "imageMetadata": result.parsed.metadata if result.parsed else {"originalLabels": dict(info.labels)},
        "problems": list(result.parsed.problems) if result.parsed else [result.label_error],
    }
    if result.requests is not None:
        out["registryRequests"] = result.requests
    return out


def format_inspection(result: Inspection, *, as_json: bool = False) -> str:
    if as_json:
        return json.dumps(as_dict(result), indent=2) + "\n"
    info = result.info
    lines = [
        f"image:     {result.image}",
        f"registry:  {result.image.registry} (client {result.client})",
        f"digest:    {info.digest}",
    ]
    if info.index_digest:
        lines.append(f"index:     {info.index_digest} (linux/amd64 chosen)")
    if info.os or info.architecture:
        lines.append(f"platform:  {info.os}/{info.architecture}")
    if info.created:
        lines.append(f"created:   {info.created}")
    model = (result.parsed.metadata.get("model") or {}) if result.parsed else {}
    if model.get("canonicalName"):
        lines.append(f"model:     {model['canonicalName']}")
    deployments = model.get("recommendedDeployments") or []
    lines.append(f"recommended deployments: {len(deployments) or 'none'}")
    for entry in deployments:
        lines.append("  - " + " ".join(f"{k}={v}" for k, v in entry.items()))
    for problem in result.parsed.problems if result.parsed else [result.label_error]:
        lines.append(f"problem:   {problem}")
    lines.append(f"labels:    {len(info.labels) or 'none'}")
    for key, value in sorted(info.labels.items()):
        lines.append(f"  {key}={value}")
    if result.requests is not None:
        lines.append(f"registry requests: {result.requests}")
    return "\n".join(lines) + "\n"
