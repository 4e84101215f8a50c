"""What doctor checks the operator's ServiceAccount for is exactly what deploy/ (and the chart) grant."""

from __future__ import annotations

from pathlib import Path

import yaml

from aim_core.doctor import rbac

ROOT = Path(__file__).resolve().parents[2]


def rules_of(path: Path) -> list:
    return next(d for d in yaml.safe_load_all(path.read_text()) if d)["rules"]


def test_the_packaged_roles_are_the_ones_deploy_ships():
    cluster, leader = rbac.required_rules()
    assert cluster == rules_of(ROOT / "deploy" / "role.yaml"), (
        "doctor checks stale permissions: cp deploy/role.yaml aim_core/doctor/role.yaml"
    )
    assert leader == rules_of(ROOT / "deploy" / "leader_election_role.yaml"), (
        "doctor checks stale permissions: cp deploy/leader_election_role.yaml aim_core/doctor/"
    )


def test_rules_expand_to_single_permissions_and_wildcards_grant_them():
    wanted = rbac.permissions(
        [
            {"apiGroups": ["batch"], "resources": ["jobs", "jobs/status"], "verbs": ["get", "patch"]},
            {"apiGroups": [""], "resources": ["leases"], "resourceNames": ["a"], "verbs": ["get"]},
        ],
        namespace="ns",
    )
    assert [str(p) for p in wanted] == [
        "get leases/a in ns",
        "get jobs.batch in ns",
        "patch jobs.batch in ns",
        "get jobs/status.batch in ns",
        "patch jobs/status.batch in ns",
    ]
    live = [
        {"apiGroups": ["batch"], "resources": ["*"], "verbs": ["get"]},
        {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["*"]},
    ]
    assert [str(p) for p in rbac.compare_rules(live, wanted)] == ["get leases/a in ns", "patch jobs.batch in ns"]
    named = [{"apiGroups": [""], "resources": ["leases"], "resourceNames": ["b"], "verbs": ["get"]}]
    assert rbac.compare_rules(named, wanted[:1]) == wanted[:1]


def test_a_review_asks_for_the_service_account_with_its_groups():
    [permission] = rbac.permissions([{"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}])
    body = rbac.review_body(permission, *rbac.service_account_user("aim-system", "op"))
    assert body["spec"] == {
        "user": "system:serviceaccount:aim-system:op",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:aim-system", "system:authenticated"],
        "resourceAttributes": {"group": "", "resource": "pods", "subresource": "log", "verb": "get"},
    }
