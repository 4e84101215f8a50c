"""``aim-engine run``: start kopf and the reconcile engine side by side."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import kopf

from aim_core import metrics as metering
from aim_core.operator import collection, handlers, logs
from aim_core.operator.controllers import build_controllers
from aim_core.operator.probes import EndpointError, Endpoints, Readiness
from aim_core.operator.settings import (
    ENDPOINT_PICKER_IMAGE_ENV,
    ERROR_BACKOFFS,
    Settings,
    gpu_preference,
    operator_namespace,
)
from aim_core.operator.wiring import Runtime
from aim_core.plugin.manager import get_plugin_manager
from aim_core.runtime.leader import default_identity

log = logging.getLogger("aim_engine.operator")


def settings_from_args(args: argparse.Namespace) -> Settings:
    return Settings(
        namespaces=tuple(args.namespace or ()),
        operator_namespace=operator_namespace(args.operator_namespace),
        workers=args.workers,
        leader_election=bool(args.leader_elect),
        lease_duration=getattr(args, "leader_elect_lease_duration", 15.0),
        renew_deadline=getattr(args, "leader_elect_renew_deadline", 10.0),
        retry_period=getattr(args, "leader_elect_retry_period", 2.0),
        liveness=args.liveness,
        resync_seconds=args.resync_seconds,
        gpu_preference=gpu_preference(args.gpu_preference),
        artifact_download_image=getattr(args, "artifact_download_image", None),
        endpoint_picker_image=getattr(args, "endpoint_picker_image", None),
        metrics_bind_address=getattr(args, "metrics_bind_address", "0"),
        health_probe_bind_address=getattr(args, "health_probe_bind_address", "0"),
        metrics_secure=getattr(args, "metrics_secure", False),
        metrics_cert_path=getattr(args, "metrics_cert_path", None) or None,
        metrics_cert_name=getattr(args, "metrics_cert_name", "tls.crt"),
        metrics_cert_key=getattr(args, "metrics_cert_key", "tls.key"),
        kubeconfig=getattr(args, "kubeconfig", None),
        context=getattr(args, "context", None),
    )


def _configure_kopf(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False  # we post our own Events, per condition change (F14)
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.networking.error_backoffs = ERROR_BACKOFFS


async def operate(
    settings: Settings,
    *,
    plugins: Any = None,
    login_override: Callable[..., kopf.ConnectionInfo] | None = None,
    stop_flag: Any = None,
    ready_flag: Any = None,
    on_runtime: Callable[[Runtime], None] | None = None,
    on_endpoints: Callable[[Endpoints], None] | None = None,
) -> Runtime:
    """Run the operator until ``stop_flag`` is set (or forever). Returns the runtime when stopped."""
    if settings.endpoint_picker_image:
        # The route builder (a plugin) reads the picker image where a user would set it.
        os.environ[ENDPOINT_PICKER_IMAGE_ENV] = settings.endpoint_picker_image
    logs.quiet_http_clients()  # one line per request is DEBUG, whoever set up logging
    metrics = metering.Metrics()
    metering.activate(metrics)  # this task and every task it starts record here
    readiness = Readiness()
    endpoints = Endpoints(
        metrics,
        readiness,
        metrics_address=settings.metrics_bind_address,
        probe_address=settings.health_probe_bind_address,
        liveness_url=settings.liveness,
        metrics_secure=settings.metrics_secure,
        cert_dir=settings.metrics_cert_path,
        cert_name=settings.metrics_cert_name,
        key_name=settings.metrics_cert_key,
    )
    await endpoints.start()  # /healthz answers while the plugins load; /readyz says what is missing
    if on_endpoints is not None:
        on_endpoints(endpoints)
    try:
        return await _operate(
            settings,
            metrics,
            readiness,
            plugins=plugins,
            login_override=login_override,
            stop_flag=stop_flag,
            ready_flag=ready_flag,
            on_runtime=on_runtime,
        )
    finally:
        await endpoints.stop()


async def _operate(
    settings: Settings,
    metrics: metering.Metrics,
    readiness: Readiness,
    *,
    plugins: Any,
    login_override: Any,
    stop_flag: Any,
    ready_flag: Any,
    on_runtime: Any,
) -> Runtime:
    if plugins is None:
        try:
            plugins = await asyncio.to_thread(get_plugin_manager)
        except Exception as exc:
            readiness.plugin_error = str(exc)
            raise
    runtime = Runtime(settings, build_controllers(plugins, settings), plugins)
    readiness.plugins_loaded = True
    readiness.synced = runtime.ready.is_set
    readiness.auth_refused = lambda: runtime.ctx.kube.auth.refused_for() if runtime.ctx.kube is not None else None
    readiness.client = lambda: runtime.review_kube  # reviews of /metrics requests: not the engine's client
    metrics.watch_store(runtime.store, {c.resource: None for c in runtime.engine.controllers.values()})
    metrics.controllers_started(runtime.engine.controllers)
    if on_runtime is not None:
        on_runtime(runtime)
    registry = handlers.build_registry()
    kopf.on.startup(registry=registry, id="configure")(_configure_kopf)
    memo = kopf.Memo(runtime=runtime, login_override=login_override)
    crds_task = asyncio.create_task(readiness.watch_crds(lambda: runtime.ctx.kube))  # for /readyz
    signals_task = None
    if stop_flag is None and threading.current_thread() is threading.main_thread():
        # SIGTERM stops the engine at once, beside kopf: the leader's work stops and its lease is released
        # while kopf winds down, so a standby takes over in about one retry period.
        stop_flag, kopf_ready = asyncio.Event(), asyncio.Event()
        signals_task = asyncio.create_task(_take_signals(stop_flag, kopf_ready, ready_flag))
        ready_flag = kopf_ready
    kopf_task = asyncio.create_task(
        kopf.operator(
            registry=registry,
            memo=memo,
            clusterwide=not settings.namespaces,
            namespaces=list(settings.namespaces),
            standalone=True,
            # kopf would otherwise name us after getpass.getuser(), which raises for a uid with no
            # passwd entry, as in images run under an arbitrary uid (restricted namespaces, OpenShift).
            identity=default_identity(),
            stop_flag=stop_flag,
            ready_flag=ready_flag,
        )
    )
    engine_task = asyncio.create_task(_until_stopped(runtime.run_engine(), stop_flag))
    done, _ = await asyncio.wait({kopf_task, engine_task}, return_when=asyncio.FIRST_COMPLETED)
    if _flag_set(stop_flag) and not {kopf_task, engine_task} <= done:
        # Both see the same stop flag; give each the time for its cleanup: kopf closes its session, the
        # engine sends the Events still waiting (up to aim_core.runtime.recorder.FLUSH_TIMEOUT).
        more, _ = await asyncio.wait({kopf_task, engine_task} - done, timeout=10)
        done = done | more
    crds_task.cancel()
    if signals_task is not None:
        signals_task.cancel()
    for task in (kopf_task, engine_task):
        if task not in done:
            task.cancel()
    await asyncio.gather(kopf_task, engine_task, crds_task, return_exceptions=True)
    await runtime.aclose()
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return runtime


async def _take_signals(stop: asyncio.Event, kopf_ready: asyncio.Event, ready_flag: Any) -> None:
    """Once kopf has started (and set its own signal handlers), SIGTERM and SIGINT set ``stop``: kopf and the
    engine both wait for it, so the engine does not wait for kopf's shutdown to begin its own."""
    await kopf_ready.wait()
    if isinstance(ready_flag, (asyncio.Event, threading.Event)):
        ready_flag.set()
    elif ready_flag is not None and not ready_flag.done():
        ready_flag.set_result(None)
    loop = asyncio.get_running_loop()

    def received(sig: signal.Signals) -> None:
        log.info("signal %s received: stopping", sig.name)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, received, sig)


