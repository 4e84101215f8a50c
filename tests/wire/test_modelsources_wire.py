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


TAGS = ["0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.8.4"]


def _source(name: str, image: str) -> dict:
    # upstream's auto-sourcing and wildcard scenarios: identical filters, five images
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMClusterModelSource",
        "metadata": {"name": name},
        "spec": {"filters": [{"image": image}]},
    }


def _models_of(kube, source: str) -> dict[str, dict]:
    """The models labelled as ``source``'s, each checked to be owned by that source alone."""
    found = {}
    for model in kube.list(MODELS, label_selector=f"aim.eai.amd.com/model-source={source}"):
        meta = model["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        owners = [(r["kind"], r["name"], r.get("controller")) for r in meta.get("ownerReferences") or []]
        assert owners == [("AIMClusterModelSource", source, True)], meta
        assert meta["labels"]["aim.eai.amd.com/cluster-model-source.name"] == source, meta["labels"]
        found[meta["name"]] = model
    return found


async def _ready_with(kube, name: str, discovered: int, timeout: float = 30) -> dict:
    def check():
        obj = kube.get(SOURCES, None, name)
        assert obj["status"]["status"] == "Ready", obj.get("status")
        assert obj["status"]["discoveredModels"] == discovered, obj["status"]
        return obj

    return await eventually(check, timeout=timeout)


async def test_a_second_source_never_takes_the_first_s_models_and_replaces_them_once_they_go(
    kube, api, operator, oci_registry, unique_repo
):
    pushed = oci_registry.push_image(unique_repo, TAGS[0])
    oci_registry.add_tags(unique_repo, pushed.digest, TAGS[1:])
    image = f"{oci_registry.host}/{unique_repo}"
    wanted = {f"{image}:{tag}" for tag in TAGS}

    response = await api.post(kube.path(SOURCES), json=_source("auto-sourcing", image))
    assert response.status_code == 201, response.text
    await _ready_with(kube, "auto-sourcing", 5)
    first = await eventually(lambda: len(m := _models_of(kube, "auto-sourcing")) == 5 and m, timeout=10)
    assert {m["spec"]["image"] for m in first.values()} == wanted

    # The same filters in a second source: the first's models stay the first's, and count for the second.
    response = await api.post(kube.path(SOURCES), json=_source("wildcard", image))
    assert response.status_code == 201, response.text
    second = await _ready_with(kube, "wildcard", 5)
    listed = next(c for c in second["status"]["conditions"] if c["type"] == "ExistingModelsReady")
    assert "source auto-sourcing" in listed["message"], listed
    await operator.settle()
    assert set(_models_of(kube, "auto-sourcing")) == set(first) and _models_of(kube, "wildcard") == {}

    # The first source goes and its models with it (garbage collection): the second makes its own at once,
    # not at its next sync an hour later.
    response = await api.delete(kube.path(SOURCES, name="auto-sourcing"))
    assert response.status_code == 200, response.text
    mine = await eventually(lambda: len(m := _models_of(kube, "wildcard")) == 5 and m, timeout=60, interval=0.2)
    assert {m["spec"]["image"] for m in mine.values()} == wanted
    assert set(mine) == set(first)  # the name derives from the image alone, as upstream's
    await _ready_with(kube, "wildcard", 5)


async def test_two_sources_made_at_once_each_keep_what_they_created(kube, api, operator, oci_registry, unique_repo):
    pushed = oci_registry.push_image(unique_repo, TAGS[0])
    oci_registry.add_tags(unique_repo, pushed.digest, TAGS[1:])
    image = f"{oci_registry.host}/{unique_repo}"

    for name in ("left", "right"):
        response = await api.post(kube.path(SOURCES), json=_source(name, image))
        assert response.status_code == 201, response.text

    await _ready_with(kube, "left", 5)
    await _ready_with(kube, "right", 5)
    await operator.settle()
    left, right = _models_of(kube, "left"), _models_of(kube, "right")  # each owned by the source its label names
    assert len(left) + len(right) == 5 and not set(left) & set(right)
    assert len(kube.list(MODELS)) == 5
