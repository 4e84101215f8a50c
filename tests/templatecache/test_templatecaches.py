"""AIMTemplateCache controller: template lookup, artifact matching and creation, status, finalizer (F66-F69)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from aim_core.reconcile import naming
from aim_core.reconcile import status as statusing
from aim_core.reconcile.health import Category, State
from aim_core.reconcile.resources import (
    ARTIFACTS,
    CLUSTER_RUNTIME_CONFIGS,
    CLUSTER_TEMPLATES,
    NAMESPACES,
    RUNTIME_CONFIGS,
    TEMPLATE_CACHES,
    TEMPLATES,
)
from aim_core.runtime.controller import Context
from aim_core.runtime.store import Store
from aim_core.runtimeconfig.resolution import resolve
from aim_core.templatecache.controller import TemplateCacheController
from aim_core.templatecache.plan import Observed, cleanup_targets, find_template

NS = "ml-team"
NOW = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)
TINY = {"modelId": "sshleifer/tiny-gpt2", "sourceUri": "hf://sshleifer/tiny-gpt2"}
QWEN = {
    "modelId": "Qwen/Qwen3-32B",
    "sourceUri": "hf://Qwen/Qwen3-32B",
    "size": "64Gi",
    "env": [{"name": "HF_TOKEN", "value": "source"}],
}

# ---------------------------------------------------------------- builders


class Cache(dict):
    def mode(self, mode: str) -> Cache:
        self["spec"]["mode"] = mode
        return self

    def with_spec(self, **fields: Any) -> Cache:
        self["spec"].update(fields)
        return self

    def with_artifacts(self, names: list[str]) -> Cache:
        self.setdefault("status", {})["artifacts"] = {
            n: {"name": n, "uid": "x", "model": "m", "status": "Ready"} for n in names
        }
        return self


def make_cache(name: str = "tc", template: str = "tmpl", scope: str = "Namespace") -> Cache:
    return Cache(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}", "generation": 1},
            "spec": {"templateName": template, "templateScope": scope},
        }
    )


def make_template(
    name: str = "tmpl",
    sources: list[dict] | None = None,
    ready: str | None = "True",
    status: str | None = "Ready",
    reason: str = "AllComponentsReady",
    message: str = "",
    cluster: bool = False,
) -> dict[str, Any]:
    st: dict[str, Any] = {}
    if status:
        st["status"] = status
    if sources is not None:
        st["modelSources"] = sources
    if ready is not None:
        st["conditions"] = [{"type": "Ready", "status": ready, "reason": reason, "message": message}]
    meta = {"name": name} if cluster else {"name": name, "namespace": NS}
    kind = "AIMClusterServiceTemplate" if cluster else "AIMServiceTemplate"
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": kind,
        "metadata": meta,
        "spec": {"modelName": "m"},
        "status": st,
    }


def make_artifact(
    name: str,
    source: dict = TINY,
    status: str | None = "Ready",
    owner_uid: str | None = None,
    storage_class: str | None = None,
    reason: str = "",
    message: str = "",
    cache_label: str | None = None,
) -> dict[str, Any]:
    art: dict[str, Any] = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMArtifact",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"sourceUri": source["sourceUri"], "modelId": source["modelId"]},
    }
    if storage_class:
        art["spec"]["storageClassName"] = storage_class
    if status:
        art["status"] = {"status": status, "persistentVolumeClaim": f"{name}-cache-1234"}
        if reason:
            art["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": reason, "message": message}]
    if owner_uid:
        art["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMTemplateCache",
                "name": "tc",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    if cache_label:
        art["metadata"]["labels"] = {"aim.eai.amd.com/template-cache.name": cache_label}
    return art


def observed(template=None, artifacts=(), config=None, scope="Namespace") -> Observed:
    return Observed(
        template, scope if template is not None else "", config or resolve("default", None, None), tuple(artifacts)
    )


def run(cache, obs):
    plan = TemplateCacheController().plan(cache, obs)
    derived = statusing.derive(plan.components, plan.issues, now=NOW)
    conditions = {c.type: c for c in derived.conditions}
    return plan, derived, conditions


def shared_name(source: dict, env=None, storage_class: str = "") -> str:
    return naming.artifact_name(source["sourceUri"], env, storage_class)


# ---------------------------------------------------------------- template lookup (F66)


NAMESPACED, CLUSTER = make_template(), make_template(cluster=True)


@pytest.mark.parametrize(
    "scope,namespaced,cluster,expected",
    [
        ("Namespace", NAMESPACED, CLUSTER, "Namespace"),
        ("Namespace", None, CLUSTER, ""),
        ("Cluster", NAMESPACED, CLUSTER, "Cluster"),
        ("Cluster", NAMESPACED, None, ""),
        ("Unknown", NAMESPACED, CLUSTER, "Namespace"),
        ("Unknown", None, CLUSTER, "Cluster"),
        ("", None, None, ""),
    ],
)
def test_template_scope_rules(scope, namespaced, cluster, expected):
    template, found = find_template({"templateScope": scope}, namespaced, cluster)
    assert found == expected
    assert template is {"Namespace": namespaced, "Cluster": cluster, "": None}[expected]


def test_missing_template_fails_the_cache_with_reference_not_found():
    plan, derived, cond = run(make_cache(template="gone"), observed())
    assert cond["ServiceTemplateReady"].status == "False"
    assert cond["ServiceTemplateReady"].reason == "ReferenceNotFound"
    assert "'gone'" in cond["ServiceTemplateReady"].message
    assert plan.components["ServiceTemplate"].category is Category.MISSING_UPSTREAM
    assert derived.state is State.FAILED and cond["Ready"].reason == "ReferenceNotFound"
    assert cond["ConfigValid"].reason == "ReferenceNotFound"
    assert cond["ArtifactsReady"].reason == "WaitingForTemplate"
    assert plan.apply == [] and "resolvedTemplateKind" not in plan.status


@pytest.mark.parametrize(
    "template,cond_status,cond_reason,root",
    [
        (make_template(sources=[]), "True", "AllComponentsReady", State.READY),
        (
            make_template(sources=[], ready="False", status="NotAvailable", reason="GPUUnavailable"),
            "False",
            "GPUUnavailable",
            State.NOT_AVAILABLE,
        ),
        (
            make_template(sources=[], ready="False", status=None, reason="DiscoveryFailed"),
            "False",
            "DiscoveryFailed",
            State.FAILED,
        ),
        (
            make_template(sources=[], ready="False", status="Progressing", reason="Progressing"),
            "False",
            "Progressing",
            State.PENDING,
        ),
        (make_template(sources=[], ready=None, status="Progressing"), "False", "ResourceFound", State.PENDING),
        (make_template(sources=[], ready=None, status="Ready"), "True", "ResourceFound", State.READY),
    ],
    ids=["ready", "not-available", "failed-without-status", "progressing", "no-condition", "no-condition-ready"],
)
def test_template_health_mirrors_the_template(template, cond_status, cond_reason, root):
    _, derived, cond = run(make_cache(), observed(template))
    assert (cond["ServiceTemplateReady"].status, cond["ServiceTemplateReady"].reason) == (cond_status, cond_reason)
    assert derived.state is root


def test_resolved_template_kind_is_reported():
    plan, _, _ = run(make_cache(scope="Cluster"), observed(make_template(sources=[], cluster=True), scope="Cluster"))
    assert plan.status["resolvedTemplateKind"] == "AIMClusterServiceTemplate"


# ---------------------------------------------------------------- sources without downloads


def test_template_without_model_sources_gives_a_ready_cache_at_once():
    plan, derived, cond = run(make_cache(), observed(make_template(sources=[])))
    assert (cond["ArtifactsReady"].status, cond["ArtifactsReady"].reason) == ("True", "NoCachesNeeded")
    assert derived.state is State.READY and plan.apply == []
    assert "artifacts" not in plan.status


def test_unready_template_without_sources_yet_waits():
    template = make_template(sources=None, ready="False", status="Progressing", reason="Discovering")
    _, derived, cond = run(make_cache(), observed(template))
    assert cond["ArtifactsReady"].reason == "WaitingForTemplate"
    assert derived.state is State.PENDING


# ---------------------------------------------------------------- artifact creation (F67)


def test_shared_cache_creates_one_unowned_artifact_per_missing_source():
    cache = make_cache().with_spec(
        env=[{"name": "HF_TOKEN", "value": "cache"}, {"name": "A", "value": "1"}],
        storageClassName="nfs",
        runtimeConfigName="gpu",
    )
    plan, derived, cond = run(cache, observed(make_template(sources=[TINY, QWEN])))
    assert [d.owned for d in plan.apply] == [False, False]
    tiny, qwen = (d.obj for d in plan.apply)
    assert tiny["metadata"]["name"] == shared_name(TINY, cache["spec"]["env"], "nfs")
    assert tiny["metadata"]["labels"] == {
        "template-created": "true",
        "aim.eai.amd.com/template.name": "tmpl",
        "aim.eai.amd.com/template.scope": "Namespace",
        "aim.eai.amd.com/template.index": "0",
        "aim.eai.amd.com/template-cache.name": "tc",
    }
    assert tiny["spec"] == {
        "sourceUri": TINY["sourceUri"],
        "modelId": TINY["modelId"],
        "storageClassName": "nfs",
        "env": cache["spec"]["env"],
        "runtimeConfigName": "gpu",
    }
    # source env wins over cache env, in place; the name hashes the merged env
    merged = [{"name": "HF_TOKEN", "value": "source"}, {"name": "A", "value": "1"}]
    assert qwen["spec"]["env"] == merged and qwen["spec"]["size"] == "64Gi"
    assert qwen["metadata"]["name"] == shared_name(QWEN, merged, "nfs")
    assert qwen["metadata"]["labels"]["aim.eai.amd.com/template.index"] == "1"
    assert (cond["ArtifactsReady"].status, cond["ArtifactsReady"].reason) == ("False", "CreatingCaches")
    assert derived.state is State.PROGRESSING


def test_spec_2_5_example_name():
    plan, _, _ = run(make_cache(), observed(make_template(sources=[TINY])))
    assert plan.apply[0].obj["metadata"]["name"] == "hf---sshleifer-tiny-gpt2-fc6a9647bb"


def test_dedicated_cache_creates_owned_artifacts_named_for_the_cache():
    plan, _, _ = run(make_cache().mode("Dedicated"), observed(make_template(sources=[TINY])))
    assert plan.apply[0].owned is True
    assert plan.apply[0].obj["metadata"]["name"] == naming.artifact_name(TINY["sourceUri"], [], "", dedicated_to="tc")


def test_download_image_and_pull_secrets_are_passed_on():
    cache = make_cache().with_spec(downloadImage="registry.local/dl:1", imagePullSecrets=[{"name": "reg"}])
    spec = run(cache, observed(make_template(sources=[TINY])))[0].apply[0].obj["spec"]
    assert spec["modelDownloadImage"] == "registry.local/dl:1" and spec["imagePullSecrets"] == [{"name": "reg"}]


def test_index_label_counts_only_missing_sources():
    ready = make_artifact("tiny-ready", TINY)
    plan, _, _ = run(make_cache(), observed(make_template(sources=[TINY, QWEN]), [ready]))
    assert len(plan.apply) == 1
    assert plan.apply[0].obj["spec"]["sourceUri"] == QWEN["sourceUri"]
    assert plan.apply[0].obj["metadata"]["labels"]["aim.eai.amd.com/template.index"] == "0"


def test_missing_runtime_config_blocks_creation():
    config = resolve("gpu", None, None)
    plan, derived, cond = run(
        make_cache().with_spec(runtimeConfigName="gpu"), observed(make_template(sources=[TINY]), config=config)
    )
    assert plan.apply == []
    assert cond["RuntimeConfigReady"].reason == "ReferenceNotFound"
    assert derived.state is State.FAILED


def test_runtime_config_reference_and_label_propagation_come_from_the_config():
    config = resolve(
        "default",
        None,
        {
            "metadata": {"name": "default", "uid": "c1"},
            "spec": {"labelPropagation": {"enabled": True, "match": ["team.io/*"]}},
        },
    )
    plan, _, cond = run(make_cache(), observed(make_template(sources=[]), config=config))
    assert plan.labels.enabled and plan.labels.patterns == ("team.io/*",)
    assert plan.status["resolvedRuntimeConfig"]["kind"] == "AIMClusterRuntimeConfig"
    assert cond["RuntimeConfigReady"].reason == "ConfigFound"


# ---------------------------------------------------------------- matching (F67)


@pytest.mark.parametrize(
    "mode,artifact,matched",
    [
        ("Shared", make_artifact("any-name", TINY), True),
        ("Shared", make_artifact("owned", TINY, owner_uid="uid-tc"), False),
        ("Shared", make_artifact("no-status", TINY, status=None), False),
        ("Dedicated", make_artifact("owned", TINY, owner_uid="uid-tc"), True),
        ("Dedicated", make_artifact("shared", TINY), False),
        ("Dedicated", make_artifact("other-owner", TINY, owner_uid="uid-other"), False),
    ],
    ids=[
        "shared-unowned",
        "shared-skips-owned",
        "needs-status",
        "dedicated-own",
        "dedicated-skips-shared",
        "dedicated-skips-others",
    ],
)
def test_ownership_and_status_decide_reuse(mode, artifact, matched):
    plan, _, _ = run(make_cache().mode(mode), observed(make_template(sources=[TINY]), [artifact]))
    assert (plan.apply == []) is matched
    assert (artifact["metadata"]["name"] in plan.status.get("artifacts", {})) is matched


def test_storage_class_must_match_when_the_cache_sets_one():
    other_class = make_artifact("other", TINY, storage_class="slow")
    plan, _, _ = run(
        make_cache().with_spec(storageClassName="fast"), observed(make_template(sources=[TINY]), [other_class])
    )
    assert len(plan.apply) == 1
    # a cache without a class takes any class
    plan, _, _ = run(make_cache(), observed(make_template(sources=[TINY]), [other_class]))
    assert plan.apply == []


def test_best_status_wins_and_status_map_lists_it():
    failed = make_artifact("a-failed", TINY, status="Failed")
    ready = make_artifact("b-ready", TINY)
    plan, derived, cond = run(make_cache(), observed(make_template(sources=[TINY]), [failed, ready]))
    assert plan.status["artifacts"] == {
        "b-ready": {
            "name": "b-ready",
            "uid": "uid-b-ready",
            "model": TINY["modelId"],
            "status": "Ready",
            "persistentVolumeClaim": "b-ready-cache-1234",
        }
    }
    assert (cond["ArtifactsReady"].status, cond["ArtifactsReady"].reason) == ("True", "AllCachesReady")
    assert derived.state is State.READY and cond["Ready"].reason == "AllComponentsReady"


def test_existing_artifact_without_status_is_not_reapplied():
    """Another cache may have created it with its own labels; applying it again would fight over them."""
    pending = make_artifact(shared_name(TINY), TINY, status=None, cache_label="someone-else")
    plan, derived, cond = run(make_cache(), observed(make_template(sources=[TINY]), [pending]))
    assert plan.apply == []
    assert cond["ArtifactsReady"].reason == "CreatingCaches"
    assert plan.status["artifacts"][pending["metadata"]["name"]]["status"] == "Pending"
    assert derived.state is State.PROGRESSING


# ---------------------------------------------------------------- artifact status (F68)


@pytest.mark.parametrize(
    "status,reason,message,state,cond_reason",
    [
        ("Failed", "AuthError", "401 from huggingface.co", State.FAILED, "AuthError"),
        ("Progressing", "Downloading", "42 %", State.PROGRESSING, "Downloading"),
        ("Pending", "", "", State.PENDING, "CachesNotReady"),
        ("Degraded", "", "", State.DEGRADED, "CachesNotReady"),
    ],
)
def test_worst_artifact_explains_artifacts_ready(status, reason, message, state, cond_reason):
    artifacts = [make_artifact("ok", TINY), make_artifact("bad", QWEN, status=status, reason=reason, message=message)]
    _, derived, cond = run(make_cache(), observed(make_template(sources=[TINY, QWEN]), artifacts))
    assert cond["ArtifactsReady"].status == "False" and cond["ArtifactsReady"].reason == cond_reason
    assert cond["ArtifactsReady"].message.startswith("One or more caches are not ready: ")
    assert (message or "bad") in cond["ArtifactsReady"].message
    assert derived.state is state


def test_failed_artifact_shows_even_while_another_is_being_created():
    failed = make_artifact("bad", TINY, status="Failed", reason="SourceNotFound", message="no such repo")
    plan, derived, cond = run(make_cache(), observed(make_template(sources=[TINY, QWEN]), [failed]))
    assert len(plan.apply) == 1  # the missing one is still created
    assert cond["ArtifactsReady"].reason == "SourceNotFound" and derived.state is State.FAILED


def test_artifacts_that_left_the_cache_are_removed_from_status():
    cache = make_cache().with_artifacts(["old-one", "b-ready"])
    plan, _, _ = run(cache, observed(make_template(sources=[TINY]), [make_artifact("b-ready", TINY)]))
    assert plan.status["artifacts"]["old-one"] is None  # merge patch: null deletes the key
    assert plan.status["artifacts"]["b-ready"]["status"] == "Ready"

    cleared, _, _ = run(make_cache().with_artifacts(["old-one"]), observed(make_template(sources=[])))
    assert cleared.status["artifacts"] == {"old-one": None}


# ---------------------------------------------------------------- finalizer (F69, F15, Q23)


LIVE_NS = {"metadata": {"name": NS}, "status": {"phase": "Active"}}


@pytest.mark.parametrize(
    "namespace,expected",
    [
        (LIVE_NS, ["failed", "pending"]),
        (None, []),
        ({"metadata": {"name": NS}, "status": {"phase": "Terminating"}}, []),
        ({"metadata": {"name": NS, "deletionTimestamp": "2025-01-01T00:00:00Z"}, "status": {"phase": "Active"}}, []),
    ],
    ids=["alive", "gone", "terminating", "being-deleted"],
)
def test_cleanup_deletes_only_non_ready_artifacts_of_this_cache_while_the_namespace_lives(namespace, expected):
    labelled = [
        make_artifact("ready", cache_label="tc"),
        make_artifact("failed", status="Failed", cache_label="tc"),
        make_artifact("pending", status=None, cache_label="tc"),
        make_artifact("other-cache", status="Failed", cache_label="other"),
    ]
    assert cleanup_targets(make_cache(), namespace, labelled) == expected


class RecordingKube:
    def __init__(self, namespace: dict | None = LIVE_NS) -> None:
        self.deleted: list[tuple[str, str | None, str]] = []
        self.namespace = namespace  # what reading the namespace from the API server answers

    async def get(self, ref, namespace, name):
        assert ref == NAMESPACES and name == NS
        return self.namespace

    async def delete(self, ref, namespace, name):
        self.deleted.append((ref.kind, namespace, name))


async def test_finalize_deletes_through_the_api():
    store, kube = Store(), RecordingKube()
    controller = TemplateCacheController()
    controller.setup(store)
    store.upsert(NAMESPACES, LIVE_NS)
    store.upsert(ARTIFACTS, make_artifact("failed", status="Failed", cache_label="tc"))
    store.upsert(ARTIFACTS, make_artifact("ready", cache_label="tc"))
    store.upsert(ARTIFACTS, make_artifact("elsewhere", status="Failed", cache_label="other"))
    await controller.finalize(Context(store, kube, None, "aim-system"), make_cache())
    assert kube.deleted == [("AIMArtifact", NS, "failed")]


async def test_finalize_deletes_nothing_when_the_namespace_turned_terminating_before_the_store_saw_it():
    """F15: the namespace controller deletes the cache right after marking the namespace; the watch that
    brings the namespace's Terminating may come later than the cache's deletion."""
    terminating = {
        "metadata": {"name": NS, "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "status": {"phase": "Terminating"},
    }
    store, kube = Store(), RecordingKube(namespace=terminating)
    controller = TemplateCacheController()
    controller.setup(store)
    store.upsert(NAMESPACES, LIVE_NS)
    store.upsert(ARTIFACTS, make_artifact("failed", status="Failed", cache_label="tc"))
    await controller.finalize(Context(store, kube, None, "aim-system"), make_cache())
    assert kube.deleted == []


# ---------------------------------------------------------------- observe and watches


def store_with(*pairs) -> tuple[Store, TemplateCacheController]:
    store, controller = Store(), TemplateCacheController()
    controller.setup(store)
    for ref, obj in pairs:
        store.upsert(ref, obj)
    return store, controller


async def test_observe_reads_template_config_and_candidate_artifacts_from_the_store():
    store, controller = store_with(
        (TEMPLATES, make_template(sources=[TINY])),
        (CLUSTER_RUNTIME_CONFIGS, {"metadata": {"name": "default", "uid": "c1"}, "spec": {}}),
        (ARTIFACTS, make_artifact("tiny", TINY)),
        (ARTIFACTS, make_artifact("qwen", QWEN)),  # the template does not need it
        (
            ARTIFACTS,
            {**make_artifact("tiny-elsewhere", TINY), "metadata": {"name": "tiny-elsewhere", "namespace": "other"}},
        ),
    )
    obs = await controller.observe(Context(store, None, None, "aim-system"), make_cache())
    assert obs.template_scope == "Namespace" and obs.template["metadata"]["name"] == "tmpl"
    assert obs.config.found and obs.config.cluster is not None
    assert [a["metadata"]["name"] for a in obs.artifacts] == ["tiny"]


def keys(controller, ref, obj):
    watch = next(w for w in controller.watches() if w.resource == ref)
    return set(watch.mapper(obj))


def test_template_changes_retrigger_the_caches_using_them():
    other_ns = make_cache("elsewhere")
    other_ns["metadata"]["namespace"] = "other"
    store, controller = store_with(
        (TEMPLATE_CACHES, make_cache("a")), (TEMPLATE_CACHES, make_cache("b", "x")), (TEMPLATE_CACHES, other_ns)
    )
    assert keys(controller, TEMPLATES, make_template()) == {(NS, "a")}
    assert keys(controller, CLUSTER_TEMPLATES, make_template(cluster=True)) == {(NS, "a"), ("other", "elsewhere")}


def test_runtime_config_changes_retrigger_the_caches_using_them():
    store, controller = store_with(
        (TEMPLATE_CACHES, make_cache("a").with_spec(runtimeConfigName="gpu")), (TEMPLATE_CACHES, make_cache("b"))
    )
    assert keys(controller, RUNTIME_CONFIGS, {"metadata": {"name": "gpu", "namespace": NS}}) == {(NS, "a")}
    assert keys(controller, CLUSTER_RUNTIME_CONFIGS, {"metadata": {"name": "default"}}) == {(NS, "b")}


def test_artifact_changes_retrigger_caches_by_label_owner_and_use():
    store, controller = store_with((TEMPLATE_CACHES, make_cache("user").with_artifacts(["shared-art"])))
    assert keys(controller, ARTIFACTS, make_artifact("shared-art")) == {(NS, "user")}
    assert keys(controller, ARTIFACTS, make_artifact("x", cache_label="creator")) == {(NS, "creator")}
    assert keys(controller, ARTIFACTS, make_artifact("y", owner_uid="uid-tc")) == {(NS, "tc")}
    assert keys(controller, ARTIFACTS, make_artifact("unrelated")) == set()


def test_controller_identity():
    controller = TemplateCacheController()
    assert controller.field_manager == "aim-template-cache-controller"
    assert controller.finalizer == "aim.eai.amd.com/artifactcleanup"
    assert NAMESPACES in controller.extra_resources()
