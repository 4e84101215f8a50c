"""Pytest fixtures shared by core and plugin tests.

Registered from the root ``conftest.py``, so every test under ``tests/`` and
``plugins/*/tests/`` can ask for them:

* ``kube`` -- the cluster, on two backends (test ids ``[emulator]`` and ``[apiserver]``):
  a running :class:`~aim_testing.emulator.Emulator` with the built-in, third-party and
  AIM resources declared, wrapped in :class:`Kube`; and a real kube-apiserver
  (:mod:`aim_testing.apiserver`, one per session, emptied after each test) behind the
  same facade, :class:`~aim_testing.apiserver.ApiServerKube`. The ``[apiserver]`` runs
  carry the marker ``apiserver`` (``pytest -m apiserver``) and are skipped with a reason
  when ``KUBEBUILDER_ASSETS`` names no folder with the binaries. A test (or module, via
  ``pytestmark``) marked ``@pytest.mark.emulator_only("why")`` runs on the emulator only;
  so do the paths listed in :data:`emulator_only_paths` (the root ``conftest.py`` lists
  the ones not yet checked on a real server);
* ``api`` -- an ``httpx.AsyncClient`` whose ``base_url`` is the cluster (``kube.url``);
* ``kubeconfig`` -- a kubeconfig file for the cluster, exported as ``KUBECONFIG``
  (for the kubernetes client and kopf's default login);
* ``envtest`` -- the session's real control plane and its recording proxy.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any

import aiohttp.test_utils
import attrs
import httpx
import kmock
import pytest
import pytest_asyncio
import yaml

from aim_testing import apiserver as envtest_
from aim_testing.emulator import ApiCall, Emulator, declare_resources
from aim_testing.emulator.calls import Sent

BACKENDS = ("emulator", "apiserver")
# Test id prefixes (relative to the rootdir: "tests/core/", "tests/wire/test_x.py::test_y") whose tests run
# on the emulator only, with the reason; the root conftest.py fills it. A marker on the test does the same.
emulator_only_paths: dict[str, str] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--kube-backends",
        action="store_true",
        help="collect only, then print how many tests that use the kube fixture also run on a real "
        "kube-apiserver ([apiserver]) and why each of the others runs on the emulator only",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "apiserver: the run of a test on a real kube-apiserver "
        "(the kube fixture's [apiserver] backend); select with -m apiserver",
    )
    config.addinivalue_line(
        "markers",
        "emulator_only(reason): the test uses what only the API emulator has "
        "(kmock reactions, kube.emulator); it gets no [apiserver] run",
    )
    config.addinivalue_line(
        "markers",
        "apiserver_only(reason): the test needs a real API server "
        "(e.g. its RBAC authorizer); it gets no [emulator] run",
    )


def emulator_only_reason(node: Any, path: Path, rootdir: Path) -> str | None:
    """Why a test runs on the emulator only (its marker, or its id in :data:`emulator_only_paths`)."""
    marker = node.get_closest_marker("emulator_only")
    if marker is not None:
        return str(marker.args[0] if marker.args else marker.kwargs.get("reason", "emulator only"))
    try:
        rel = path.resolve().relative_to(rootdir.resolve()).as_posix()
    except ValueError:
        return None
    test_id = f"{rel}::{node.name.split('[')[0]}"
    for prefix, reason in emulator_only_paths.items():
        if test_id.startswith(prefix) and (prefix.endswith(("/", ".py")) or test_id == prefix):
            return reason
    return None


def backend_report(items: list[pytest.Item], rootdir: Path) -> str:
    """The share of tests using ``kube`` that carry an ``[apiserver]`` run (``pytest --kube-backends``).

    Counted per test function (parametrised variants are one test): in ``*_wire.py`` files, and in all
    files outside the emulator's own tests (``tests/testing/``). The emulator-only ones follow with their reason.
    """
    backends: dict[str, set[str]] = {}
    reasons: dict[str, str] = {}
    for item in items:
        if "kube" not in getattr(item, "fixturenames", ()):
            continue
        test = item.nodeid.split("[")[0]
        backends.setdefault(test, set()).add("apiserver" if item.get_closest_marker("apiserver") else "emulator")
        reason = emulator_only_reason(item, item.path, rootdir)
        if reason is not None:
            reasons[test] = reason

    def share(selected: list[str]) -> str:
        real = sum(1 for test in selected if "apiserver" in backends[test])
        percent = 100 * real / len(selected) if selected else 0.0
        return f"{real} of {len(selected)} ({percent:.0f}%)"

    outside = [t for t in backends if not t.startswith("tests/testing/")]
    wire = [t for t in outside if t.split("::")[0].endswith("_wire.py")]
    runs = sum(1 for item in items if item.get_closest_marker("apiserver"))
    lines = [
        f"tests with an [apiserver] run: {share(wire)} in *_wire.py files; "
        f"{share(outside)} of all tests using the kube fixture outside tests/testing/; {runs} [apiserver] runs",
        "emulator only:",
    ]
    by_reason: dict[str, list[str]] = {}
    for test in sorted(t for t in outside if "apiserver" not in backends[t]):
        by_reason.setdefault(reasons.get(test, "?"), []).append(test)
    for reason, tests in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(tests)}: {reason}")
        lines += [f"      {test}" for test in tests]
    return "\n".join(lines)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("kube_backends", False):
        return
    report = backend_report(items, config.rootpath)
    config.hook.pytest_deselected(items=list(items))
    items[:] = []
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line("")
        for line in report.splitlines():
            terminal.write_line(line)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that uses ``kube`` on both backends, unless it is emulator-only."""
    if "kube" not in metafunc.fixturenames:
        return
    on_apiserver = pytest.param("apiserver", id="apiserver", marks=pytest.mark.apiserver)
    if metafunc.definition.get_closest_marker("apiserver_only") is not None:
        metafunc.parametrize("kube", [on_apiserver], indirect=True)
        return
    if emulator_only_reason(metafunc.definition, metafunc.definition.path, metafunc.config.rootpath) is not None:
        return  # one run, on the emulator, with its id unchanged
    metafunc.parametrize("kube", [pytest.param("emulator", id="emulator"), on_apiserver], indirect=True)


