"""The service's template cache: mode, lookup, planned content, health and status (F63-F65)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aim_core.reconcile import naming
from aim_core.reconcile.health import State
from aim_core.service.caching import (
    DEDICATED,
    SHARED,
    cache_health,
    cache_name,
    cache_owned,
    cache_status,
    caching_mode,
    desired_cache,
    find_cache,
    has_cache_volumes,
)

NS = "ml-team"
TEMPLATE = "qwen3-32b-mi300x-lat"


class Service(dict):
    def caching(self, mode: str | None) -> Service:
        self["spec"]["caching"] = {"mode": mode}
        return self

    def with_spec(self, **fields: Any) -> Service:
        self["spec"].update(fields)
        return self


def make_service(name: str = "chat", uid: str = "svc-uid-1") -> Service:
    return Service(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": name, "namespace": NS, "uid": uid},
            "spec": {"model": {"name": "qwen"}},
        }
    )


def make_cache(
    name: str,
    template: str = TEMPLATE,
    mode: str | None = SHARED,
    status: str | None = None,
    owner_uid: str | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    cache: dict[str, Any] = {
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"templateName": template, "templateScope": "Namespace"},
    }
    if mode is not None:
        cache["spec"]["mode"] = mode
    if status is not None:
        cache["status"] = {"status": status}
    if owner_uid:
        cache["metadata"]["ownerReferences"] = [
            {"kind": "AIMService", "name": "chat", "uid": owner_uid, "controller": True}
        ]
    if deleting:
        cache["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    return cache


def make_template(name: str = TEMPLATE, env=None, caching_env=None, cluster: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"modelName": "qwen"}
    if env is not None:
        spec["env"] = env
    if caching_env is not None:
        spec["caching"] = {"enabled": True, "env": caching_env}
    meta = {"name": name} if cluster else {"name": name, "namespace": NS}
    kind = "AIMClusterServiceTemplate" if cluster else "AIMServiceTemplate"
    return {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}


# ---------------------------------------------------------------- mode


@pytest.mark.parametrize(
    "mode,expected",
    [
        (None, SHARED),
        ("", SHARED),
        ("Shared", SHARED),
        ("Dedicated", DEDICATED),
        ("Always", SHARED),
        ("Auto", SHARED),
        ("Never", DEDICATED),
    ],
)
def test_caching_mode_maps_legacy_values(mode, expected):
    assert caching_mode(make_service().caching(mode)) == expected


def test_caching_mode_defaults_to_shared_and_ignores_cache_model():
    assert caching_mode(make_service()) == SHARED
    assert caching_mode(make_service().with_spec(cacheModel=False)) == SHARED
    assert caching_mode(make_service().with_spec(cacheModel=True).caching("Never")) == DEDICATED


def test_only_dedicated_caches_are_owned_by_the_service():
    assert cache_owned(DEDICATED) is True
    assert cache_owned(SHARED) is False


def test_cache_names_follow_spec_2_5():
    svc = make_service("chat", uid="abc")
    assert cache_name(svc, "my-template", SHARED) == naming.shared_cache_name("my-template", NS)
    assert cache_name(svc, "my-template", DEDICATED) == naming.dedicated_cache_name("my-template", "chat", "abc")
    # the spec's worked example: my-template in default
    default_svc = make_service()
    default_svc["metadata"]["namespace"] = "default"
    assert cache_name(default_svc, "my-template", SHARED) == "my-template-1080a608"


# ---------------------------------------------------------------- finding


SHARED_NAME = naming.shared_cache_name(TEMPLATE, NS)


@pytest.mark.parametrize(
    "caches,expected",
    [
        ([], None),
        ([make_cache("other", template="other-template")], None),
        ([make_cache("dedicated-one", mode=DEDICATED, status="Ready")], None),
        ([make_cache("manual", mode=None)], "manual"),  # the CRD defaults mode to Shared
        ([make_cache("a", status="Failed"), make_cache("b", status="Progressing")], "b"),
        ([make_cache("a", status="Progressing"), make_cache("z", status="Ready")], "z"),
        ([make_cache("a", status="Ready"), make_cache(SHARED_NAME, status="Ready")], SHARED_NAME),
        ([make_cache("a"), make_cache("b")], "a"),
        ([make_cache("going", status="Ready", deleting=True)], None),
    ],
    ids=[
        "none",
        "other-template",
        "dedicated-ignored",
        "default-mode",
        "healthiest",
        "ready-wins",
        "own-name-on-tie",
        "by-name-on-tie",
        "deleting-skipped",
    ],
)
def test_shared_lookup_takes_the_healthiest_shared_cache_of_the_template(caches, expected):
    found = find_cache(make_service(), TEMPLATE, SHARED, caches)
    assert (found or {}).get("metadata", {}).get("name") == expected


def test_dedicated_lookup_takes_only_the_services_own_cache():
    svc = make_service("chat", uid="svc-uid-1")
    own_name = naming.dedicated_cache_name(TEMPLATE, "chat", "svc-uid-1")
    shared_ready = make_cache(SHARED_NAME, status="Ready")
    someone_elses = make_cache("theirs", mode=DEDICATED, status="Ready", owner_uid="other-uid")
    assert find_cache(svc, TEMPLATE, DEDICATED, [shared_ready, someone_elses]) is None

    by_name = make_cache(own_name, mode=DEDICATED)
    assert find_cache(svc, TEMPLATE, DEDICATED, [shared_ready, by_name])["metadata"]["name"] == own_name

    by_owner = make_cache("renamed", mode=DEDICATED, owner_uid="svc-uid-1")
    assert find_cache(svc, TEMPLATE, DEDICATED, [someone_elses, by_owner])["metadata"]["name"] == "renamed"
    other_template = make_cache("mine-other", template="x", mode=DEDICATED, owner_uid="svc-uid-1")
    assert find_cache(svc, TEMPLATE, DEDICATED, [other_template]) is None


# ---------------------------------------------------------------- planning


def test_shared_cache_content():
    svc = make_service("Chat.Bot", uid="u1").with_spec(runtimeConfigName="gpu")
    obj = desired_cache(svc, make_template(), "Namespace", {}, SHARED)
    assert obj["kind"] == "AIMTemplateCache"
    assert obj["metadata"] == {
        "name": naming.shared_cache_name(TEMPLATE, NS),
        "namespace": NS,
        "labels": {"aim.eai.amd.com/service": "chat.bot"},
    }
    assert obj["spec"] == {
        "templateName": TEMPLATE,
        "templateScope": "Namespace",
        "mode": SHARED,
        "runtimeConfigName": "gpu",
    }
    assert "ownerReferences" not in obj["metadata"]  # ownership is decided by cache_owned()


def test_dedicated_cache_content_for_a_cluster_template():
    svc = make_service("chat", uid="u1")
    obj = desired_cache(svc, make_template(cluster=True), "Cluster", {}, DEDICATED)
    assert obj["metadata"]["name"] == naming.dedicated_cache_name(TEMPLATE, "chat", "u1")
    assert obj["spec"]["templateScope"] == "Cluster" and obj["spec"]["mode"] == DEDICATED
    assert "runtimeConfigName" not in obj["spec"] and "storageClassName" not in obj["spec"]


@pytest.mark.parametrize(
    "service_class,config,expected",
    [
        ("fast", {"storage": {"defaultStorageClassName": "slow"}}, "fast"),
        (None, {"storage": {"defaultStorageClassName": "slow"}}, "slow"),
        (None, {}, None),
    ],
)
def test_storage_class_comes_from_the_service_then_the_config(service_class, config, expected):
    svc = make_service()
    if service_class:
        svc.with_spec(storage={"defaultStorageClassName": service_class})
    obj = desired_cache(svc, make_template(), "Namespace", config, SHARED)
    assert obj["spec"].get("storageClassName") == expected


def test_env_layers_template_then_template_caching_then_service_in_place():
    template = make_template(
        env=[{"name": "A", "value": "t"}, {"name": "B", "value": "t"}, {"name": "C", "value": "t"}],
        caching_env=[
            {"name": "B", "value": "cache"},
            {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        ],
    )
    svc = make_service().with_spec(env=[{"name": "C", "value": "svc"}, {"name": "Z", "value": "svc"}])
    env = desired_cache(svc, template, "Namespace", {}, SHARED)["spec"]["env"]
    assert env == [
        {"name": "A", "value": "t"},
        {"name": "B", "value": "cache"},
        {"name": "C", "value": "svc"},
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        {"name": "Z", "value": "svc"},
    ]


def test_cluster_templates_have_no_caching_env_layer():
    template = make_template(env=[{"name": "A", "value": "t"}], cluster=True)
    template["spec"]["caching"] = {"env": [{"name": "A", "value": "ignored"}]}  # not in the cluster CRD
    env = desired_cache(make_service(), template, "Cluster", {}, SHARED)["spec"]["env"]
    assert env == [{"name": "A", "value": "t"}]


def test_desired_cache_does_not_alias_its_inputs():
    template = make_template(env=[{"name": "A", "value": "t"}])
    before = copy.deepcopy(template)
    obj = desired_cache(make_service(), template, "Namespace", {}, SHARED)
    obj["spec"]["env"][0]["value"] = "changed"
    assert template == before


# ---------------------------------------------------------------- health and status


def with_ready(cache: dict[str, Any], message: str) -> dict[str, Any]:
    cache.setdefault("status", {})["conditions"] = [
        {"type": "Ready", "status": "False", "reason": "X", "message": message}
    ]
    return cache


@pytest.mark.parametrize(
    "status,state,reason",
    [
        ("Ready", State.READY, "CacheReady"),
        ("Progressing", State.PROGRESSING, "CacheNotReady"),
        ("Failed", State.FAILED, "CacheFailed"),
        ("Pending", State.PROGRESSING, "CacheCreating"),
        ("NotAvailable", State.PROGRESSING, "CacheCreating"),
        (None, State.PROGRESSING, "CacheCreating"),
    ],
)
def test_cache_health_by_cache_status(status, state, reason):
    health = cache_health(make_cache("c", status=status), False, SHARED)
    assert (health.state, health.reason) == (state, reason)
    assert "c" in health.message


def test_failed_cache_health_carries_the_cache_message():
    health = cache_health(with_ready(make_cache("c", status="Failed"), "download of hf://x failed: 401"), True, SHARED)
    assert health.reason == "CacheFailed" and "401" in health.message


@pytest.mark.parametrize(
    "volumes,mode,state,reason",
    [
        (False, SHARED, State.PROGRESSING, "CacheCreating"),
        (False, DEDICATED, State.PROGRESSING, "CacheCreating"),
        (True, SHARED, State.DEGRADED, "CacheLost"),
        (True, DEDICATED, State.DEGRADED, "CacheCreating"),
    ],
)
def test_missing_cache_health_depends_on_live_volumes(volumes, mode, state, reason):
    health = cache_health(None, volumes, mode)
    assert (health.state, health.reason) == (state, reason)
    assert health.category is None  # a lost cache is re-planned, not an error that blocks applying


@pytest.mark.parametrize(
    "isvc,expected",
    [
        (None, False),
        ({"spec": {"predictor": {}}}, False),
        ({"spec": {"predictor": {"volumes": [{"name": "shm", "emptyDir": {}}]}}}, False),
        ({"spec": {"predictor": {"volumes": [{"name": "hf-x", "persistentVolumeClaim": {"claimName": "p"}}]}}}, True),
    ],
)
def test_has_cache_volumes(isvc, expected):
    assert has_cache_volumes(isvc) is expected


def test_cache_status_only_for_a_ready_cache():
    assert cache_status(None) is None
    assert cache_status(make_cache("c", status="Progressing")) is None
    assert cache_status(make_cache("c", status="Ready")) == {
        "templateCacheRef": {
            "kind": "AIMTemplateCache",
            "name": "c",
            "namespace": NS,
            "uid": "uid-c",
            "scope": "Namespace",
        }
    }


def test_cache_status_fits_the_service_status_model():
    from aim_core.api.convert import structure
    from aim_core.api.service import AIMServiceCacheStatus

    value = structure(AIMServiceCacheStatus, cache_status(make_cache("c", status="Ready")))
    assert value.template_cache_ref.name == "c" and value.template_cache_ref.uid == "uid-c"
