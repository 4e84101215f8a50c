"""What the server owns on every object, and what a client write may not change.

* the ``status`` subresource: writes to the main resource keep the old status,
  writes to ``/status`` change only the status (creates drop the status, see
  :mod:`~aim_testing.emulator.server`);
* ``uid``, ``creationTimestamp``, ``resourceVersion``, ``generation`` and the other
  system metadata are the server's; a stale ``resourceVersion`` is 409 Conflict;
* a write that changes nothing but the server's bookkeeping is a no-op;
* empty ``labels``, ``annotations``, ``finalizers`` and ``ownerReferences`` are not
  stored (``metadata`` is the typed ObjectMeta, for custom resources too).

Also the names a resource goes by in objects, call logs and error messages.
"""

from __future__ import annotations

import copy
import datetime
import random
from collections.abc import Mapping
from typing import Any

import kmock

from aim_testing.emulator.errors import api_error

# Metadata that the server owns; never part of a field set, never taken from a write.
SYSTEM_META = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
)


# ObjectMeta fields that are omitted when empty, so an empty value never comes back.
OMIT_EMPTY_META = ("labels", "annotations", "finalizers", "ownerReferences", "managedFields", "generateName")


def drop_empty_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    """Remove empty (or null) omit-empty metadata fields in place, as the typed ObjectMeta does."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for field in OMIT_EMPTY_META:
            if field in meta and not meta[field]:
                del meta[field]
    return obj


def keep_system_fields(
    old: dict[str, Any], new: dict[str, Any], subresource: str | None, status_apart: bool
) -> dict[str, Any]:
    """What a client cannot change: server metadata, and the status or all but the status."""
    if status_apart and subresource == "status":
        result = copy.deepcopy(old)
        result.pop("status", None)
        if new.get("status") is not None:
            result["status"] = new["status"]
        return result
    new.update(apiVersion=old.get("apiVersion"), kind=old.get("kind"))
    meta = new["metadata"] = dict(new.get("metadata") or {})
    for field in SYSTEM_META:
        if field in old["metadata"]:
            meta[field] = old["metadata"][field]
        else:
            meta.pop(field, None)
    if status_apart:
        new.pop("status", None)
        if "status" in old:
            new["status"] = old["status"]
    return new


def spec(obj: Mapping[str, Any], status_apart: bool) -> dict[str, Any]:
    """The part of an object whose changes bump ``generation``."""
    return {
        k: v
        for k, v in obj.items()
        if k not in ("metadata", "apiVersion", "kind") and not (status_apart and k == "status")
    }


def comparable(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object without what changes on every write (to detect no-op writes)."""
    meta = dict(obj.get("metadata") or {})
    meta.pop("resourceVersion", None)
    meta["managedFields"] = [{k: v for k, v in e.items() if k != "time"} for e in meta.get("managedFields") or []]
    return dict(obj, metadata=meta)


def check_version(res: kmock.resource, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """409 Conflict if the write names a ``resourceVersion`` other than the live one."""
    wanted = (new.get("metadata") or {}).get("resourceVersion") if isinstance(new, Mapping) else None
    if wanted is not None and wanted != old["metadata"]["resourceVersion"]:
        raise api_error(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {what(res)} "{old["metadata"]["name"]}": '
            "the object has been modified; please apply your changes to the latest version and try again",
            name=old["metadata"]["name"],
            group=res.group,
            kind=res.plural,
        )


def now() -> str:
    """A timestamp as the API server writes them."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def suffix() -> str:
    """The random part of a name made from ``generateName``."""
    return "".join(random.choices("bcdfghjklmnpqrstvwxz2456789", k=5))


def api_version(res: kmock.resource) -> str:
    """``group/version``, or just ``version`` for the core group."""
    return f"{res.group}/{res.version}" if res.group else str(res.version)


def res_key(res: kmock.resource) -> str:
    """The resource key used in declarations and the call log: ``apps/v1/deployments``."""
    return f"{api_version(res)}/{res.plural}"


def what(res: kmock.resource) -> str:
    """The resource as error messages name it: ``deployments.apps``, ``pods``."""
    return f"{res.plural}.{res.group}" if res.group else str(res.plural)
