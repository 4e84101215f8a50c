"""Tags and repositories: paging by Link, hundreds of tags, catalog wildcards, failures mid-listing."""

import pytest

from aim_core import RegistryError
from aim_core.registry import list_repositories, list_tags


def many(n):
    return [f"0.{i // 100}.{i % 100}" for i in range(n)]


async def test_hundreds_of_tags_come_back_whole_and_sorted(plugins, oci_registry, unique_repo):
    pushed = oci_registry.push_image(unique_repo, "latest")
    oci_registry.add_tags(unique_repo, pushed.digest, many(750))
    assert await list_tags(plugins, oci_registry.host, unique_repo, None) == sorted([*many(750), "latest"])


async def test_paging_follows_link_headers_to_the_end(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry, page_size=100)
    pushed = front.registry.push_image(unique_repo, "latest")
    oci_registry.add_tags(unique_repo, pushed.digest, many(349))
    front.clear()
    tags = await list_tags(plugins, front.host, unique_repo, None)
    assert tags == sorted([*many(349), "latest"])
    pages = front.requests("/tags/list")
    assert len(pages) == 4
    assert "last=" not in pages[0].path and all("last=" in p.path for p in pages[1:])


async def test_a_registry_refusing_our_page_size_is_asked_without_one(
    plugins, oci_registry, registry_front, unique_repo
):
    front = registry_front(oci_registry, page_size=50)
    pushed = front.registry.push_image(unique_repo, "latest")
    oci_registry.add_tags(unique_repo, pushed.digest, many(120))
    front.clear()
    front.fail(
        r"/tags/list\?n=1000", 400, body={"errors": [{"code": "PAGINATION_NUMBER_INVALID", "message": "n too big"}]}
    )
    assert len(await list_tags(plugins, front.host, unique_repo, None)) == 121
    assert [r.answered for r in front.requests("/tags/list")] == [400, 200, 200, 200]


async def test_a_failure_mid_listing_is_retried_from_that_page(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry, page_size=100)
    pushed = front.registry.push_image(unique_repo, "latest")
    oci_registry.add_tags(unique_repo, pushed.digest, many(250))
    front.clear()
    front.fail(r"/tags/list\?n=100&last=", 503)
    assert len(await list_tags(plugins, front.host, unique_repo, None)) == 251
    assert [r.answered for r in front.requests("/tags/list")] == [200, 503, 200, 200]


async def test_a_failure_mid_listing_that_lasts_fails_the_listing(plugins, oci_registry, registry_front, unique_repo):
    front = registry_front(oci_registry, page_size=100)
    pushed = front.registry.push_image(unique_repo, "latest")
    oci_registry.add_tags(unique_repo, pushed.digest, many(250))
    front.fail(r"/tags/list\?n=100&last=", 502, times=100)
    with pytest.raises(RegistryError) as info:
        await list_tags(plugins, front.host, unique_repo, None)
    assert (info.value.kind, info.value.status) == ("unavailable", 502)
    assert unique_repo in str(info.value) and front.host in str(info.value)


async def test_tags_of_an_unknown_repository_are_not_found(plugins, oci_registry, unique_repo):
    with pytest.raises(RegistryError) as info:
        await list_tags(plugins, oci_registry.host, unique_repo, None)
    assert (info.value.kind, info.value.reason) == ("not_found", "ImageNotFound")
    assert "NAME_UNKNOWN" in str(info.value)


async def test_catalog_wildcards_match_anchored_with_paging(plugins, oci_registry, registry_front, unique_repo):
    for suffix in ("aim-llama", "aim-mistral", "other", "aim-x/nested"):
        oci_registry.push_image(f"{unique_repo}/{suffix}", "1")
    front = registry_front(oci_registry)
    # the registry pages _catalog natively; a small page size makes it take several pages
    from aim_core.registry import facade

    facade.client_for(plugins, front.host).page_size = 2
    found = await list_repositories(plugins, front.host, f"{unique_repo}/aim-*", None)
    assert found == [f"{unique_repo}/aim-llama", f"{unique_repo}/aim-mistral", f"{unique_repo}/aim-x/nested"]
    assert len(front.requests("/v2/_catalog")) >= 3
    assert await list_repositories(plugins, front.host, f"{unique_repo}/oth*", None) == [f"{unique_repo}/other"]
    assert await list_repositories(plugins, front.host, "nothing-matches-*", None) == []
