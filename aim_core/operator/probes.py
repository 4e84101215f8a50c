"""The operator's HTTP endpoints: ``/metrics``, ``/healthz`` and ``/readyz``.

As in controller-runtime, metrics and health probes listen on addresses of
their own (``--metrics-bind-address``, default ``:8080``;
``--health-probe-bind-address``, default ``:8081``; ``0`` turns either off).
Both run on the operator's event loop (aiohttp, already there through kopf),
so an answer from ``/healthz`` means the loop runs. ``/readyz`` answers 200
only when the plugin set is loaded, the CRDs of ``aim.eai.amd.com`` are
Established and serve the version this operator speaks, and the first full
listing has filled the cache; otherwise 503 with one line per missing piece.
``/healthz`` answers 500 once the API server has refused the operator's
credentials (401) for :data:`AUTH_REFUSED_SECONDS`, although they were read
again after the first refusal (:class:`aim_core.kube.credentials.Authenticator`):
a restart is what can help then, and a failing liveness probe is what restarts.
No request is logged (the access log is off).

With ``--metrics-secure`` (the default of ``aim-engine run``, as upstream's) ``/metrics`` is served
over HTTPS to authenticated and authorized clients only (:mod:`aim_core.operator.secure`);
``--metrics-secure=false`` serves it over plain HTTP to anyone who can reach the port.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import attrs
from aiohttp import web

from aim_core import metrics as metering
from aim_core.metrics.certwatcher import CertWatcher
from aim_core.operator import secure
from aim_core.reconcile.resources import AIM_RESOURCES, CUSTOM_RESOURCE_DEFINITIONS

log = logging.getLogger("aim_engine.probes")


class EndpointError(Exception):
    """An endpoint cannot be served (e.g. its port is taken); the message says which flag to change."""


# /healthz fails once every answer of the API server has been 401 for this long although the credentials
# were read again (with the chart's probe, 20 s x 3 failures, the container restarts about 2 minutes in).
AUTH_REFUSED_SECONDS = 60.0

# How often the CRDs are read: until they are all Established, and after.
CRD_POLL_UNREADY = 2.0
INSTALL_HINT = "install the CRDs with `kubectl apply -f aim_core/crds/aim.eai.amd.com_crds.yaml` (or the chart's crds/)"


def parse_bind_address(text: str | None) -> tuple[str | None, int] | None:
    """``":8080"`` -> (None, 8080) (all interfaces), ``"127.0.0.1:0"`` -> ("127.0.0.1", 0), ``"0"``/empty -> None."""
    text = (text or "").strip()
    if text in ("", "0"):
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address {text!r} is not HOST:PORT or :PORT (0 turns it off)")
    host = host.strip("[]")
    return (host or None, int(port))


def crd_name(ref: Any) -> str:
    return f"{ref.plural}.{ref.group}"


def crd_problem(ref: Any, crd: dict[str, Any] | None) -> str | None:
    """What keeps the CRD of ``ref`` from serving this operator, or None."""
    name = crd_name(ref)
    if crd is None:
        return f"CRD {name} is not installed"
    versions = {v.get("name"): v for v in (crd.get("spec") or {}).get("versions") or ()}
    version = ref.version
    if not (versions.get(version) or {}).get("served", False):
        served = sorted(v for v, info in versions.items() if info.get("served"))
        return f"CRD {name} does not serve {version} (served: {', '.join(served) or 'none'})"
    for c in (crd.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Established":
            if c.get("status") == "True":
                return None
            return f"CRD {name} is not Established: {c.get('reason') or ''} {c.get('message') or ''}".rstrip()
    return f"CRD {name} is not Established yet"


@attrs.define
class Readiness:
    """What ``/readyz`` reports; each part is set by whoever knows it."""

    plugins_loaded: bool = False
    plugin_error: str | None = None
    crd_problems: list[str] = attrs.field(factory=lambda: ["CRDs of aim.eai.amd.com not read yet"])
    synced: Callable[[], bool] = lambda: False
    auth_refused: Callable[[], float | None] = lambda: None  # seconds the API server has refused fresh credentials
    # the API client of /metrics' reviews once logged in: one without the leader-only write guard, on its own
    # connections (aim_core.operator.secure)
    client: Callable[[], Any] = lambda: None

    def liveness_problem(self) -> str | None:
        refused = self.auth_refused()
        if refused is None or refused < AUTH_REFUSED_SECONDS:
            return None
        return (
            f"the API server has refused the operator's credentials for {refused:.0f} s "
            "(401 Unauthorized, also after reading them again): check the ServiceAccount token, "
            "the kubeconfig's tokenFile or its exec plugin"
        )

    def problems(self) -> list[str]:
        found = []
        if self.plugin_error:
            found.append(f"plugins failed to load: {self.plugin_error}")
        elif not self.plugins_loaded:
            found.append("plugins are not loaded yet")
        found += self.crd_problems
        if not self.synced():
            found.append("the initial listing of watched resources has not finished")
        return found

    async def watch_crds(self, client: Callable[[], Any]) -> None:
        """Read the AIM CRDs until all are Established, keeping the findings for ``/readyz``.

        Then it stops: a ready operator sends no request for readiness (CRDs are not deleted
        under a running operator in practice, and its watches report an API that goes away).
        """
        while True:
            kube = client()
            if kube is not None:
                try:
                    # One by one, in this task: kopf re-raises the errors of tasks started after it at exit.
                    found = []
                    for ref in AIM_RESOURCES:
                        crd = await kube.get(CUSTOM_RESOURCE_DEFINITIONS, None, crd_name(ref))
                        if problem := crd_problem(ref, crd):
                            found.append(problem)
                except Exception as exc:  # noqa: BLE001 - reported by /readyz; read again soon
                    found = [f"the CRDs of aim.eai.amd.com cannot be read: {exc}"]
                if any("not installed" in p for p in found):
                    found.append(INSTALL_HINT)
                if found != self.crd_problems:
                    if found:
                        log.warning("not ready: %s", "; ".join(found))
                    else:
                        log.info("the CRDs of aim.eai.amd.com are Established")
                self.crd_problems = found
                if not found:
                    return
            if kube is None:
                await asyncio.sleep(0.1)  # not logged in yet: look as soon as the client is there
            else:
                await asyncio.sleep(CRD_POLL_UNREADY)


class Endpoints:
    """The metrics and health servers of one operator run."""

    def __init__(
        self,
        metrics: metering.Metrics,
        readiness: Readiness,
        *,
        metrics_address: str | None,
        probe_address: str | None,
        liveness_url: str | None = None,
        metrics_secure: bool = False,
        cert_dir: str | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
    ) -> None:
        self.metrics = metrics
        self.metrics_secure = metrics_secure
        self._cert = (cert_dir, cert_name, key_name)
        self._gate = secure.Gate(lambda: self.readiness.client()) if metrics_secure else None
        self.readiness = readiness
        self._runners: list[web.AppRunner] = []
        self.addresses: dict[str, tuple[str, int]] = {}  # "metrics"/"probes" -> bound (host, port)
        self.certwatcher: CertWatcher | None = None  # reloads --metrics-cert-path's pair when it changes
        self._metrics_bind = parse_bind_address(metrics_address)
        self._probe_bind = parse_bind_address(probe_address)
        self._liveness_path = "/healthz"
        if liveness_url:  # the older --liveness URL: its host and port win, its path is served as well
            url = urlsplit(liveness_url)
            self._probe_bind = (url.hostname or None, url.port or 80)
            self._liveness_path = url.path or "/healthz"

    async def start(self) -> None:
        probes = web.Application()
        probes.router.add_get("/healthz", self._healthz)
        if self._liveness_path != "/healthz":
            probes.router.add_get(self._liveness_path, self._healthz)
        probes.router.add_get("/readyz", self._readyz)
        served = web.Application()
        served.router.add_get("/metrics", self._metrics)
        same = self._metrics_bind is not None and self._metrics_bind == self._probe_bind
        if same and self.metrics_secure and self._metrics_bind[1] == 0:
            same = False  # two free ports, one HTTPS, one plain
        if same:
            if self.metrics_secure:
                raise EndpointError(
                    "with --metrics-secure, /metrics needs a port of its own (HTTPS; the probes "
                    "stay plain HTTP): change --metrics-bind-address or --health-probe-bind-address, "
                    "or serve plain HTTP with --metrics-secure=false"
                )
            probes.router.add_get("/metrics", self._metrics)  # one port for both
            await self._serve("probes", probes, self._probe_bind)
            self.addresses["metrics"] = self.addresses["probes"]
            return
        if self._metrics_bind is not None:
            await self._serve("metrics", served, self._metrics_bind)
        if self._probe_bind is not None:
            await self._serve("probes", probes, self._probe_bind)

    async def _serve(self, what: str, app: web.Application, bind: tuple[str | None, int]) -> None:
        tls = None
        if what == "metrics" and self.metrics_secure:
            try:
                tls, watcher = await asyncio.to_thread(secure.serving_context, *self._cert)
            except RuntimeError as exc:  # the self-signed certificate could not be made
                raise EndpointError(f"{exc}; or give one with --metrics-cert-path") from None
            except (OSError, ssl.SSLError, ValueError) as exc:
                raise EndpointError(
                    f"cannot load the metrics certificate from {self._cert[0]}: {exc}; check "
                    "--metrics-cert-path, --metrics-cert-name and --metrics-cert-key"
                ) from None
            if watcher is not None:
                watcher.start()
                self.certwatcher = watcher
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        self._runners.append(runner)
        site = web.TCPSite(runner, host=bind[0], port=bind[1], reuse_address=True, ssl_context=tls)
        try:
            await site.start()
        except OSError as exc:
            flag = "--metrics-bind-address" if what == "metrics" else "--health-probe-bind-address"
            served = "/metrics" if what == "metrics" else "/healthz and /readyz"
            raise EndpointError(
                f"cannot serve {served} on {bind[0] or '*'}:{bind[1]}: {exc.strerror or exc}; "
                f"choose a free port with {flag} (0 turns it off)"
            ) from None
        sockets = [s for s in (getattr(site._server, "sockets", None) or ())]  # noqa: SLF001 - the bound port
        host, port = sockets[0].getsockname()[:2] if sockets else (bind[0] or "0.0.0.0", bind[1])
        self.addresses[what] = (host, port)
        log.info(
            "serving %s on %s:%s%s",
            "/metrics" if what == "metrics" else "/healthz and /readyz",
            host,
            port,
            " (HTTPS, authenticated and authorized)" if tls is not None else "",
        )

    async def stop(self) -> None:
        if self.certwatcher is not None:
            await self.certwatcher.stop()
        for runner in reversed(self._runners):
            await runner.cleanup()
        self._runners.clear()

    async def _healthz(self, request: web.Request) -> web.Response:
        problem = self.readiness.liveness_problem()
        if problem:
            return web.Response(status=500, text=f"unhealthy: {problem}\n")
        return web.Response(text="ok\n")

    async def _readyz(self, request: web.Request) -> web.Response:
        problems = self.readiness.problems()
        if problems:
            return web.Response(status=503, text="not ready:\n" + "".join(f"- {p}\n" for p in problems))
        return web.Response(text="ok\n")

    async def _metrics(self, request: web.Request) -> web.Response:
        if self._gate is not None:
            status, why = await self._gate.check(
                request.headers.get("Authorization"), request.method.lower(), request.path
            )
            if status != 200:
                return web.Response(status=status, text=why + "\n")
        body = self.metrics.exposition()
        return web.Response(body=body, headers={"Content-Type": metering.CONTENT_TYPE})
