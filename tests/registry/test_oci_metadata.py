"""Image metadata read from a real registry on loopback: manifests, indexes, config labels, caching."""

import pytest

from aim_core import ImageReference, RegistryError
from aim_core.registry import fetch_image_info

AIM_LABELS = {
    "org.amd.silogen.model.canonicalName": "meta-llama/Llama-3.1-8B-Instruct",
    "org.amd.silogen.model.deployments": '[{"gpuModel": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}]',
    "org.opencontainers.image.version": "0.8.4",
}


def ref(text):
    return ImageReference.parse(text)


@pytest.mark.parametrize("docker", [False, True], ids=["oci", "docker-v2"])
async def test_labels_of_a_single_image(plugins, oci_registry, unique_repo, docker):
    pushed = oci_registry.push_image(unique_repo, "0.8.4", labels=AIM_LABELS, docker=docker)
    info = await fetch_image_info(plugins, ref(pushed.reference), None)
    assert info.labels == AIM_LABELS
    assert (info.digest, info.config_digest, info.index_digest) == (pushed.digest, pushed.config_digest, None)
    assert (info.os, info.architecture, info.created) == ("linux", "amd64", "2025-01-01T00:00:00Z")


async def test_an_image_without_labels_has_empty_labels(plugins, oci_registry, unique_repo):
    pushed = oci_registry.push_image(unique_repo, "plain", labels=None)
    assert (await fetch_image_info(plugins, ref(pushed.reference), None)).labels == {}


@pytest.mark.parametrize("docker", [False, True], ids=["oci-index", "docker-manifest-list"])
async def test_a_multi_arch_index_resolves_to_linux_amd64(plugins, oci_registry, unique_repo, docker):
    pushed = oci_registry.push_index(
        unique_repo,
        "multi",
        {"linux/arm64": {"platform": "arm"}, "linux/amd64": {"platform": "amd"}, "linux/ppc64le": {"platform": "ppc"}},
        docker=docker,
        attestation=True,
    )
    info = await fetch_image_info(plugins, ref(pushed.reference), None)
    assert info.labels == {"platform": "amd"}
    assert (info.digest, info.index_digest, info.architecture) == (
        pushed.children["linux/amd64"],
        pushed.digest,
        "amd64",
    )


async def test_an_index_without_linux_amd64_names_the_platforms_it_has(plugins, oci_registry, unique_repo):
    pushed = oci_registry.push_index(unique_repo, "armonly", {"linux/arm64": {}, "linux/arm/v7": {}})
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(pushed.reference), None)
    error = info.value
    assert (error.kind, error.reason, error.permanent) == ("invalid", "PlatformNotFound", True)
    assert "linux/arm/v7, linux/arm64" in str(error) and oci_registry.host in str(error)


async def test_a_digest_reference_reads_that_exact_image(plugins, oci_registry, unique_repo):
    old = oci_registry.push_image(unique_repo, "moving", labels={"v": "1"})
    oci_registry.push_image(unique_repo, "moving", labels={"v": "2"})
    pinned = f"{oci_registry.host}/{unique_repo}@{old.digest}"
    assert (await fetch_image_info(plugins, ref(pinned), None)).labels == {"v": "1"}
    assert (await fetch_image_info(plugins, ref(oci_registry.image(unique_repo, "moving")), None)).labels == {"v": "2"}


@pytest.mark.parametrize("what", ["tag", "repository"])
async def test_a_missing_image_is_not_found_naming_registry_and_image(plugins, oci_registry, unique_repo, what):
    oci_registry.push_image(unique_repo, "exists")
    image = oci_registry.image(unique_repo if what == "tag" else unique_repo + "-nope", "missing")
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, ref(image), None)
    error = info.value
    assert (error.kind, error.reason, error.status, error.permanent) == ("not_found", "ImageNotFound", 404, True)
    assert image in str(error) and error.image == image and error.registry == oci_registry.host


async def test_cold_metadata_takes_at_most_three_requests_and_warm_reads_are_cheap(
    plugins, oci_registry, unique_repo, registry_front
):
    front = registry_front(oci_registry)
    pushed = front.registry.push_index(unique_repo, "1.0", {"linux/amd64": {"a": "1"}, "linux/arm64": {"a": "2"}})
    front.clear()
    image = ref(pushed.reference)
    await fetch_image_info(plugins, image, None)
    assert [r.method for r in front.log] == ["GET", "GET", "GET"]  # index, amd64 manifest, config
    front.clear()
    assert (await fetch_image_info(plugins, image, None)).labels == {"a": "1"}
    assert [(r.method, "/manifests/1.0" in r.path) for r in front.log] == [("HEAD", True)]  # unchanged tag: one HEAD
    front.clear()
    await fetch_image_info(plugins, image.with_digest(pushed.digest), None)
    assert front.log == []  # a digest already read: no request at all


async def test_a_moved_tag_is_read_again(plugins, oci_registry, unique_repo):
    oci_registry.push_image(unique_repo, "1.0", labels={"v": "1"})
    image = ref(oci_registry.image(unique_repo, "1.0"))
    assert (await fetch_image_info(plugins, image, None)).labels == {"v": "1"}
    oci_registry.push_image(unique_repo, "1.0", labels={"v": "2"})
    assert (await fetch_image_info(plugins, image, None)).labels == {"v": "2"}
