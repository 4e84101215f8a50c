"""SubjectAccessReviews are answered from the stored RBAC objects, as a real API server's RBAC authorizer does.

On both backends: the emulator's imitation (``aim_testing.emulator.access``, which ``aim-engine doctor``'s
tests and the HTTPS metrics tests rely on there) is pinned to what kube-apiserver answers.
"""

from __future__ import annotations

from typing import Any

REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
SA = "system:serviceaccount:aim-system:operator"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:aim-system", "system:authenticated"]


def ask(
    verb: str,
    resource: str,
    *,
    group: str = "",
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
    user: str = SA,
    groups: list[str] = SA_GROUPS,
) -> dict[str, Any]:
    attributes = {"verb": verb, "group": group, "resource": resource}
    attributes.update({k: v for k, v in (("namespace", namespace), ("name", name), ("subresource", subresource)) if v})
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": groups, "resourceAttributes": attributes},
    }


async def allowed(api, body) -> tuple[bool, str]:
    response = await api.post(REVIEWS, json=body)
    assert response.status_code == 201, response.text
    status = response.json()["status"]
    return status["allowed"], status.get("reason", "")


def seed(kube) -> None:
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [
                {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]},
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "resourceNames": ["mine"],
                    "verbs": ["update"],
                },
            ],
        }
    )
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "operator-reads"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "aim-system"}],
        }
    )
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "cm-writer", "namespace": "team"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}],
        }
    )
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "all-sa-write-cm", "namespace": "team"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
            "subjects": [{"kind": "Group", "name": "system:serviceaccounts"}],
        }
    )


async def test_a_cluster_role_binding_allows_and_names_itself(kube, api):
    seed(kube)
    ok, reason = await allowed(api, ask("get", "pods", namespace="anywhere"))
    assert ok
    assert reason == (
        'RBAC: allowed by ClusterRoleBinding "operator-reads" of ClusterRole "reader" '
        'to ServiceAccount "operator/aim-system"'
    )
    assert (await allowed(api, ask("get", "pods", subresource="log", namespace="x")))[0]
    assert (await allowed(api, ask("deletecollection", "jobs", group="batch")))[0]  # verbs: "*"
    assert await allowed(api, ask("delete", "pods")) == (False, "")
    assert (await allowed(api, ask("get", "pods", user="system:serviceaccount:other:operator")))[0] is False


async def test_resource_names_limit_a_rule(kube, api):
    seed(kube)
    assert (await allowed(api, ask("update", "leases", group="coordination.k8s.io", namespace="n", name="mine")))[0]
    assert not (await allowed(api, ask("update", "leases", group="coordination.k8s.io", namespace="n", name="theirs")))[
        0
    ]
    assert not (await allowed(api, ask("update", "leases", group="coordination.k8s.io", namespace="n")))[0]


async def test_a_role_binding_counts_only_in_its_namespace_and_groups_are_taken_as_given(kube, api):
    seed(kube)
    ok, reason = await allowed(api, ask("create", "configmaps", namespace="team"))
    assert ok and reason.startswith('RBAC: allowed by RoleBinding "all-sa-write-cm/team" of Role "cm-writer" to Group')
    assert not (await allowed(api, ask("create", "configmaps", namespace="other")))[0]
    assert not (await allowed(api, ask("create", "configmaps")))[0]  # cluster-wide: a RoleBinding does not reach
    assert not (await allowed(api, ask("create", "configmaps", namespace="team", groups=[])))[0]


async def test_system_masters_may_do_everything(kube, api):
    assert (await allowed(api, ask("delete", "nodes", user="admin", groups=["system:masters"])))[0]


async def test_an_invalid_review_is_refused_and_nothing_is_stored(kube, api):
    body = ask("get", "pods")
    del body["spec"]["resourceAttributes"]
    response = await api.post(REVIEWS, json=body)
    assert response.status_code == 422
    assert "exactly one of nonResourceAttributes or resourceAttributes" in response.json()["message"]
    body = ask("get", "pods", user="", groups=[])
    assert (await api.post(REVIEWS, json=body)).status_code == 422
    listed = await api.get(REVIEWS)  # reviews are answered, never stored or listed
    assert listed.status_code == 405 and listed.json()["reason"] == "MethodNotAllowed"
