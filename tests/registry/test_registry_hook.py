"""Which client talks to which host: the aim_registry_client hook with the core's OCI client last."""

from aim_core import ImageInfo, ImageReference, hookimpl
from aim_core.plugin.manager import describe_plugins, get_plugin_manager, registry_client
from aim_core.registry import fetch_image_info, list_tags
from aim_core.registry.oci import OciRegistryClient


class Mirror:
    name = "mirror"

    async def image_info(self, image, credentials):
        return ImageInfo(digest="sha256:" + "1" * 64, labels={"from": "mirror"})

    async def list_tags(self, repository, credentials):
        return ["mirrored"]

    async def list_repositories(self, pattern, credentials):
        return []


class MirrorPlugin:
    @hookimpl
    def aim_registry_client(self, registry):
        return Mirror() if registry == "mirror.example.com" else None


def test_the_generic_oci_client_is_installed_from_the_core_entry_point():
    pm = get_plugin_manager(only=["registry_oci"], disabled=())
    [row] = describe_plugins(pm)
    assert (row["name"], row["distribution"]) == ("registry_oci", "aim-engine")
    assert "aim_registry_client" in row["hooks"]
    client = registry_client(pm, "quay.io")
    assert isinstance(client, OciRegistryClient) and client.transport.base_url == "https://quay.io"
    assert registry_client(pm, "127.0.0.1:5000").transport.base_url == "http://127.0.0.1:5000"


async def test_a_third_party_registry_plugin_is_picked_for_its_host(oci_registry, unique_repo):
    pm = get_plugin_manager(only=["registry_oci"], disabled=())
    pm.register(MirrorPlugin(), name="mirror")
    info = await fetch_image_info(pm, ImageReference.parse("mirror.example.com/org/model:1"), None)
    assert info.labels == {"from": "mirror"}
    assert await list_tags(pm, "mirror.example.com", "org/model", None) == ["mirrored"]
    # every other host still goes to the generic client, which reads the real registry
    pushed = oci_registry.push_image(unique_repo, "1.0", labels={"from": "registry"})
    assert (await fetch_image_info(pm, ImageReference.parse(pushed.reference), None)).labels == {"from": "registry"}