def _flag_set(flag: Any) -> bool:
    if flag is None:
        return False
    if isinstance(flag, (asyncio.Event, threading.Event)):
        return flag.is_set()
    return bool(flag.done())


async def _wait_flag(flag: Any) -> None:
    if flag is None:
        await asyncio.Event().wait()
    elif isinstance(flag, asyncio.Event):
        await flag.wait()
    elif isinstance(flag, asyncio.Future):
        await asyncio.shield(flag)
    elif isinstance(flag, threading.Event):
        while not flag.is_set():
            await asyncio.sleep(0.05)
    else:  # concurrent.futures.Future
        await asyncio.wrap_future(flag)


async def _until_stopped(work: Coroutine[Any, Any, None], stop_flag: Any) -> None:
    """Run ``work`` until it ends or the stop flag is set, so it stops before kopf sweeps its tasks."""
    work_task = asyncio.create_task(work)
    stop_task = asyncio.create_task(_wait_flag(stop_flag))
    done, pending = await asyncio.wait({work_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    if work_task in done:
        work_task.result()


def run(args: argparse.Namespace) -> int:
    try:
        level = logs.resolve_level(args.log_level, verbose=bool(args.verbose))
    except ValueError as exc:
        raise SystemExit(f"aim-engine: {exc}") from None
    logs.configure(level, args.log_format)
    logs.install(ERROR_BACKOFFS)  # kopf's retried requests: one WARNING each, not an ERROR
    collection.configure()  # full garbage collections when idle, not on every quarter of heap growth
    settings = settings_from_args(args)
    log.info(
        "starting aim-engine; operator namespace %s; namespaces %s; log level %s",
        settings.operator_namespace,
        ",".join(settings.namespaces) or "all",
        logging.getLevelName(level).lower(),
    )
    try:
        asyncio.run(operate(settings))  # loads the plugins (failing fast, naming a broken one) before the cluster
    except KeyboardInterrupt:
        return 130
    except EndpointError as exc:
        log.error("%s", exc)
        return 1
    return 0
