"""Pull secrets of a model source, read from the operator's store (F76).

The controller watches the Secrets model sources name (the store keeps only
those; one the store has not seen yet is read once and kept), so a sync reads
them without a request, and a secret that appears, changes or goes away
re-triggers its sources: the next sync uses it at once instead of waiting for
``syncInterval``. A secret that is missing, unreadable or not a docker config
is reported as a :class:`SecretProblem` and left out; the sync goes on with the
others (public images still list).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aim_core.modelsource.observed import SecretProblem
from aim_core.reconcile.obj import meta_of
from aim_core.registry import InvalidPullSecret, credentials_for

__all__ = [
    "SECRET_ACCESS_FAILED",
    "SECRET_NOT_FOUND",
    "INVALID_PULL_SECRET",
    "SecretLookup",
    "check_pull_secrets",
    "fingerprint",
]

SECRET_NOT_FOUND = "SecretNotFound"
SECRET_ACCESS_FAILED = "SecretAccessFailed"
INVALID_PULL_SECRET = "InvalidPullSecret"
_PROBE_HOST = "probe.invalid"  # a host no secret has: parsing a secret checks its whole docker config


#: A secret by name in the operator namespace: the object, ``None`` when missing, or the error reading it.
SecretLookup = Callable[[str], "Mapping[str, Any] | Exception | None"]


def check_pull_secrets(
    lookup: SecretLookup, namespace: str, names: Sequence[str]
) -> tuple[list[Mapping[str, Any]], list[SecretProblem]]:
    """The usable secrets among ``names`` (``lookup`` finds one in ``namespace``), and what is wrong with the others."""
    usable: list[Mapping[str, Any]] = []
    problems: list[SecretProblem] = []
    for name in names:
        secret = lookup(name)
        if isinstance(secret, Exception):
            problems.append(
                SecretProblem(
                    name,
                    SECRET_ACCESS_FAILED,
                    f"pull secret {namespace}/{name} cannot be read: {getattr(secret, 'reason', '') or secret}",
                )
            )
            continue
        if secret is None:
            problems.append(
                SecretProblem(
                    name,
                    SECRET_NOT_FOUND,
                    f"pull secret {name} not found in the operator namespace {namespace}; model sources read their "
                    f"secrets there, create it with kubectl create secret docker-registry {name} -n {namespace} ...",
                )
            )
            continue
        try:
            credentials_for(_PROBE_HOST, [secret])
        except InvalidPullSecret as exc:
            problems.append(SecretProblem(name, INVALID_PULL_SECRET, str(exc)))
            continue
        usable.append(secret)
    return usable, problems


def fingerprint(lookup: SecretLookup, names: Sequence[str]) -> tuple[Any, ...]:
    """What a sync's credentials depend on: each named secret's resourceVersion (``None`` when missing)."""
    versions: list[tuple[str, str | None]] = []
    for name in names:
        secret = lookup(name)
        if isinstance(secret, Exception):
            versions.append((name, "unreadable"))
        else:
            versions.append((name, None if secret is None else meta_of(secret).get("resourceVersion", "")))
    return tuple(versions)
