"""The operator's RBAC: does its ServiceAccount hold what deploy/ grants?

What is required is what the project ships: ``role.yaml`` and
``leader_election_role.yaml`` here are copies of the files in ``deploy/``
(which the chart reads too; ``tests/doctor/test_rbac.py`` keeps them equal),
packaged so an installed ``aim-engine`` knows them.

Two ways to look, best first:

1. a SubjectAccessReview per permission, asked for the ServiceAccount with
   the groups the API server gives service accounts: the answer includes every
   binding, aggregated role and authorizer in the cluster;
2. when the caller may not create SubjectAccessReviews, the ClusterRole and
   Role of that name in the cluster compared rule by rule with the shipped ones
   (bindings unchecked, which the finding says).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

import attrs
import yaml

from aim_core.plugin.providers import Finding, ResourceRef

__all__ = [
    "CLUSTER_ROLES",
    "ROLES",
    "SUBJECT_ACCESS_REVIEWS",
    "Permission",
    "compare_rules",
    "permissions",
    "required_rules",
    "review_body",
]

SUBJECT_ACCESS_REVIEWS = ResourceRef("authorization.k8s.io/v1", "SubjectAccessReview", "subjectaccessreviews", False)
CLUSTER_ROLES = ResourceRef("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False)
ROLES = ResourceRef("rbac.authorization.k8s.io/v1", "Role", "roles", True)

APPLY_RBAC = "kubectl apply -k deploy/   # or: helm upgrade --install aim-engine charts/aim-engine -n <namespace>"


@attrs.frozen(order=True)
class Permission:
    """One verb on one resource (``pods/log``), maybe one name, cluster-wide or in a namespace."""

    group: str
    resource: str
    verb: str
    name: str | None = None
    namespace: str | None = None

    def __str__(self) -> str:
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        where = f" in {self.namespace}" if self.namespace else ""
        return f"{self.verb} {what}{'/' + self.name if self.name else ''}{where}"


def required_rules() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rules of the shipped ClusterRole, rules of the shipped leader-election Role)."""
    files = resources.files("aim_core.doctor")
    cluster = yaml.safe_load(files.joinpath("role.yaml").read_text())
    leader = yaml.safe_load(files.joinpath("leader_election_role.yaml").read_text())
    return list(cluster.get("rules") or []), list(leader.get("rules") or [])


def permissions(rules: Iterable[Mapping[str, Any]], namespace: str | None = None) -> list[Permission]:
    """Every single permission a list of rules grants, sorted."""
    out = set()
    for rule in rules:
        for group in rule.get("apiGroups") or [""]:
            for resource in rule.get("resources") or ():
                for verb in rule.get("verbs") or ():
                    for name in rule.get("resourceNames") or [None]:
                        out.add(Permission(group, resource, verb, name, namespace))
    return sorted(out, key=lambda p: (p.namespace or "", p.group, p.resource, p.verb, p.name or ""))


def review_body(permission: Permission, user: str, groups: Sequence[str]) -> dict[str, Any]:
    """The SubjectAccessReview that asks whether ``user`` holds ``permission``."""
    resource, _, subresource = permission.resource.partition("/")
    attributes = {"group": permission.group, "resource": resource, "verb": permission.verb}
    if subresource:
        attributes["subresource"] = subresource
    if permission.name:
        attributes["name"] = permission.name
    if permission.namespace:
        attributes["namespace"] = permission.namespace
    return {
        "apiVersion": SUBJECT_ACCESS_REVIEWS.api_version,
        "kind": SUBJECT_ACCESS_REVIEWS.kind,
        "metadata": {},
        "spec": {"user": user, "groups": list(groups), "resourceAttributes": attributes},
    }


def service_account_user(namespace: str, name: str) -> tuple[str, list[str]]:
    """The user name and groups the API server gives a ServiceAccount's tokens."""
    return (
        f"system:serviceaccount:{namespace}:{name}",
        ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    )


async def review(
    cluster: Any,
    wanted: Sequence[Permission],
    namespace: str,
    account: str,
    progress: Callable[[int, int], None] | None = None,
) -> list[Permission]:
    """The permissions in ``wanted`` that SubjectAccessReviews deny the ServiceAccount.

    Raises the API error of the first review when the caller may not create them.

    :param progress: called with (answered, total) after each answer.
    """
    user, groups = service_account_user(namespace, account)
    limit = asyncio.Semaphore(8)
    answered = 0

    async def ask(permission: Permission) -> bool:
        nonlocal answered
        async with limit:
            answer = await cluster.create(SUBJECT_ACCESS_REVIEWS, review_body(permission, user, groups))
        answered += 1
        if progress is not None:
            progress(answered, len(wanted))
        return bool((answer.get("status") or {}).get("allowed"))

    first = await ask(wanted[0]) if wanted else True
    rest = await asyncio.gather(*(ask(p) for p in wanted[1:]))
    return [p for p, allowed in zip(wanted, [first, *rest], strict=True) if not allowed]


def compare_rules(live: Iterable[Mapping[str, Any]], wanted: Sequence[Permission]) -> list[Permission]:
    """The permissions in ``wanted`` that the rules ``live`` (of the same namespace) do not grant."""
    rules = list(live)
    return [p for p in wanted if not any(_grants(rule, p) for rule in rules)]


def _grants(rule: Mapping[str, Any], p: Permission) -> bool:
    def has(values: Any, wanted: str) -> bool:
        return wanted in (values or ()) or "*" in (values or ())

    resource = p.resource
    resources_ = rule.get("resources") or ()
    resource_ok = has(resources_, resource) or ("/" in resource and f"*/{resource.split('/', 1)[1]}" in resources_)
    names = rule.get("resourceNames") or ()
    return (
        has(rule.get("apiGroups"), p.group)
        and resource_ok
        and has(rule.get("verbs"), p.verb)
        and (not names or (p.name is not None and p.name in names))
    )


def denied_findings(denied: Sequence[Permission], how: str, account: str, total: int) -> list[Finding]:
    """One finding: all held, or what is missing (verbs grouped per resource)."""
    if not denied:
        return [Finding.ok(f"ServiceAccount {account} holds all {total} permissions the operator needs ({how})")]
    grouped: dict[str, list[str]] = {}
    for p in denied:
        what = f"{p.resource}.{p.group}" if p.group else p.resource
        where = (f"/{p.name}" if p.name else "") + (f" in {p.namespace}" if p.namespace else "")
        grouped.setdefault(what + where, []).append(p.verb)
    parts = [f"{' '.join(verbs)} {what}" for what, verbs in grouped.items()]
    shown = "; ".join(parts[:15]) + (f"; and {len(parts) - 15} more resources" if len(parts) > 15 else "")
    return [
        Finding.fail(
            f"ServiceAccount {account} lacks {len(denied)} of {total} permissions ({how}): {shown}", APPLY_RBAC
        )
    ]
