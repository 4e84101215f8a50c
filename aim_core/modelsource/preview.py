"""``aim-engine tags``: what one model-source entry would match, through the controller's own code."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aim_core.modelsource.observed import SelectorResult
from aim_core.modelsource.plan import order_matches
from aim_core.modelsource.selectors import Selector, parse_selectors
from aim_core.modelsource.sync import sync_selectors
from aim_core.plugin.providers import RegistryCredentials

__all__ = ["format_preview", "preview"]


def _docker_config_secret(path: str) -> dict[str, Any]:
    """A docker config file (``~/.docker/config.json``) shaped like the Secret the operator would read."""
    raw = Path(path).read_bytes()
    return {"metadata": {"name": path}, "data": {".dockerconfigjson": base64.b64encode(raw).decode()}}


async def preview(
    plugins: Any,
    image: str,
    *,
    registry: str | None = None,
    versions: Sequence[str] = (),
    exclude: Sequence[str] = (),
    docker_config: str | None = None,
    on_request: Callable[[str], None] | None = None,
) -> tuple[Selector, SelectorResult]:
    """List and match one ``spec.filters`` entry as the controller would.

    :param on_request: called with what is about to be listed (``tags of docker.io/org/repo``), for progress.
    """
    from aim_core.modelsource.runner import RegistryCatalog
    from aim_core.registry import close_clients, credentials_for

    spec: dict[str, Any] = {"filters": [{"image": image, "versions": list(versions), "exclude": list(exclude)}]}
    if registry:
        spec["registry"] = registry
    [selector] = parse_selectors(spec)
    secrets = [_docker_config_secret(docker_config)] if docker_config else []

    def credentials(host: str) -> RegistryCredentials | None:
        return credentials_for(host, secrets)

    try:
        catalog: Any = RegistryCatalog(plugins)
        if on_request is not None:
            catalog = _Reporting(catalog, on_request)
        [result] = await sync_selectors([selector], catalog, credentials)
    finally:
        await close_clients(plugins)
    return selector, result


class _Reporting:
    """A registry catalog that says what it lists before listing it."""

    def __init__(self, catalog: Any, report: Callable[[str], None]) -> None:
        self.catalog, self.report = catalog, report

    async def list_tags(self, registry: str, repository: str, credentials: RegistryCredentials | None) -> list[str]:
        self.report(f"tags of {registry}/{repository}")
        return await self.catalog.list_tags(registry, repository, credentials)

    async def list_repositories(
        self, registry: str, pattern: str, credentials: RegistryCredentials | None
    ) -> list[str]:
        self.report(f"repositories {registry}/{pattern}")
        return await self.catalog.list_repositories(registry, pattern, credentials)


def format_preview(selector: Selector, result: SelectorResult, *, as_json: bool = False) -> str:
    images = [m.image for m in order_matches(result.matches)]
    failures = [f"{f.reason}: {f.message}" for f in result.failures]
    if as_json:
        return (
            json.dumps(
                {
                    "registry": selector.registry,
                    "repository": selector.repository,
                    "tag": selector.tag,
                    "versions": list(selector.constraints.texts),
                    "exclude": sorted(selector.exclude),
                    "strategy": selector.strategy,
                    "images": images,
                    "failures": failures,
                },
                indent=2,
            )
            + "\n"
        )
    return "".join(f"{image}\n" for image in images)
