"""``aim-engine run``: start kopf and the reconcile engine side by side."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable
from typing import Any

import kopf

from aim_core.controllers import build_controllers
from aim_core.operator import handlers
from aim_core.operator.runtime import Runtime
from aim_core.operator.settings import Settings, operator_namespace
from aim_core.plugins import get_plugin_manager

log = logging.getLogger("aim_engine.operator")


def settings_from_args(args: argparse.Namespace) -> Settings:
    return Settings(
        namespaces=tuple(args.namespace or ()),
        operator_namespace=operator_namespace(args.operator_namespace),
        workers=args.workers,
        leader_election=bool(args.leader_elect),
        liveness=args.liveness,
    )


def _configure_kopf(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.enabled = False  # we post our own Events, per condition change (F14)
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.networking.error_backoffs = [1, 2, 5, 10, 20]


async def operate(
    settings: Settings,
    *,
    plugins: Any = None,
    login_override: Callable[..., kopf.ConnectionInfo] | None = None,
    stop_flag: asyncio.Event | None = None,
    ready_flag: asyncio.Event | None = None,
) -> Runtime:
    """Run the operator until ``stop_flag`` is set (or forever). Returns the runtime when stopped."""
    plugins = plugins if plugins is not None else get_plugin_manager()
    runtime = Runtime(settings, build_controllers(plugins), plugins)
    registry = handlers.build_registry(runtime.watched())
    kopf.on.startup(registry=registry, id="configure")(_configure_kopf)
    memo = kopf.Memo(runtime=runtime, login_override=login_override)
    kopf_task = asyncio.create_task(
        kopf.operator(
            registry=registry,
            memo=memo,
            clusterwide=not settings.namespaces,
            namespaces=list(settings.namespaces),
            standalone=True,
            liveness_endpoint=settings.liveness,
            stop_flag=stop_flag,
            ready_flag=ready_flag,
        )
    )
    engine_task = asyncio.create_task(runtime.run_engine())
    done, _ = await asyncio.wait({kopf_task, engine_task}, return_when=asyncio.FIRST_COMPLETED)
    for task in (kopf_task, engine_task):
        if task not in done:
            task.cancel()
    await asyncio.gather(kopf_task, engine_task, return_exceptions=True)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return runtime


def run(args: argparse.Namespace) -> int:
    kopf.configure(
        verbose=bool(args.verbose),
        log_format=kopf.LogFormat.JSON if args.log_format == "json" else kopf.LogFormat.PLAIN,
    )
    settings = settings_from_args(args)
    log.info("starting aim-engine; operator namespace %s; namespaces %s", settings.operator_namespace,
             ",".join(settings.namespaces) or "all")
    get_plugin_manager()  # fail fast, naming a broken plugin, before touching the cluster
    try:
        asyncio.run(operate(settings))
    except KeyboardInterrupt:
        return 130
    return 0
