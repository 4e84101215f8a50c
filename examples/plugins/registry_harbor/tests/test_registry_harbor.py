"""The Harbor example, installed and loaded through its entry point, serves the core's registry facade.

Images and tags come from Debian's docker-registry on loopback with bearer-token
auth (what Harbor's registry does); the project API is a local server following
Harbor's contract (``/api/v2.0/projects/<p>/repositories``, ``page``/``page_size``,
``Link`` with ``rel="next"``, Basic auth, 404 for an unknown project). The
plugin's base URLs come from its environment.
"""

from __future__ import annotations

import base64
import math
from urllib.parse import quote

import pytest

from aim_core import ImageReference, RegistryCredentials, RegistryError
from aim_core.modelsource.preview import preview
from aim_core.plugin.manager import describe_plugins, get_plugin_manager, registry_client
from aim_core.registry import fetch_image_info, list_repositories, list_tags
from aim_testing.registry import JsonApi

HOST = "harbor.test"
ROBOT = RegistryCredentials(username="robot$aim-sync", password="s3cret-robot-token")


class FakeHarbor:
    """Harbor's repository listing for a few projects; ``private`` needs the robot account."""

    def __init__(self, projects):
        self.projects = projects
        self.api = JsonApi(self.route)

    def route(self, request):
        parts = request.path.strip("/").split("/")
        if parts[:3] != ["api", "v2.0", "projects"] or len(parts) != 5 or parts[4] != "repositories":
            return 404, {}, {"errors": [{"code": "NOT_FOUND", "message": "not found"}]}
        project = parts[3]
        if project not in self.projects:
            return 404, {}, {"errors": [{"code": "NOT_FOUND", "message": f"project {project} not found"}]}
        expected = "Basic " + base64.b64encode(f"{ROBOT.username}:{ROBOT.password}".encode()).decode()
        if project == "private" and request.authorization != expected:
            return 401, {}, {"errors": [{"code": "UNAUTHORIZED", "message": "unauthorized"}]}
        names = self.projects[project]
        size = min(int(request.query.get("page_size", 10)), 100)
        page = int(request.query.get("page", 1))
        headers = {"X-Total-Count": str(len(names))}
        if page < math.ceil(len(names) / size):
            headers["Link"] = (
                f'</api/v2.0/projects/{quote(project)}/repositories?page={page + 1}&page_size={size}>; rel="next"'
            )
        body = [
            {"id": i, "name": f"{project}/{n}", "artifact_count": 1}
            for i, n in enumerate(names[(page - 1) * size : page * size])
        ]
        return 200, headers, body


@pytest.fixture
def harbor(monkeypatch, example_plugins, oci_registry_token, fast_registry_retries):
    fake = FakeHarbor(
        {"aim": [f"aim-model-{i:03}" for i in range(150)] + ["tools", "team/aim-nested"], "private": ["aim-secret"]}
    )
    fake.api.start()
    monkeypatch.setenv("AIM_EXAMPLE_HARBOR_HOST", HOST)
    monkeypatch.setenv("AIM_EXAMPLE_HARBOR_URL", f"http://{oci_registry_token.host}")
    monkeypatch.setenv("AIM_EXAMPLE_HARBOR_API_URL", fake.api.url)
    yield fake
    fake.api.stop()


@pytest.fixture
def plugins(harbor):
    return get_plugin_manager()  # everything installed, the example included: the real precedence


def test_the_installed_plugin_answers_its_host_only(plugins):
    row = next(r for r in describe_plugins(plugins) if r["name"] == "registry_harbor")
    assert (row["distribution"], row["hooks"]) == ("aim-engine-example-registry-harbor", ["aim_registry_client"])

    assert registry_client(plugins, HOST).name == "harbor"
    assert registry_client(plugins, "ghcr.io").name == "ghcr"
    assert registry_client(plugins, "quay.io").name == "oci"


