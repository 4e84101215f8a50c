"""Pull secrets of a model source, read from the operator namespace when a sync starts.

Secrets are read with one GET each only when a sync runs (not watched: a
cluster's Secrets are many and mostly not ours). A secret that is missing,
unreadable or not a docker config is reported as a :class:`SecretProblem`
and left out; the sync goes on with the others (public images still list).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aim_core.modelsource.observed import SecretProblem
from aim_core.registry import InvalidPullSecret, credentials_for
from aim_core.reconcile.errors import ApiError
from aim_core.resources import SECRETS

__all__ = ["SECRET_ACCESS_FAILED", "SECRET_NOT_FOUND", "INVALID_PULL_SECRET", "read_pull_secrets", "secret_names"]

SECRET_NOT_FOUND = "SecretNotFound"
SECRET_ACCESS_FAILED = "SecretAccessFailed"
INVALID_PULL_SECRET = "InvalidPullSecret"
_PROBE_HOST = "probe.invalid"  # a host no secret has: parsing a secret checks its whole docker config


def secret_names(spec: Mapping[str, Any]) -> list[str]:
    """Names in ``spec.imagePullSecrets``, in order, without blanks or repeats."""
    names = [s.get("name") for s in spec.get("imagePullSecrets") or [] if isinstance(s, Mapping)]
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))


async def read_pull_secrets(
    kube: Any, namespace: str, names: Sequence[str]
) -> tuple[list[dict[str, Any]], list[SecretProblem]]:
    """The usable secrets among ``names`` in ``namespace``, and what is wrong with the others."""
    usable: list[dict[str, Any]] = []
    problems: list[SecretProblem] = []
    for name in names:
        try:
            secret = await kube.get(SECRETS, namespace, name)
        except ApiError as exc:
            problems.append(SecretProblem(name, SECRET_ACCESS_FAILED,
                                          f"pull secret {namespace}/{name} cannot be read: {exc.reason or exc}"))
            continue
        except Exception as exc:  # noqa: BLE001 - the API server is unreachable: say so, sync anonymously
            problems.append(SecretProblem(name, SECRET_ACCESS_FAILED,
                                          f"pull secret {namespace}/{name} cannot be read: {exc}"))
            continue
        if secret is None:
            problems.append(SecretProblem(
                name, SECRET_NOT_FOUND,
                f"pull secret {name} not found in the operator namespace {namespace}; model sources read their "
                f"secrets there, create it with kubectl create secret docker-registry {name} -n {namespace} ...",
            ))
            continue
        try:
            credentials_for(_PROBE_HOST, [secret])
        except InvalidPullSecret as exc:
            problems.append(SecretProblem(name, INVALID_PULL_SECRET, str(exc)))
            continue
        usable.append(secret)
    return usable, problems
