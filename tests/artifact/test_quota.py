"""Storage quotas and eviction (D32-D34): who fits, who is evicted, in which order."""

from __future__ import annotations

from aim_core.artifact.keys import parse_quota
from aim_core.artifact.plan import plan_artifact
from aim_core.artifact.quota import decide, eviction_order
from tests.artifact.builders import (
    GIB,
    NS,
    candidate,
    cond,
    make_artifact,
    observed,
    quota,
    status_after,
    usage,
    wanted,
)


def test_no_quota_always_fits():
    assert decide(10**15, NS, quota(), usage(10**6, 10**6)).fits


def test_fits_under_both_limits():
    assert decide(10 * GIB, NS, quota(100, 50), usage(80, 40)).fits


def test_over_the_limit_without_candidates_gets_no_pvc_and_says_why():
    art = make_artifact(size="20Gi")  # 22Gi with headroom
    plan = plan_artifact(art, observed(quota=quota(namespace_gib=50), usage=usage(40, 40)))
    assert not wanted(plan, "PersistentVolumeClaim") and not plan.delete
    status = status_after(art, plan)
    pvc = cond(status, "CachePvcReady")
    assert pvc["reason"] == "StorageQuotaExceeded"
    assert "namespace ml-team would hold 62 GiB" in pvc["message"] and "limit of 50 GiB" in pvc["message"]
    assert cond(status, "Ready")["reason"] == "StorageQuotaExceeded"
    assert status["status"] == "Pending"
    assert plan.requeue_after == 60  # a slow look again, not a hot loop


def test_eviction_order_lowest_priority_then_least_recently_used():
    a = candidate("a", 10, priority=5, last_used="2026-01-01T01:00:00Z")
    b = candidate("b", 10, priority=1, last_used="2026-01-01T03:00:00Z")
    c = candidate("c", 10, priority=1, last_used="2026-01-01T02:00:00Z")
    busy = candidate("busy", 10, priority=0, in_use=True)
    pinned = candidate("pinned", 10, priority=None)
    downloading = candidate("downloading", 10, priority=0, ready=False)
    assert [x.name for x in eviction_order([a, b, c, busy, pinned, downloading])] == ["c", "b", "a"]


def test_eviction_frees_just_enough_and_waits_before_creating_the_pvc():
    art = make_artifact(size="10Gi")  # 11Gi
    victims = (
        candidate("old", 8, priority=0, last_used="2026-01-01T00:00:00Z", caches=("tc-old",)),
        candidate("older", 8, priority=0, last_used="2025-12-01T00:00:00Z"),
        candidate("keep", 8, priority=3),
    )
    plan = plan_artifact(art, observed(quota=quota(cluster_gib=40), usage=usage(38, 38, *victims)))
    deleted = [(d.resource.kind, d.namespace, d.name) for d in plan.delete]
    assert deleted == [("AIMArtifact", NS, "older"), ("AIMArtifact", NS, "old"), ("AIMTemplateCache", NS, "tc-old")]
    assert not wanted(plan, "PersistentVolumeClaim")
    status = status_after(art, plan)
    assert cond(status, "CachePvcReady")["reason"] == "EvictingArtifacts"
    assert "older" in cond(status, "CachePvcReady")["message"]
    assert status["status"] == "Pending" and plan.requeue_after == 5


def test_nothing_is_evicted_when_evicting_everything_would_not_be_enough():
    d = decide(30 * GIB, NS, quota(cluster_gib=40), usage(38, 38, candidate("small", 5, priority=0)))
    assert not d.fits and not d.victims and "hold only 5 GiB" in d.message


def test_namespace_limit_evicts_only_in_its_namespace():
    other = candidate("theirs", 20, priority=0, ns="other-team")
    mine = candidate("mine", 20, priority=9)
    d = decide(10 * GIB, NS, quota(namespace_gib=25), usage(40, 20, other, mine))
    assert [v.name for v in d.victims] == ["mine"]


def test_cluster_limit_may_evict_in_other_namespaces():
    other = candidate("theirs", 20, priority=0, ns="other-team")
    d = decide(10 * GIB, NS, quota(cluster_gib=45), usage(40, 0, other))
    assert [(v.namespace, v.name) for v in d.victims] == [("other-team", "theirs")]


def test_both_limits_together():
    ns_victim = candidate("mine", 5, priority=2)
    cluster_victim = candidate("theirs", 10, priority=1, ns="other-team")
    d = decide(10 * GIB, NS, quota(cluster_gib=50, namespace_gib=15), usage(50, 10, ns_victim, cluster_victim))
    assert {v.name for v in d.victims} == {"mine", "theirs"}


def test_existing_pvc_is_not_subject_to_the_quota():
    from tests.artifact.builders import BINDING, names, pvc

    art = make_artifact(size="20Gi")
    plan = plan_artifact(
        art, observed(pvc=pvc(names(art)["pvc"]), role_binding=BINDING, quota=quota(cluster_gib=1), usage=usage(40, 40))
    )
    assert cond(status_after(art, plan), "CachePvcReady")["status"] == "True"


def _crc(name, **quota_fields):
    return {"metadata": {"name": name}, "spec": {"artifactStorageQuota": quota_fields}}


def test_quota_is_the_strictest_of_all_cluster_runtime_configs():
    q = parse_quota(
        [
            _crc("default", clusterLimit="1Ti", defaultNamespaceLimit="100Gi"),
            _crc("team", clusterLimit="500Gi"),
            {"metadata": {"name": "none"}, "spec": {}},
        ]
    )
    assert q.cluster_limit == 500 * GIB and q.namespace_limit == 100 * GIB
    assert "AIMClusterRuntimeConfig team" in q.source and "AIMClusterRuntimeConfig default" in q.source


def test_an_unreadable_quota_blocks_new_volumes_with_a_reason():
    q = parse_quota([_crc("default", clusterLimit="-5Gi")])
    assert q.problems and q.cluster_limit is None
    art = make_artifact(size="1Gi")
    plan = plan_artifact(art, observed(quota=q))
    assert not wanted(plan, "PersistentVolumeClaim")
    status = status_after(art, plan)
    assert cond(status, "CachePvcReady")["reason"] == "InvalidStorageQuota"
    assert "clusterLimit" in cond(status, "CachePvcReady")["message"]
