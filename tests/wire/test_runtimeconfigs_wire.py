"""Runtime configs on a cluster with the operator running (F17-F19)."""

from __future__ import annotations

import pytest

from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"
CRC = "aim.eai.amd.com/v1alpha1/aimclusterruntimeconfigs"


def condition(obj, type_):
    for c in (obj or {}).get("status", {}).get("conditions", []):
        if c["type"] == type_:
            return c
    return None


@pytest.fixture(autouse=True)
def team(kube):
    """The namespace the tests write to (a real API server refuses objects in a namespace that does not exist)."""
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})


async def create(api, path, body):
    response = await api.post(path, json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


async def test_namespaced_config_shows_the_merged_view_and_follows_cluster_changes(kube, api, operator):
    await create(
        api,
        kube.path(CRC),
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterRuntimeConfig",
            "metadata": {"name": "default"},
            "spec": {
                "defaultStorageClassName": "standard",
                "routing": {"enabled": True, "gatewayRef": {"name": "gw", "namespace": "infra"}},
                "env": [{"name": "HF_HOME", "value": "/cache"}],
            },
        },
    )
    await create(
        api,
        kube.path(RC, "team"),
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "default", "namespace": "team"},
            "spec": {"routing": {"requestTimeout": "60s"}, "env": [{"name": "HF_HOME", "value": "/team-cache"}]},
        },
    )

    def merged():
        obj = kube.get(RC, "team", "default")
        effective = obj["status"]["effectiveSpec"]
        gateway = {
            "name": "gw",
            "namespace": "infra",  # group and kind: the CRD's defaults, as stored
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
        }
        assert effective["routing"] == {"enabled": True, "gatewayRef": gateway, "requestTimeout": "60s"}
        assert effective["env"] == [{"name": "HF_HOME", "value": "/team-cache"}]
        assert effective["storage"] == {"defaultStorageClassName": "standard"}  # deprecated field migrated
        assert condition(obj, "ClusterConfigMerged")["status"] == "True"
        assert condition(obj, "Ready")["status"] == "True"
        return obj

    await eventually(merged)
    cluster = await eventually(lambda: condition(kube.get(CRC, None, "default"), "Ready"))
    assert cluster["reason"] == "AllComponentsReady"

    # A change to the cluster config reaches the namespaced config's merged view (F19 fan-out).
    response = await api.patch(
        kube.path(CRC, None, "default"),
        json={"spec": {"routing": {"enabled": False}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def follows():
        effective = kube.get(RC, "team", "default")["status"]["effectiveSpec"]
        assert effective["routing"]["enabled"] is False
        return True

    await eventually(follows)

    # Deleting the cluster config leaves the namespaced config alone, and says so.
    await api.delete(kube.path(CRC, None, "default"))

    def alone():
        obj = kube.get(RC, "team", "default")
        c = condition(obj, "ClusterConfigMerged")
        assert c["status"] == "False" and c["reason"] == "NoClusterConfig"
        assert "gatewayRef" not in obj["status"]["effectiveSpec"].get("routing", {})
        return True

    await eventually(alone)


async def test_malformed_engine_args_are_reported_not_crashed_on(kube, api, operator):
    await create(
        api,
        kube.path(RC, "team"),
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "broken", "namespace": "team"},
            "spec": {
                "env": [{"name": "AIM_ENGINE_ARGS", "value": "{not json"}],
                "labelPropagation": {"enabled": True, "match": ["team[.io/*"]},
            },
        },
    )

    def reported():
        obj = kube.get(RC, "team", "broken")
        ready = condition(obj, "Ready")
        assert ready["status"] == "False" and ready["reason"] == "InvalidSpec"
        assert "AIM_ENGINE_ARGS" in ready["message"] and "labelPropagation.match[0]" in ready["message"]
        assert condition(obj, "ConfigValid")["status"] == "False"
        return obj

    await eventually(reported)
    await eventually(
        lambda: any(e["reason"] == "InvalidSpec" and e["type"] == "Warning" for e in kube.events_for("broken", "team"))
    )


async def test_steady_state_sends_no_writes(kube, api, operator):
    await create(
        api,
        kube.path(RC, "team"),
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "quiet", "namespace": "team"},
            "spec": {"env": [{"name": "A", "value": "1"}]},
        },
    )
    await eventually(lambda: condition(kube.get(RC, "team", "quiet"), "Ready"))
    await operator.settle()
    mark = kube.mark()
    processed = operator.runtime.engine.queue.processed
    operator.requeue_all()
    await eventually(lambda: operator.runtime.engine.queue.processed > processed)
    await operator.settle()
    assert kube.writes(since=mark) == 0


@pytest.mark.parametrize(
    "kind, spec, field",
    [
        ("AIMRuntimeConfig", {"pvcHeadroomPercent": -5}, "pvcHeadroomPercent"),
        ("AIMClusterRuntimeConfig", {"pvcHeadroomPercent": -1}, "pvcHeadroomPercent"),
        ("AIMRuntimeConfig", {"routing": {"requestTimeout": "soon"}}, "routing.requestTimeout"),
        ("AIMClusterRuntimeConfig", {"routing": {"requestTimeout": "-30s"}}, "routing.requestTimeout"),
        ("AIMRuntimeConfig", {"artifact": {"unusedAdapterRetention": "a week"}}, "artifact.unusedAdapterRetention"),
    ],
)
async def test_a_value_that_can_never_work_is_refused_by_the_api_server(kube, api, kind, spec, field):
    # a config the schema let through would fail every object that uses it; these never get stored
    namespaced = kind == "AIMRuntimeConfig"
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": kind,
        "metadata": {"name": "bad", **({"namespace": "team"} if namespaced else {})},
        "spec": spec,
    }
    response = await api.post(kube.path(RC, "team") if namespaced else kube.path(CRC), json=body)
    assert response.status_code == 422, response.text
    assert f"spec.{field}" in response.text
    good = {**body, "spec": {"pvcHeadroomPercent": 0, "routing": {"requestTimeout": "1m30s"}}}
    response = await api.post(kube.path(RC, "team") if namespaced else kube.path(CRC), json=good)
    assert response.status_code in (200, 201), response.text
