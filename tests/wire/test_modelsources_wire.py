"""AIMClusterModelSource in the running operator (kopf + engine, installed plugins) against a real
registry on loopback: the controller is registered, syncs, creates its models and reports Ready."""

from __future__ import annotations

from tests.wire.conftest import eventually

SOURCES = "aim.eai.amd.com/v1alpha1/aimclustermodelsources"
MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"


async def test_a_source_in_the_running_operator_creates_its_models(kube, api, operator, oci_registry, unique_repo):
    pushed = oci_registry.push_image(unique_repo, "0.9.0")
    oci_registry.add_tags(unique_repo, pushed.digest, ["0.8.4", "0.8.5", "1.0.0", "latest"])
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterModelSource",
        "metadata": {"name": "local"},
        "spec": {"images": [f"{oci_registry.host}/{unique_repo}"], "versions": [">=0.8.5", "<1.0.0"]},
    }
    response = await api.post(kube.path(SOURCES), json=body)
    assert response.status_code == 201, response.text

    def synced():
        obj = kube.get(SOURCES, None, "local")
        assert obj["status"]["status"] == "Ready", obj.get("status")
        return obj

    obj = await eventually(synced, timeout=20)
    images = {m["spec"]["image"] for m in kube.list(MODELS, label_selector="aim.eai.amd.com/model-source=local")}
    assert images == {f"{oci_registry.host}/{unique_repo}:0.8.5", f"{oci_registry.host}/{unique_repo}:0.9.0"}
    assert (obj["status"]["discoveredModels"], obj["status"]["availableModels"]) == (2, 2)
    assert obj["status"]["lastSyncTime"]
