"""SubjectAccessReview: the RBAC authorizer's answer over the Roles and bindings stored.

``POST /apis/authorization.k8s.io/v1/subjectaccessreviews`` is answered as a
real API server with only the RBAC authorizer answers: the review comes back
(201, not stored) with ``status.allowed`` and, when allowed, the binding that
allowed it as ``status.reason``. The user and groups are taken as given (a
real server does not add a ServiceAccount's groups to a review either).
Members of ``system:masters`` may do everything, as on a real server.

Non-resource URLs (``nonResourceAttributes``) are allowed by ClusterRole rules
with ``nonResourceURLs`` (an exact path, or a prefix ending in ``*``), bound by
ClusterRoleBindings, as on a real server.

``POST /apis/authentication.k8s.io/v1/tokenreviews`` answers who a bearer token
belongs to: the emulator's ``users`` (token -> ``{"username", "groups", "uid"}``);
any other token is not authenticated.

Deliberate differences: ClusterRoles with an ``aggregationRule`` are read as
stored (no aggregation controller fills their rules).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import kmock

from aim_testing.emulator.errors import api_error

__all__ = ["ACCESS_REVIEWS", "TOKEN_REVIEWS", "review", "token_review"]

ACCESS_REVIEWS = kmock.resource("authorization.k8s.io/v1/subjectaccessreviews")
TOKEN_REVIEWS = kmock.resource("authentication.k8s.io/v1/tokenreviews")
_CLUSTER_ROLES = kmock.resource("rbac.authorization.k8s.io/v1/clusterroles")
_CLUSTER_ROLE_BINDINGS = kmock.resource("rbac.authorization.k8s.io/v1/clusterrolebindings")
_ROLES = kmock.resource("rbac.authorization.k8s.io/v1/roles")
_ROLE_BINDINGS = kmock.resource("rbac.authorization.k8s.io/v1/rolebindings")


def review(storage: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """The answered review; 422 for a review a real server refuses as invalid."""
    spec = body.get("spec") or {}
    user, groups = spec.get("user") or "", list(spec.get("groups") or ())
    attributes, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (attributes is None) == (non_resource is None):
        raise api_error(
            422,
            "Invalid",
            'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
            'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        )
    if not user and not groups:
        raise api_error(
            422,
            "Invalid",
            'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: '
            'Invalid value: "": at least one of user or group must be specified',
        )
    if attributes is None:
        allowed, reason = _authorize_url(storage, user, groups, non_resource)
    else:
        allowed, reason = _authorize(storage, user, groups, attributes)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "metadata": {"creationTimestamp": None},
        "spec": dict(spec),
        "status": status,
    }


def token_review(users: Mapping[str, Mapping[str, Any]], body: Mapping[str, Any]) -> dict[str, Any]:
    """The answered TokenReview: the user of a known token, else not authenticated."""
    token = ((body.get("spec") or {}).get("token")) or ""
    if not token:
        raise api_error(422, "Invalid", 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value')
    user = users.get(token)
    status: dict[str, Any] = {"authenticated": True, "user": dict(user)} if user else {"authenticated": False}
    return {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "metadata": {"creationTimestamp": None},
        "spec": {"token": token},
        "status": status,
    }


def _authorize_url(storage: Any, user: str, groups: list[str], attributes: Mapping[str, Any]) -> tuple[bool, str]:
    if "system:masters" in groups:
        return True, ""
    path, verb = attributes.get("path") or "", attributes.get("verb") or ""
    for binding in storage._live_objects(_CLUSTER_ROLE_BINDINGS, None):
        if not _binds(binding, user, groups, None):
            continue
        for rule in _role_rules(storage, binding, None):
            verbs, urls = rule.get("verbs") or (), rule.get("nonResourceURLs") or ()
            if ("*" in verbs or verb in verbs) and any(
                u == path or (u.endswith("*") and path.startswith(u[:-1])) for u in urls
            ):
                return True, _why(binding, user, groups, None)
    return False, ""


def _authorize(storage: Any, user: str, groups: list[str], attributes: Mapping[str, Any]) -> tuple[bool, str]:
    if "system:masters" in groups:
        return True, ""
    namespace = attributes.get("namespace") or ""
    for binding in storage._live_objects(_CLUSTER_ROLE_BINDINGS, None):
        if _binds(binding, user, groups, None) and _allows(_role_rules(storage, binding, None), attributes):
            return True, _why(binding, user, groups, None)
    if namespace:
        for binding in storage._live_objects(_ROLE_BINDINGS, namespace):
            if _binds(binding, user, groups, namespace) and _allows(
                _role_rules(storage, binding, namespace), attributes
            ):
                return True, _why(binding, user, groups, namespace)
    return False, ""


def _role_rules(storage: Any, binding: Mapping[str, Any], namespace: str | None) -> list[Mapping[str, Any]]:
    ref = binding.get("roleRef") or {}
    if ref.get("kind") == "ClusterRole":
        role = storage._live((_CLUSTER_ROLES, None, ref.get("name")))
    elif ref.get("kind") == "Role" and namespace:
        role = storage._live((_ROLES, namespace, ref.get("name")))
    else:
        role = None
    return list((role or {}).get("rules") or ())


def _subject(subject: Mapping[str, Any], user: str, groups: list[str], namespace: str | None) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return name == user
    if kind == "Group":
        return name in groups
    if kind == "ServiceAccount":
        return user == f"system:serviceaccount:{subject.get('namespace') or namespace}:{name}"
    return False


def _binds(binding: Mapping[str, Any], user: str, groups: list[str], namespace: str | None) -> bool:
    return any(_subject(s, user, groups, namespace) for s in binding.get("subjects") or ())


def _why(binding: Mapping[str, Any], user: str, groups: list[str], namespace: str | None) -> str:
    ref, meta = binding.get("roleRef") or {}, binding.get("metadata") or {}
    subject = next(s for s in binding.get("subjects") or () if _subject(s, user, groups, namespace))
    who = (
        f'{subject["kind"]} "{subject["name"]}/{subject.get("namespace") or namespace}"'
        if subject.get("kind") == "ServiceAccount"
        else f'{subject["kind"]} "{subject["name"]}"'
    )
    where = f'RoleBinding "{meta.get("name")}/{namespace}"' if namespace else f'ClusterRoleBinding "{meta.get("name")}"'
    return f'RBAC: allowed by {where} of {ref.get("kind")} "{ref.get("name")}" to {who}'


def _allows(rules: Iterable[Mapping[str, Any]], attributes: Mapping[str, Any]) -> bool:
    verb, group = attributes.get("verb") or "", attributes.get("group") or ""
    resource, sub, name = (
        attributes.get("resource") or "",
        attributes.get("subresource") or "",
        attributes.get("name") or "",
    )
    combined = f"{resource}/{sub}" if sub else resource
    for rule in rules:
        verbs, groups_ = rule.get("verbs") or (), rule.get("apiGroups") or ()
        resources, names = rule.get("resources") or (), rule.get("resourceNames") or ()
        if not ("*" in verbs or verb in verbs):
            continue
        if not ("*" in groups_ or group in groups_):
            continue
        if not ("*" in resources or combined in resources or (sub and f"*/{sub}" in resources)):
            continue
        if names and name not in names:
            continue
        return True
    return False