@functools.cache
def aim_crds() -> tuple[dict[str, Any], ...]:
    """The operator's own CRDs, generated from the models once per session (read-only)."""
    from aim_core.api.crds import generate_crds  # lazily: the models are a big import

    return tuple(generate_crds())


@attrs.define
class Kube:
    """The emulator as tests see it: read objects and events, count calls, seed objects.

    ``resource`` arguments accept a key (``"v1/pods"``, ``"aim.eai.amd.com/v1alpha1/aimservices"``)
    or a plural, kind or short name (``"aimservices"``, ``"AIMService"``). Everything of kmock
    stays reachable: ``kube.emulator.objects[...]`` for histories, ``kube[...] << 500`` for
    injected failures (a reaction that answers a write also prevents it).
    """

    emulator: Emulator
    backend = "emulator"
    token = "emulator"  # the bearer token clients send (the emulator takes any)

    def __repr__(self) -> str:
        # Short: a failing assertion on ``kube.get(...)`` shows this repr (see Storage.__repr__).
        return f"<Kube on the emulator at {self.url}>"

    @property
    def url(self) -> str:
        """The base URL of the API server, e.g. ``http://127.0.0.1:41234``."""
        return str(self.emulator.url).rstrip("/")

    def path(
        self, resource: str, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The URL path of a collection, object or subresource, e.g. ``/api/v1/namespaces/ns/pods/p/log``."""
        res = self.emulator.resolve(resource)
        parts = ["/api" if not res.group else f"/apis/{res.group}", res.version]
        if namespace is not None and self.emulator.namespaced(res):
            parts += ["namespaces", namespace]
        parts += [res.plural, name, subresource]
        return "/".join(part for part in parts if part)

    def put_object(self, body: Mapping[str, Any], *, resource: str | None = None) -> dict[str, Any]:
        """Seed an object as is (status kept), with uid and resourceVersion; watchers see it."""
        return self.emulator.put_object(body, resource=resource)

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The current object, or None if it does not exist."""
        return self.emulator.get_object(resource, namespace, name)

    def list(
        self, resource: str, namespace: str | None = None, *, label_selector: str | None = None
    ) -> list[dict[str, Any]]:
        """The current objects (all namespaces if ``namespace`` is None), sorted by namespace and name."""
        return self.emulator.list_objects(resource, namespace, label_selector=label_selector)

    def events_for(self, name: str, namespace: str | None = None) -> list[dict[str, Any]]:
        """Events whose involvedObject/regarding has this name, oldest first."""
        return self.emulator.events_for(name, namespace)

    def set_log(self, namespace: str, pod: str, text: str) -> None:
        """What ``GET .../pods/<pod>/log`` returns."""
        self.emulator.logs[namespace, pod] = text

    @property
    def calls(self) -> list[ApiCall]:
        """Every request so far, classified (verb, resource, namespace, name, subresource, manager, agent)."""
        return self.emulator.calls

    def mark(self) -> int:
        """A position in :attr:`calls` to count from: ``n = kube.mark(); ...; kube.count(since=n)``."""
        return len(self.emulator.calls)

    def count(self, *verbs: str, resource: str | None = None, agent: str | None = None, since: int = 0) -> int:
        """Count calls by verb ("get", "apply", ...; "read" = get/list/watch; "write" = the rest).

        ``resource`` is a key ("v1/pods") or a plural ("pods"); ``agent`` a user-agent prefix
        ("kopf" for the operator, "python-httpx" for the ``api`` fixture). Discovery requests
        count only when asked for with the verb "discovery".
        """
        return self.emulator.count(*verbs, resource=resource, agent=agent, since=since)

    def reads(self, since: int = 0, agent: str | None = None) -> int:
        return self.count("read", agent=agent, since=since)

    def writes(self, since: int = 0, agent: str | None = None) -> int:
        return self.count("write", agent=agent, since=since)

    # ------------------------------------------------------------------ authentication

    def accept_tokens(self, tokens: Iterable[str], *, wait: bool = True) -> None:
        """From now on only these bearer tokens are accepted; any other is answered 401 (revoked, expired)."""
        self.emulator.tokens = set(tokens)

    def set_users(self, users: Mapping[str, Mapping[str, Any]]) -> None:
        """TokenReviews: token -> the user it authenticates (``username``, ``groups``, ``uid``)."""
        self.emulator.users = {token: dict(user) for token, user in users.items()}

    def unauthorized(self) -> int:
        """How many requests were answered 401 Unauthorized."""
        return self.emulator.refused

    def sent(self, since: int = 0) -> list[Sent]:
        """The requests since :meth:`mark` ``since`` as they were sent: method, path, ``Authorization``."""
        return [
            Sent(r.method.value, r.url.path, r.headers.get("Authorization", ""))
            for r in self.emulator._requests[since:]  # noqa: SLF001 - kmock's request log
        ]

    def __getitem__(self, criteria: Any) -> Any:
        return self.emulator[criteria]


class _QuickServer(aiohttp.test_utils.RawTestServer):
    """aiohttp's test server, but it waits only briefly for open requests when stopping.

    Watch requests whose client went away stay blocked until an event arrives;
    the default 60-second shutdown grace would make every test teardown wait.
    """

    async def _make_runner(self, **kwargs: Any) -> Any:
        runner = await super()._make_runner(**kwargs)
        runner._shutdown_timeout = 0.5
        return runner


@pytest.fixture(scope="session")
def envtest() -> Any:
    """The session's real control plane (etcd, kube-apiserver, kube-controller-manager) and its proxy."""
    reason = envtest_.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    plane = envtest_.ControlPlane(envtest_.assets()).start()
    try:
        proxy = envtest_.RecordingProxy(plane).start()
    except BaseException:
        plane.stop()
        raise
    yield plane, proxy
    proxy.stop()
    plane.stop()


@pytest_asyncio.fixture()
async def kube(request: pytest.FixtureRequest) -> AsyncIterator[Kube | envtest_.ApiServerKube]:
    """The cluster: the API emulator, or (param "apiserver") the session's real API server, emptied afterwards."""
    if getattr(request, "param", "emulator") == "apiserver":
        plane, proxy = request.getfixturevalue("envtest")
        proxy.reset()
        cluster = envtest_.ApiServerKube(plane, proxy)
        try:
            yield cluster
        finally:
            for refused in cluster.refused(400, 403, 409, 422, 500):  # shown with a failure: why nothing happened
                logging.getLogger("aim_testing.apiserver").warning(
                    "refused: %s %s %s -> %s %s",
                    refused["headers"].get("User-Agent", ""),
                    refused["method"],
                    refused["path"],
                    refused["status"],
                    refused.get("error", "")[:500],
                )
            if plane.tokens is not None:
                plane.tokens.reset()
            plane.reset()
        return
    emulator = declare_resources(Emulator(), crds=aim_crds())
    async with emulator, kmock.Server(emulator, server_cls=_QuickServer):
        yield Kube(emulator)


@pytest_asyncio.fixture()
async def api(kube: Kube) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the cluster: ``await api.get("/api/v1/namespaces/ns/pods")``."""
    async with httpx.AsyncClient(base_url=kube.url, timeout=10) as client:
        yield client


@pytest.fixture()
def kubeconfig(kube: Kube, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kubeconfig naming the cluster (``kube.url``), exported as ``KUBECONFIG`` for this test."""
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "emulator",
                "clusters": [{"name": "emulator", "cluster": {"server": kube.url}}],
                "users": [{"name": "emulator", "user": {"token": kube.token}}],
                "contexts": [
                    {"name": "emulator", "context": {"cluster": "emulator", "user": "emulator", "namespace": "default"}}
                ],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(path))
    return path