async def test_image_metadata_and_tags_through_the_token_service(plugins, oci_registry_token, unique_repo):
    repo = f"aim/{unique_repo}"
    pushed = oci_registry_token.push_image(repo, "1.0.0", labels={"com.amd.aim.model.canonicalName": "org/model"})
    oci_registry_token.tag(repo, "1.0.0", ["1.1.0", "latest"])

    info = await fetch_image_info(plugins, ImageReference.parse(f"{HOST}/{repo}:1.0.0"), None)
    tags = await list_tags(plugins, HOST, repo, None)

    assert (info.digest, info.labels) == (pushed.digest, {"com.amd.aim.model.canonicalName": "org/model"})
    assert tags == ["1.0.0", "1.1.0", "latest"]


async def test_a_private_image_needs_the_pull_secret(plugins, oci_registry_token, unique_repo):
    repo = f"private/{unique_repo}"
    oci_registry_token.push_image(repo, "1.0", labels={"private": "yes"})
    image = ImageReference.parse(f"{HOST}/{repo}:1.0")

    assert (await fetch_image_info(plugins, image, oci_registry_token.credentials)).labels == {"private": "yes"}
    with pytest.raises(RegistryError) as info:
        await fetch_image_info(plugins, image, None)
    assert (info.value.kind, info.value.registry) == ("auth", HOST)


async def test_project_wildcards_walk_every_page_of_the_project_api(plugins, harbor):
    found = await list_repositories(plugins, HOST, "aim/aim-model-*", None)

    assert found == [f"aim/aim-model-{i:03}" for i in range(150)]
    assert [r.query.get("page") for r in harbor.api.requests] == ["1", "2"]
    assert harbor.api.requests[0].query["page_size"] == "100"
    assert await list_repositories(plugins, HOST, "aim/team/*", None) == ["aim/team/aim-nested"]


async def test_a_private_project_is_listed_with_the_robot_account_and_refused_without(plugins, harbor):
    assert await list_repositories(plugins, HOST, "private/*", ROBOT) == ["private/aim-secret"]

    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, HOST, "private/*", None)
    assert (info.value.kind, info.value.status) == ("auth", 401)
    with pytest.raises(RegistryError) as info:
        await list_repositories(
            plugins, HOST, "private/*", RegistryCredentials(username="robot$x", password="wrong-pw")
        )
    assert "wrong-pw" not in str(info.value)


async def test_unknown_projects_and_wildcard_projects_have_their_own_reasons(plugins, harbor):
    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, HOST, "nothing/*", None)
    assert (info.value.kind, info.value.reason) == ("not_found", "RepositoryNotFound")

    with pytest.raises(RegistryError) as info:
        await list_repositories(plugins, HOST, "*/aim-*", None)
    assert (info.value.kind, info.value.reason) == ("invalid", "InvalidRepositoryPattern")
    assert len(harbor.api.requests) == 1  # the wildcard project was refused before asking


async def test_a_model_source_wildcard_matches_tags_across_the_project(
    plugins, harbor, oci_registry_token, unique_repo
):
    """What `aim-engine tags harbor.test/catalog/<prefix>-*` prints: the model-source controller's own matching."""
    prefix = unique_repo.split("/", 1)[1]
    harbor.projects["catalog"] = [f"{prefix}-llama", f"{prefix}-qwen", "tools"]
    for name in harbor.projects["catalog"][:2]:
        pushed = oci_registry_token.push_image(f"catalog/{name}", "0.9.0")
        oci_registry_token.add_tags(f"catalog/{name}", pushed.digest, ["1.0.0", "1.2.0", "dev"])

    selector, result = await preview(plugins, f"{HOST}/catalog/{prefix}-*", versions=[">=1.0.0"])

    assert result.failures == ()
    assert sorted(m.image for m in result.matches) == [
        f"{HOST}/catalog/{prefix}-{model}:{tag}" for model in ("llama", "qwen") for tag in ("1.0.0", "1.2.0")
    ]
