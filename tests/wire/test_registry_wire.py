"""The operator against a real registry: Debian's docker-registry on loopback (aim_testing.registry).

No fake registry client here: models read their metadata, and model sources
list tags, through the registry hook and the core's generic OCI client, with
credentials from dockerconfigjson Secrets in the emulator.
"""

from __future__ import annotations

import json

from tests.wire.conftest import eventually

MODELS = "aim.eai.amd.com/v1alpha1/aimmodels"
CLUSTER_MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
TEMPLATES = "aim.eai.amd.com/v1alpha1/aimservicetemplates"
SERVICES = "aim.eai.amd.com/v1alpha1/aimservices"
SOURCES = "aim.eai.amd.com/v1alpha1/aimclustermodelsources"
SECRETS = "v1/secrets"
NS = "reg-team"
LABELS = {
    "com.amd.aim.model.canonicalName": "org/registry-wire",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp8"},
            {"gpuModel": "MI300X", "gpuCount": 8, "metric": "throughput", "precision": "fp16"},
        ]
    ),
}


def namespaces(kube, *names):
    for name in names:
        kube.put_object(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}
        )


async def create(api, kube, resource, body):
    response = await api.post(kube.path(resource, body["metadata"].get("namespace")), json=body)
    assert response.status_code in (200, 201), response.text


def condition(obj, type_):
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == type_), None)


async def test_a_model_reads_a_multi_arch_image_from_a_basic_auth_registry_with_its_pull_secret(
    kube, api, operator, oci_registry_basic, registry_front, unique_repo
):
    namespaces(kube, NS)
    front = registry_front(oci_registry_basic)
    pushed = front.registry.push_index(unique_repo, "1.0", {"linux/amd64": LABELS, "linux/arm64": {}})
    await create(api, kube, SECRETS, front.registry.pull_secret("reg-pull", NS))
    front.clear()
    await create(
        api,
        kube,
        MODELS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMModel",
            "metadata": {"name": "from-registry", "namespace": NS},
            "spec": {"image": pushed.reference, "imagePullSecrets": [{"name": "reg-pull"}]},
        },
    )

    def with_metadata():
        model = kube.get(MODELS, NS, "from-registry")
        assert model["status"]["imageMetadata"]["model"]["canonicalName"] == "org/registry-wire"
        return model

    model = await eventually(with_metadata, timeout=15)
    assert model["status"]["resolvedImage"]["digest"] == pushed.children["linux/amd64"]
    assert model["status"]["imageMetadata"]["originalLabels"] == LABELS
    assert condition(model, "ImageMetadataReady")["status"] == "True"
    templates = await eventually(
        lambda: len(kube.list(TEMPLATES, NS, label_selector="aim.eai.amd.com/model=from-registry")) == 2
    )
    assert templates
    reads = [r for r in front.log if r.method == "GET" and r.answered == 200]
    assert len(reads) == 3 and {r.authorization for r in reads} == {"basic"}  # index, amd64 manifest, config


async def test_a_model_whose_image_is_missing_says_so_naming_registry_and_image(
    kube, api, operator, oci_registry, unique_repo
):
    namespaces(kube, NS)
    image = oci_registry.image(unique_repo, "no-such-tag")
    await create(
        api,
        kube,
        MODELS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMModel",
            "metadata": {"name": "missing", "namespace": NS},
            "spec": {"image": image},
        },
    )

    def reported():
        found = condition(kube.get(MODELS, NS, "missing"), "ImageMetadataReady")
        assert found["status"] == "False" and image in found["message"]
        return found

    found = await eventually(reported, timeout=15)
    assert oci_registry.host in found["message"]


async def test_a_service_on_a_registry_image_gets_a_model_with_metadata_and_templates(
    kube, api, operator, oci_registry, unique_repo
):
    namespaces(kube, NS)
    pushed = oci_registry.push_image(unique_repo, "2.0", labels=LABELS)
    await create(
        api,
        kube,
        SERVICES,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": "by-image", "namespace": NS},
            "spec": {"model": {"image": pushed.reference}},
        },
    )

    def model_with_metadata():
        found = [m for m in kube.list(MODELS, NS) if m["spec"]["image"] == pushed.reference]
        assert len(found) == 1
        model = found[0]
        assert model["status"]["imageMetadata"]["model"]["canonicalName"] == "org/registry-wire"
        return model

    model = await eventually(model_with_metadata, timeout=15)
    name = model["metadata"]["name"]
    await eventually(lambda: len(kube.list(TEMPLATES, NS, label_selector=f"aim.eai.amd.com/model={name}")) == 2)
    # the service waits for a Ready template (discovery runs as a Job, which no kubelet runs here)
    await eventually(
        lambda: condition(kube.get(SERVICES, NS, "by-image"), "TemplateReady")["reason"] == "TemplateNotReady"
    )


async def test_a_model_source_lists_hundreds_of_paged_tags_and_creates_the_matching_models(
    kube, api, operator, oci_registry_basic, registry_front, unique_repo
):
    namespaces(kube, "aim-system")
    front = registry_front(oci_registry_basic, page_size=100)
    pushed = front.registry.push_image(unique_repo, "0.1.0", labels=LABELS)
    oci_registry_basic.add_tags(
        unique_repo, pushed.digest, [f"0.{minor}.{patch}" for minor in range(1, 26) for patch in range(10)]
    )
    await create(api, kube, SECRETS, front.registry.pull_secret("reg-pull", "aim-system"))
    front.clear()
    await create(
        api,
        kube,
        SOURCES,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterModelSource",
            "metadata": {"name": "loopback"},
            "spec": {
                "registry": front.host,
                "imagePullSecrets": [{"name": "reg-pull"}],
                "filters": [{"image": unique_repo, "versions": [">=0.25.0"]}],
            },
        },
    )

    def created():
        models = kube.list(CLUSTER_MODELS, None, label_selector="aim.eai.amd.com/model-source=loopback")
        assert len(models) == 10
        return models

    models = await eventually(created, timeout=20)
    assert sorted(m["spec"]["image"] for m in models) == [f"{front.host}/{unique_repo}:0.25.{p}" for p in range(10)]
    pages = front.requests(r"/tags/list")
    listed = [r for r in pages if r.answered == 200]
    assert len(listed) == 3 and {r.authorization for r in listed} == {"basic"}
    source = await eventually(
        lambda: (s := kube.get(SOURCES, None, "loopback")).get("status", {}).get("lastSyncTime") and s
    )
    assert source["status"]["availableModels"] == 10
