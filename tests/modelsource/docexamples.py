"""Every AIMClusterModelSource of the model-sources document, a registry catalog that holds
matching images, and the AIMClusterModel images each example must produce.

Used by the table tests (against an in-memory catalog) and by the wire tests (the same
catalog pushed into a real registry on loopback).
"""

from __future__ import annotations

import copy
from typing import Any

API = "aim.eai.amd.com/v1alpha1"

QWEN = "amdenterpriseai/aim-qwen-qwen3-32b"
DEEPSEEK = "amdenterpriseai/aim-deepseek-deepseek-r1"
GEMMA = "silogen/aim-google-gemma-3-1b-it"

# What the registries hold (tags per repository).
CATALOG: dict[str, dict[str, list[str]]] = {
    "docker.io": {
        QWEN: ["0.7.0", "0.8.4", "0.8.5", "0.9.0-rc1", "1.0.0", "latest", "dev"],
        DEEPSEEK: ["0.8.4", "0.8.5", "latest"],
        "amdenterpriseai/aim-base": ["0.8.5"],
        "amdenterpriseai/aim-experimental": ["0.9.0"],
        "org/model-a": ["1.0.0"],
        "org/model-b": ["1.0.0"],
    },
    "ghcr.io": {
        QWEN: ["0.7.9", "0.8.0", "0.8.4", "0.8.5", "0.9.1", "1.0.0", "1.1.0-rc1", "latest"],
        DEEPSEEK: ["0.7.0", "0.8.1-rc1", "0.8.5", "v0.9.0", "1.0.0-rc1", "1.0.0", "nightly"],
        GEMMA: ["0.8.0", "0.8.1-rc1"],
    },
    "private.registry.io": {
        "myorg/model-a": ["0.9.0", "1.0.0", "1.2.0", "latest"],
        "myorg/model-b": ["1.0.0-rc1", "1.0.0", "2.0.0"],
        "myorg/private-model": ["1.0.0"],
    },
}


def source(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "AIMClusterModelSource",
        "metadata": {"name": name, "uid": f"uid-{name}", "generation": 1},
        "spec": copy.deepcopy(spec),
    }


def _ghcr(repo: str, *tags: str) -> list[str]:
    return [f"ghcr.io/{repo}:{t}" for t in tags]


