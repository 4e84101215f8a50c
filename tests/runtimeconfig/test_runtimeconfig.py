"""Runtime config resolution and merging (F17, F5)."""

import json

import pytest

from aim_core.reconcile.health import Category, State
from aim_core.runtimeconfig.resolution import config_name, merge_specs, normalize, resolve, routing_enabled


def rc(name, spec, ns="team", uid="u-ns"):
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": ns, "uid": uid},
        "spec": spec,
    }


def crc(name, spec, uid="u-cl"):
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterRuntimeConfig",
        "metadata": {"name": name, "uid": uid},
        "spec": spec,
    }


@pytest.mark.parametrize(
    "spec,expected",
    [
        (None, "default"),
        ({}, "default"),
        ({"runtimeConfigName": " "}, "default"),
        ({"runtimeConfigName": "gpu"}, "gpu"),
    ],
)
def test_config_name(spec, expected):
    assert config_name(spec) == expected


def test_namespace_fields_win_and_unset_fields_fall_through():
    cluster = {
        "routing": {"enabled": True, "gatewayRef": {"name": "gw", "namespace": "infra"}, "requestTimeout": "60s"},
        "storage": {"defaultStorageClassName": "fast"},
        "labelPropagation": {"enabled": True, "match": ["team.io/*"]},
    }
    namespaced = {
        "routing": {"pathTemplate": "/{.metadata.namespace}/{.metadata.name}", "enabled": False},
        "labelPropagation": {"match": ["cost-center"]},
    }
    merged = merge_specs(cluster, namespaced)
    assert merged["routing"] == {
        "enabled": False,
        "gatewayRef": {"name": "gw", "namespace": "infra"},
        "requestTimeout": "60s",
        "pathTemplate": "/{.metadata.namespace}/{.metadata.name}",
    }
    assert merged["storage"] == {"defaultStorageClassName": "fast"}
    assert merged["labelPropagation"] == {"enabled": True, "match": ["cost-center"]}  # lists replace


def test_gateway_ref_is_replaced_whole_not_mixed():
    merged = merge_specs(
        {"routing": {"gatewayRef": {"name": "a", "namespace": "x", "sectionName": "https"}}},
        {"routing": {"gatewayRef": {"name": "b"}}},
    )
    assert merged["routing"]["gatewayRef"] == {"name": "b"}


def test_env_merges_by_name_with_engine_args_deep_merge():
    cluster = {
        "env": [
            {"name": "HF_HOME", "value": "/c"},
            {"name": "AIM_ENGINE_ARGS", "value": json.dumps({"a": 1, "n": {"x": 1}})},
        ]
    }
    namespaced = {
        "env": [
            {"name": "AIM_ENGINE_ARGS", "value": json.dumps({"b": 2, "n": {"y": 2}})},
            {"name": "NEW", "value": "1"},
        ]
    }
    merged = merge_specs(cluster, namespaced)
    assert [e["name"] for e in merged["env"]] == ["HF_HOME", "AIM_ENGINE_ARGS", "NEW"]
    assert json.loads(merged["env"][1]["value"]) == {"a": 1, "b": 2, "n": {"x": 1, "y": 2}}


def test_deprecated_storage_fields_move_into_storage_unless_set():
    assert normalize({"defaultStorageClassName": "old", "pvcHeadroomPercent": 25}) == {
        "storage": {"defaultStorageClassName": "old", "pvcHeadroomPercent": 25}
    }
    assert normalize({"defaultStorageClassName": "old", "storage": {"defaultStorageClassName": "new"}}) == {
        "storage": {"defaultStorageClassName": "new"}
    }


def test_missing_default_is_fine_missing_named_is_a_missing_reference():
    default = resolve("default", None, None)
    assert default.issue is None and not default.found
    assert default.health().state == State.READY and default.health().reason == "DefaultConfigNotFound"
    named = resolve("gpu", None, None)
    assert named.issue.category == Category.MISSING_UPSTREAM and named.issue.reason == "ConfigNotFound"
    assert "gpu" in named.issue.message
    health = named.health()
    assert health.state == State.FAILED and health.reason == "ReferenceNotFound"


@pytest.mark.parametrize(
    "ns_obj,cl_obj,scope,kind",
    [
        (rc("x", {}), None, "Namespace", "AIMRuntimeConfig"),
        (None, crc("x", {}), "Cluster", "AIMClusterRuntimeConfig"),
        (rc("x", {}), crc("x", {}), "Merged", "AIMRuntimeConfig"),
    ],
)
def test_resolved_reference_scope(ns_obj, cl_obj, scope, kind):
    ref = resolve("x", ns_obj, cl_obj).reference
    assert ref["scope"] == scope and ref["kind"] == kind and ref["name"] == "x"
    assert ("namespace" in ref) == (ns_obj is not None)


@pytest.mark.parametrize(
    "service,config,expected",
    [
        (None, {}, False),
        ({"enabled": True}, {}, True),
        ({"enabled": False}, {"routing": {"enabled": True}}, False),
        ({}, {"routing": {"enabled": True}}, True),
    ],
)
def test_routing_enabled(service, config, expected):
    assert routing_enabled(service, config) is expected


@pytest.mark.parametrize(
    "ns_spec, cl_spec, names",
    [
        ({"pvcHeadroomPercent": -5}, None, "AIMRuntimeConfig team/gpu spec.pvcHeadroomPercent"),
        (None, {"storage": {"pvcHeadroomPercent": -1}}, "AIMClusterRuntimeConfig gpu spec.storage.pvcHeadroomPercent"),
        ({"artifact": {"unusedAdapterRetention": "a week"}}, None, "spec.artifact.unusedAdapterRetention"),
    ],
)
def test_a_value_that_cannot_work_fails_every_user_of_the_config_naming_the_field(ns_spec, cl_spec, names):
    found = resolve(
        "gpu", rc("gpu", ns_spec) if ns_spec is not None else None, crc("gpu", cl_spec) if cl_spec else None
    )
    assert found.issue.category == Category.INVALID_SPEC and found.issue_reason == "InvalidSpec"
    assert names in found.issue.message and "runtime config 'gpu'" in found.issue.message
    health = found.health(missing_reason="ConfigNotFound")
    assert (health.state, health.reason, health.category) == (State.FAILED, "InvalidSpec", Category.INVALID_SPEC)


def test_a_namespaced_value_hides_the_cluster_config_s_bad_one():
    found = resolve("gpu", rc("gpu", {"storage": {"pvcHeadroomPercent": 20}}), crc("gpu", {"pvcHeadroomPercent": -5}))
    assert found.issue is None


def test_a_missing_config_keeps_its_own_reason():
    assert resolve("gpu", None, None).issue_reason == "ReferenceNotFound"


def test_the_config_itself_reports_each_value_that_cannot_work():
    from aim_core.runtimeconfig.controller import validate

    problems = validate(
        rc(
            "gpu",
            {
                "pvcHeadroomPercent": -5,
                "storage": {"pvcHeadroomPercent": -1},
                "artifact": {"unusedAdapterRetention": "soon"},
            },
        )
    )
    joined = "; ".join(problems)
    assert "spec.pvcHeadroomPercent: -5 is negative" in joined
    assert "spec.storage.pvcHeadroomPercent: -1 is negative" in joined
    assert "spec.artifact.unusedAdapterRetention" in joined
    assert validate(rc("gpu", {"pvcHeadroomPercent": 0, "artifact": {"unusedAdapterRetention": "Never"}})) == []
