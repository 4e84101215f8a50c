"""Pieces of a serving object that every runtime builder makes the same way.

Plugins import these from :mod:`aim_core`. They work on Kubernetes objects as JSON-like
dicts, as the builders do, and know no builder's object shape: a builder passes in the part
of its live object that is a pod spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def plain_copy(value: Any) -> Any:
    """A deep copy made of plain dicts and lists, so a built object shares nothing with the request."""
    if isinstance(value, Mapping):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_copy(v) for v in value]
    return value


def carry_over_storage(
    live_pod: Mapping[str, Any],
    live_container: Mapping[str, Any] | None,
    mounts: list[dict[str, Any]],
    volumes: list[dict[str, Any]],
    owned_prefixes: tuple[str, ...] = (),
) -> None:
    """Add to ``volumes`` and ``mounts`` those of the live pod spec and container that they lack, by name.

    Cache volumes are resolved only when the object is created; later builds may not know
    them, and server-side apply would otherwise remove them. A carried mount whose path is
    already taken is skipped, since the API server rejects two mounts at one path. Names
    starting with one of ``owned_prefixes`` are never carried: the request alone decides those.
    """
    have_volumes = {v.get("name") for v in volumes}
    for volume in live_pod.get("volumes") or ():
        if owned_prefixes and str(volume.get("name") or "").startswith(owned_prefixes):
            continue
        if volume.get("name") not in have_volumes:
            volumes.append(plain_copy(volume))
            have_volumes.add(volume.get("name"))
    have_names = {m.get("name") for m in mounts}
    have_paths = {m.get("mountPath") for m in mounts}
    for mount in (live_container or {}).get("volumeMounts") or ():
        if owned_prefixes and str(mount.get("name") or "").startswith(owned_prefixes):
            continue
        if mount.get("name") in have_names or mount.get("mountPath") in have_paths:
            continue
        mounts.append(plain_copy(mount))
        have_names.add(mount.get("name"))
        have_paths.add(mount.get("mountPath"))


__all__ = ["carry_over_storage", "plain_copy"]
