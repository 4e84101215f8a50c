"""Run the real operator (kopf + engine) against the cluster of the ``kube`` fixture (emulator or real API server)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import kopf
import pytest
import pytest_asyncio

from aim_core.operator.run import operate
from aim_core.operator.settings import Settings
from aim_testing.proxy import Proxy


class Operator:
    """The operator in a thread of its own (kopf cancels every task started after it, so it gets its own loop)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.runtime: Any = None
        self.endpoints: Any = None  # the /metrics, /healthz, /readyz servers (aim_core.operator.probes.Endpoints)
        self.error: BaseException | None = None
        self.thread: threading.Thread | None = None

    def start(self, settings: Settings, server: str, plugins: Any = None, token: str | None = None) -> None:
        login = lambda **_: kopf.ConnectionInfo(server=server, insecure=True, token=token)  # noqa: E731

        def main() -> None:
            try:
                self.runtime = asyncio.run(
                    operate(
                        settings,
                        login_override=login,
                        stop_flag=self.stop,
                        ready_flag=self.ready,
                        on_runtime=self._keep,
                        plugins=plugins,
                        on_endpoints=self._keep_endpoints,
                    )
                )
            except BaseException as exc:  # noqa: BLE001 - reported by the fixture
                self.error = exc

        self.thread = threading.Thread(target=main, name="aim-operator", daemon=True)
        self.thread.start()

    def _keep(self, runtime: Any) -> None:
        self.runtime = runtime
        self.loop = asyncio.get_running_loop()

    def _keep_endpoints(self, endpoints: Any) -> None:
        self.endpoints = endpoints

    def url(self, what: str, path: str) -> str:
        """The URL of ``path`` on the bound "metrics" or "probes" address (the settings must turn it on)."""
        host, port = self.endpoints.addresses[what]
        return f"http://{host}:{port}{path}"

    def requeue_all(self) -> None:
        """Make the engine reconcile every object it knows again (from the operator's own thread)."""
        self.loop.call_soon_threadsafe(self.runtime.engine.enqueue_all)

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait until the engine has nothing queued or running, and its Events are sent."""
        future = asyncio.run_coroutine_threadsafe(self.runtime.engine.idle(timeout=timeout), self.loop)
        await asyncio.wrap_future(future)


@pytest.fixture()
def operator_settings() -> Settings:
    """What the ``operator`` fixture runs with; override it in a test module to change scope or workers."""
    return Settings(operator_namespace="aim-system", workers=4)


def ensure_namespace(kube: Any, name: str | None) -> None:
    """The namespace exists (the operator's own one always does where it is deployed; a real API server
    refuses to create in a namespace that does not, e.g. the discovery lock's Lease)."""
    if name and kube.get("v1/namespaces", None, name) is None:
        kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


@pytest.fixture()
def operator_plugins() -> Any:
    """The plugin manager the ``operator`` fixture runs with; None: the installed plugins.

    Override it in a test module to add a throwaway plugin (e.g. a registry client).
    """
    return None


@pytest.fixture()
def operator_token(kube) -> str:
    """The bearer token the ``operator`` fixture sends; override it to run as another user (RBAC tests)."""
    return kube.token


@pytest_asyncio.fixture()
async def operator(kube, operator_settings, operator_plugins, operator_token) -> AsyncIterator[Operator]:
    """The real operator (kopf + engine) running against ``kube`` until the test ends."""
    ensure_namespace(kube, operator_settings.operator_namespace)
    op = Operator()
    op.start(operator_settings, kube.url, operator_plugins, token=operator_token)
    deadline = time.monotonic() + 10
    while not (op.ready.is_set() and op.runtime is not None and op.runtime.ready.is_set()):
        assert op.error is None, op.error
        assert time.monotonic() < deadline, "operator did not start"
        await asyncio.sleep(0.02)
    yield op
    op.stop.set()
    while op.thread.is_alive():
        await asyncio.sleep(0.05)
    assert op.error is None, op.error
    # Stored objects are read-only: equal values are shared between objects (aim_core.runtime.store.compact).
    assert op.runtime.store.damaged_shares() == [], "a reader modified a shared stored value"


@pytest_asyncio.fixture()
async def proxy(kube) -> AsyncIterator[Proxy]:
    """A proxy in front of ``kube`` that a test can take away and bring back (:class:`aim_testing.proxy.Proxy`)."""
    async with Proxy(kube.url) as proxy:
        yield proxy


@pytest_asyncio.fixture()
async def behind_proxy(kube, proxy, operator_settings) -> AsyncIterator[Operator]:
    """The operator, as the ``operator`` fixture runs it, talking to the API server through ``proxy``."""
    ensure_namespace(kube, operator_settings.operator_namespace)
    op = Operator()
    op.start(operator_settings, proxy.url, token=kube.token)
    deadline = time.monotonic() + 10
    while not (op.ready.is_set() and op.runtime is not None and op.runtime.ready.is_set()):
        assert op.error is None, op.error
        assert time.monotonic() < deadline, "operator did not start"
        await asyncio.sleep(0.02)
    yield op
    op.stop.set()
    while op.thread is not None and op.thread.is_alive():
        await asyncio.sleep(0.05)
    assert op.error is None, op.error


async def eventually(check: Callable[[], Any], timeout: float = 8.0, interval: float = 0.05) -> Any:
    """Poll ``check`` until it returns something truthy without raising; fail with its last error."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            result = check()
            if result:
                return result
        except (AssertionError, KeyError, TypeError, IndexError) as exc:
            last = exc
        await asyncio.sleep(interval)
    if last is not None:
        raise last
    raise AssertionError("condition not met in time")