# (source, images of the models it creates). Names follow the document's headings.
EXAMPLES: list[tuple[dict[str, Any], set[str]]] = [
    # "Basic Example"
    (
        source("amd-models", {"images": [f"{QWEN}:0.8.5", f"{DEEPSEEK}:0.8.5"], "syncInterval": "1h"}),
        {f"{QWEN}:0.8.5", f"{DEEPSEEK}:0.8.5"},
    ),
    # "images (recommended)": a Docker Hub image and a full GHCR reference
    (
        source("images-recommended", {"images": [f"{QWEN}:0.8.5", f"ghcr.io/{GEMMA}:0.8.1-rc1"]}),
        {f"{QWEN}:0.8.5", f"ghcr.io/{GEMMA}:0.8.1-rc1"},
    ),
    # "filters (advanced)": per-filter versions, and a full reference with a tag
    (
        source(
            "filters-advanced",
            {"filters": [{"image": QWEN, "versions": [">=0.8.5"]}, {"image": f"ghcr.io/{GEMMA}:0.8.1-rc1"}]},
        ),
        {f"{QWEN}:0.8.5", f"{QWEN}:0.9.0-rc1", f"{QWEN}:1.0.0", f"ghcr.io/{GEMMA}:0.8.1-rc1"},
    ),
    # "Global Version Constraints"
    (
        source(
            "global-versions", {"registry": "ghcr.io", "images": [QWEN, DEEPSEEK], "versions": [">=0.8.0", "<1.0.0"]}
        ),
        set(
            _ghcr(QWEN, "0.8.0", "0.8.4", "0.8.5", "0.9.1")
            + _ghcr(DEEPSEEK, "0.8.1-rc1", "0.8.5", "v0.9.0", "1.0.0-rc1")
        ),
    ),
    # "Per-Filter Version Constraints"
    (
        source(
            "per-filter-versions",
            {
                "registry": "ghcr.io",
                "versions": [">=0.8.0"],
                "filters": [{"image": QWEN, "versions": [">=0.8.5"]}, {"image": DEEPSEEK}],
            },
        ),
        set(
            _ghcr(QWEN, "0.8.5", "0.9.1", "1.0.0", "1.1.0-rc1")
            + _ghcr(DEEPSEEK, "0.8.1-rc1", "0.8.5", "v0.9.0", "1.0.0-rc1", "1.0.0")
        ),
    ),
    # "Version Syntax": prereleases included from 0.8.1-rc1 on
    (
        source(
            "prerelease-versions", {"registry": "ghcr.io", "filters": [{"image": GEMMA, "versions": [">=0.8.1-rc1"]}]}
        ),
        set(_ghcr(GEMMA, "0.8.1-rc1")),
    ),
    # "Exclusions": exact repository names; the excluded ones are not the filter's anyway
    (
        source(
            "exclusions",
            {"filters": [{"image": QWEN, "exclude": ["amdenterpriseai/aim-base", "amdenterpriseai/aim-experimental"]}]},
        ),
        {f"{QWEN}:{t}" for t in CATALOG["docker.io"][QWEN]},
    ),
    # "Max Models Limit"
    (
        source("max-models", {"maxModels": 100, "images": ["org/model-a:1.0.0", "org/model-b:1.0.0"]}),
        {"org/model-a:1.0.0", "org/model-b:1.0.0"},
    ),
    # "Docker Hub with Explicit Images"
    (
        source(
            "dockerhub-models",
            {"registry": "docker.io", "images": [f"{QWEN}:0.8.5", f"{DEEPSEEK}:0.8.5"], "syncInterval": "2h"},
        ),
        {f"{QWEN}:0.8.5", f"{DEEPSEEK}:0.8.5"},
    ),
    # "GitHub Container Registry with Version Constraints"
    (
        source(
            "ghcr-stable-models",
            {
                "registry": "ghcr.io",
                "images": [QWEN, DEEPSEEK],
                "versions": [">=0.8.0", "<1.0.0"],
                "syncInterval": "1h",
            },
        ),
        set(
            _ghcr(QWEN, "0.8.0", "0.8.4", "0.8.5", "0.9.1")
            + _ghcr(DEEPSEEK, "0.8.1-rc1", "0.8.5", "v0.9.0", "1.0.0-rc1")
        ),
    ),
    # "Multiple Registries (advanced filters)": no constraints, so every tag, latest included
    (
        source(
            "multi-registry-models",
            {
                "registry": "docker.io",
                "filters": [{"image": QWEN}, {"image": f"ghcr.io/{DEEPSEEK}"}],
                "syncInterval": "1h",
            },
        ),
        {f"{QWEN}:{t}" for t in CATALOG["docker.io"][QWEN]} | set(_ghcr(DEEPSEEK, *CATALOG["ghcr.io"][DEEPSEEK])),
    ),
    # "Private Registry with Authentication"
    (
        source(
            "private-models",
            {
                "registry": "private.registry.io",
                "imagePullSecrets": [{"name": "private-registry-creds"}],
                "images": ["myorg/model-a", "myorg/model-b"],
                "versions": [">=1.0.0"],
                "syncInterval": "1h",
            },
        ),
        {
            "private.registry.io/myorg/model-a:1.0.0",
            "private.registry.io/myorg/model-a:1.2.0",
            "private.registry.io/myorg/model-b:1.0.0",
            "private.registry.io/myorg/model-b:2.0.0",
        },
    ),
    # "Private Registries" (the GHCR-flavoured one in the configuration section)
    (
        source(
            "private-single",
            {
                "registry": "private.registry.io",
                "imagePullSecrets": [{"name": "private-registry-creds"}],
                "images": ["myorg/private-model:1.0.0"],
            },
        ),
        {"private.registry.io/myorg/private-model:1.0.0"},
    ),
    # "Specific Versions Only": explicit tags, no listing at all
    (
        source(
            "specific-versions",
            {
                "registry": "ghcr.io",
                "filters": [{"image": f"{QWEN}:0.8.5"}, {"image": f"{QWEN}:0.8.4"}, {"image": f"{DEEPSEEK}:0.8.5"}],
                "syncInterval": "6h",
            },
        ),
        set(_ghcr(QWEN, "0.8.5", "0.8.4") + _ghcr(DEEPSEEK, "0.8.5")),
    ),
]


def example(name: str) -> tuple[dict[str, Any], set[str]]:
    return next((copy.deepcopy(s), set(i)) for s, i in EXAMPLES if s["metadata"]["name"] == name)


class MemoryCatalog:
    """A catalog answering from :data:`CATALOG` (or another), counting requests."""

    def __init__(
        self, catalog: dict[str, dict[str, list[str]]] | None = None, fail: dict[str, Exception] | None = None
    ):
        self.catalog = catalog if catalog is not None else CATALOG
        self.fail = fail or {}
        self.requests: list[tuple[str, str, str]] = []

    def _check(self, registry: str, what: str) -> None:
        for key in (f"{registry}/{what}", registry):
            if key in self.fail:
                raise self.fail[key]

    async def list_tags(self, registry, repository, credentials):
        self.requests.append(("tags", registry, repository))
        self._check(registry, repository)
        repos = self.catalog.get(registry, {})
        if repository not in repos:
            raise FakeRegistryError("not_found", f"repository {repository} not found on {registry}")
        return list(repos[repository])

    async def list_repositories(self, registry, pattern, credentials):
        self.requests.append(("repositories", registry, pattern))
        self._check(registry, pattern)
        return sorted(self.catalog.get(registry, {}))


class FakeRegistryError(Exception):
    """Shaped like the registry layer's RegistryError (kind, retry_after)."""

    def __init__(self, kind: str, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
