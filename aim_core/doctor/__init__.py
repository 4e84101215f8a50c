"""``aim-engine doctor``: is the cluster ready for AIM services, and what to fix if not.

:func:`diagnose` runs every check against a cluster reader and returns
:class:`Section` values; the CLI prints them. The checks:

* this project's CRDs, installed and equal to the ones this version generates
  (:mod:`aim_core.doctor.crds`);
* what each installed plugin needs (the ``aim_doctor_checks`` hook: KServe,
  Gateway API, KEDA CRDs and settings), so a disabled plugin is not checked
  and a third-party plugin brings its own checks;
* GPU nodes as the installed GPU vendors see them (:mod:`aim_core.doctor.gpus`);
* the operator ServiceAccount's permissions (:mod:`aim_core.doctor.rbac`).

A check that cannot read what it needs (403, no answer) becomes a finding of
its own instead of stopping the others.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from aim_core.doctor import rbac
from aim_core.doctor.crds import CRDS, check_crd, crd_findings, project_crd_findings
from aim_core.doctor.gpus import gpu_findings
from aim_core.plugin.providers import FAIL, OK, WARN, Finding
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import NODES

__all__ = ["Section", "check_crd", "crd_findings", "diagnose", "exit_code"]


@attrs.frozen
class Section:
    """The findings of one check, under a title."""

    title: str
    findings: tuple[Finding, ...]

    @property
    def level(self) -> str:
        levels = {f.level for f in self.findings}
        return FAIL if FAIL in levels else WARN if WARN in levels else OK


def exit_code(sections: Sequence[Section], *, strict: bool = False) -> int:
    """0 when all is well; 1 when a check failed (or warned, with ``strict``)."""
    bad = {FAIL, WARN} if strict else {FAIL}
    return 1 if any(s.level in bad for s in sections) else 0


async def diagnose(
    cluster: Any,
    plugins: Any,
    *,
    operator_namespace: str,
    service_account: str,
    cluster_role: str = "aim-engine-manager-role",
    leader_role: str = "aim-engine-leader-election-role",
    on_step: Callable[[str], None] | None = None,
) -> list[Section]:
    """Run every check against ``cluster`` (a :class:`~aim_core.plugin.providers.ClusterReader` that can also ``create``).

    :param on_step: called with each check's title before it runs (progress).
    """
    from aim_core.api.crds import generate_crds
    from aim_core.plugin.manager import providers

    steps: list[tuple[str, Callable[[], Awaitable[Sequence[Finding]]]]] = []

    async def project_crds() -> list[Finding]:
        wanted = generate_crds()
        live = {crd["metadata"]["name"]: await cluster.get(CRDS, None, crd["metadata"]["name"]) for crd in wanted}
        return project_crd_findings(live, wanted)

    steps.append(("aim.eai.amd.com CRDs", project_crds))
    for check in sorted(providers(plugins, "aim_doctor_checks").values(), key=lambda c: c.name):
        steps.append((check.title, lambda check=check: check.run(cluster)))

    async def gpus() -> list[Finding]:
        vendors = list(providers(plugins, "aim_gpu_vendors").values())
        return gpu_findings(await cluster.list(NODES), vendors)

    steps.append(("GPU nodes", gpus))

    rbac_title = f"Operator RBAC ({operator_namespace}/{service_account})"

    async def permissions() -> list[Finding]:
        report = None if on_step is None else (lambda done, total: on_step(f"{rbac_title}: {done}/{total} asked"))
        return await rbac_findings(cluster, operator_namespace, service_account, cluster_role, leader_role, report)

    steps.append((rbac_title, permissions))

    sections = []
    for title, run in steps:
        if on_step is not None:
            on_step(title)
        try:
            findings = list(await run())
        except ApiError as exc:
            findings = [_unreadable(exc)]
        sections.append(Section(title, tuple(findings)))
    return sections


async def rbac_findings(
    cluster: Any,
    namespace: str,
    account: str,
    cluster_role: str,
    leader_role: str,
    report: Callable[[int, int], None] | None = None,
) -> list[Finding]:
    """Ask SubjectAccessReviews; when that is not allowed, compare the roles in the cluster.

    :param report: called with (reviews answered, reviews to ask) as answers come (progress).
    """
    cluster_rules, leader_rules = rbac.required_rules()
    wanted = rbac.permissions(cluster_rules) + rbac.permissions(leader_rules, namespace)
    who = f"{namespace}/{account}"
    try:
        denied = await rbac.review(cluster, wanted, namespace, account, progress=report)
    except ApiError as exc:
        if exc.status not in (401, 403, 404):
            raise
    else:
        return rbac.denied_findings(denied, "SubjectAccessReview", who, len(wanted))
    live_cluster = await cluster.get(rbac.CLUSTER_ROLES, None, cluster_role)
    live_leader = await cluster.get(rbac.ROLES, namespace, leader_role)
    if live_cluster is None or live_leader is None:
        missing = [
            n
            for n, o in (
                (f"ClusterRole {cluster_role}", live_cluster),
                (f"Role {namespace}/{leader_role}", live_leader),
            )
            if o is None
        ]
        return [
            Finding.fail(
                f"{' and '.join(missing)} not found (and SubjectAccessReviews are not allowed "
                "to this user, so the ServiceAccount's permissions cannot be asked directly)",
                rbac.APPLY_RBAC,
            )
        ]
    denied = rbac.compare_rules(live_cluster.get("rules") or (), rbac.permissions(cluster_rules)) + rbac.compare_rules(
        live_leader.get("rules") or (), rbac.permissions(leader_rules, namespace)
    )
    return rbac.denied_findings(
        denied, f"rules of ClusterRole {cluster_role} and Role {leader_role}; bindings not checked", who, len(wanted)
    )


def _unreadable(exc: ApiError) -> Finding:
    if exc.status in (401, 403):
        return Finding.warn(
            f"not allowed to read what this check needs: {exc}",
            "run aim-engine doctor as a user who may read cluster-wide (e.g. cluster-admin)",
        )
    return Finding.fail(f"the API server refused a request: {exc}")
