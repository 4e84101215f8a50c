"""Pytest fixtures for registry tests (registered from the root ``conftest.py``)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

import pytest

from aim_core.plugin.providers import RegistryCredentials
from aim_testing.registry.front import RegistryFront
from aim_testing.registry.images import Registry
from aim_testing.registry.server import RegistryServer, TokenServer, find_registry_binary

USERS = {"alice": "alice-pw", "bob": "bob-pw"}
ADMIN = ("alice", USERS["alice"])
_counter = itertools.count()


def _need_binary() -> None:
    if find_registry_binary() is None:
        pytest.skip("docker-registry is not installed (./scripts/setup installs it)")


def _serving(server: RegistryServer, *, admin: bool = False) -> Iterator[Registry]:
    """A :class:`Registry` for ``server`` (as alice when ``admin``) until the fixture ends, then stop both."""
    extra = {"admin": ADMIN, "credentials": RegistryCredentials(username=ADMIN[0], password=ADMIN[1])} if admin else {}
    registry = Registry(server.url, storage=server.storage, **extra)
    try:
        yield registry
    finally:
        registry.close()
        server.stop()


@pytest.fixture(scope="session")
def oci_registry() -> Iterator[Registry]:
    """An anonymous registry: anyone may pull and push."""
    _need_binary()
    yield from _serving(RegistryServer().start())


@pytest.fixture(scope="session")
def oci_registry_basic() -> Iterator[Registry]:
    """A registry behind htpasswd Basic auth; ``.credentials`` are alice's."""
    _need_binary()
    yield from _serving(RegistryServer(auth="htpasswd", users=USERS).start(), admin=True)


@pytest.fixture(scope="session")
def registry_token_server() -> Iterator[TokenServer]:
    """The token service of :func:`oci_registry_token`; ``.requests`` logs what it was asked."""
    server = TokenServer(USERS).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def oci_registry_token(registry_token_server: TokenServer) -> Iterator[Registry]:
    """A registry using the bearer-token flow (as Docker Hub and GHCR do).

    Anonymous callers may pull anything not under ``private/``; alice and bob may
    do everything. ``.credentials`` are alice's.
    """
    _need_binary()
    yield from _serving(RegistryServer(auth="token", token_server=registry_token_server).start(), admin=True)


@pytest.fixture
def registry_front() -> Iterator[Callable[..., RegistryFront]]:
    """Factory: ``registry_front(registry, page_size=100)`` starts a :class:`RegistryFront`.

    The front's ``.registry`` is a :class:`Registry` at the front's address with
    the same credentials and storage, so pushes and reads go through it.
    """
    fronts: list[RegistryFront] = []

    def start(registry: Registry, *, page_size: int = 100) -> RegistryFront:
        front = RegistryFront(registry.url, page_size=page_size).start()
        front.registry = Registry(
            front.url, storage=registry.storage, admin=registry.admin, credentials=registry.credentials
        )
        fronts.append(front)
        return front

    yield start
    for front in fronts:
        front.registry.close()
        front.stop()


@pytest.fixture
def unique_repo(request: pytest.FixtureRequest) -> str:
    """A repository name no other test uses, e.g. ``t/test-metadata-3``."""
    name = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:60].strip("-")
    return f"t/{name}-{next(_counter)}"


@pytest.fixture
def fast_registry_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registry clients made after this back off for milliseconds and time out after 2 s."""
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_BACKOFF", "0.01")
    monkeypatch.setenv("AIM_ENGINE_REGISTRY_TIMEOUT", "2")
