"""The plugin manager and provider selection.

Plugins are found through the ``aim_engine.plugins`` entry-point group; the
entry-point name is the plugin name. The manager is built by
:func:`get_plugin_manager`, never at import time, so every caller (and every
test) gets a clean one.

Operational switches, all read when a manager is built (explicit arguments to
:func:`get_plugin_manager` win over them):

=============================  ==========================================================
``AIM_ENGINE_PLUGINS``         Comma-separated allowlist of plugin (entry-point) names.
                               Empty or unset loads every installed plugin. A name that
                               is not installed fails start-up.
``AIM_ENGINE_DISABLE_PLUGINS``  Comma-separated blocklist of plugin names, applied after
                               the allowlist. Names that are not installed are logged.
``AIM_ENGINE_TRACE_PLUGINS``   ``1`` (or ``true``/``yes``/``on``) logs every hook call,
                               the plugins it reaches and its result on the logger
                               ``aim_engine.plugins`` at INFO level.
=============================  ==========================================================

The rest of the core selects providers with :func:`providers`, :func:`select`
and :func:`registry_client` rather than calling hooks directly, so that
duplicate and unknown names fail the same way everywhere.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pluggy

from aim_core import metrics
from aim_core.plugin import hookspecs
from aim_core.plugin.benchtools import BenchmarkTool
from aim_core.plugin.providers import (
    Autoscaler,
    DoctorCheck,
    GpuVendor,
    RegistryClient,
    RouteBuilder,
    RuntimeBuilder,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENV_DISABLE",
    "ENV_PLUGINS",
    "ENV_TRACE",
    "DuplicateProviderError",
    "PluginError",
    "PluginLoadError",
    "PluginNotFoundError",
    "describe_plugins",
    "get_plugin_manager",
    "providers",
    "registry_client",
    "select",
]

ENTRY_POINT_GROUP = "aim_engine.plugins"
ENV_PLUGINS = "AIM_ENGINE_PLUGINS"
ENV_DISABLE = "AIM_ENGINE_DISABLE_PLUGINS"
ENV_TRACE = "AIM_ENGINE_TRACE_PLUGINS"

logger = logging.getLogger("aim_engine.plugins")

# The protocol each collecting provider hook returns, checked on selection.
_PROTOCOLS: Mapping[str, type] = {
    "aim_runtime_builders": RuntimeBuilder,
    "aim_route_builders": RouteBuilder,
    "aim_autoscalers": Autoscaler,
    "aim_gpu_vendors": GpuVendor,
    "aim_doctor_checks": DoctorCheck,
    "aim_benchmark_tools": BenchmarkTool,
}

_TRUE = {"1", "true", "yes", "on"}


class PluginError(Exception):
    """A plugin could not be loaded or a provider could not be selected."""


class PluginLoadError(PluginError):
    """An installed plugin failed to import or register; start-up must stop."""

    def __init__(self, message: str, *, plugin: str, distribution: str | None) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.distribution = distribution


class PluginNotFoundError(PluginError, LookupError):
    """A plugin or provider name that nothing installed provides."""


class DuplicateProviderError(PluginError):
    """Two plugins returned providers with the same name from one hook."""


# ---------------------------------------------------------------------------
# The manager
# ---------------------------------------------------------------------------


def get_plugin_manager(
    load_entrypoints: bool = True,
    only: str | Iterable[str] | None = None,
    disabled: str | Iterable[str] | None = None,
    *,
    trace: bool | None = None,
) -> pluggy.PluginManager:
    """Build a plugin manager with the hook specs added and installed plugins loaded.

    :param load_entrypoints: load plugins from the ``aim_engine.plugins``
        entry-point group; ``False`` gives an empty manager for tests that
        register plugins explicitly.
    :param only: allowlist of plugin names (a list or a comma-separated
        string); empty loads all. ``None`` reads ``AIM_ENGINE_PLUGINS``.
    :param disabled: blocklist of plugin names; ``None`` reads
        ``AIM_ENGINE_DISABLE_PLUGINS``. Blocked names also refuse later
        explicit registration.
    :param trace: log every hook call; ``None`` reads ``AIM_ENGINE_TRACE_PLUGINS``.
    :raises PluginNotFoundError: an allowlisted name is not installed.
    :raises PluginLoadError: an installed plugin failed to import or register.
    """
    allow = _names(os.environ.get(ENV_PLUGINS, "") if only is None else only)
    block = _names(os.environ.get(ENV_DISABLE, "") if disabled is None else disabled)
    if trace is None:
        trace = os.environ.get(ENV_TRACE, "").strip().lower() in _TRUE

    pm = _TimedPluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in block:
        pm.set_blocked(name)
    if trace:
        pm.add_hookcall_monitoring(_trace_before, _trace_after)
    if load_entrypoints:
        _load_entrypoints(pm, allow, block)
    return pm


class _TimedPluginManager(pluggy.PluginManager):
    """A plugin manager whose hook implementations are counted and timed per hook and plugin (docs/metrics.md)."""

    def register(self, plugin: object, name: str | None = None) -> str | None:
        plugin_name = super().register(plugin, name)
        if plugin_name is not None:  # None: a blocked name
            for caller in self.get_hookcallers(plugin) or ():
                for impl in caller.get_hookimpls():
                    if (
                        impl.plugin is plugin
                        and not (impl.hookwrapper or impl.wrapper)
                        and not getattr(impl.function, "__aim_timed__", False)
                    ):
                        impl.function = metrics.timed_hook(caller.name, plugin_name, impl.function)  # type: ignore[misc]
        return plugin_name


def _names(value: str | Iterable[str]) -> frozenset[str]:
    items = value.split(",") if isinstance(value, str) else value
    return frozenset(n.strip() for n in items if n and n.strip())


def _installed() -> dict[str, tuple[importlib.metadata.EntryPoint, importlib.metadata.Distribution]]:
    """Entry points of our group by plugin name, refusing one name from two distributions."""
    found: dict[str, tuple[importlib.metadata.EntryPoint, importlib.metadata.Distribution]] = {}
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group != ENTRY_POINT_GROUP:
                continue
            if ep.name in found:
                other = found[ep.name][1].metadata["Name"]
                if other == dist.metadata["Name"]:
                    continue  # the same distribution seen twice on sys.path
                raise PluginError(
                    f"plugin name {ep.name!r} is declared by two distributions: {other} and {dist.metadata['Name']}"
                )
            found[ep.name] = (ep, dist)
    return found


def _load_entrypoints(pm: pluggy.PluginManager, allow: frozenset[str], block: frozenset[str]) -> None:
    installed = _installed()
    unknown = sorted(allow - installed.keys())
    if unknown:
        raise PluginNotFoundError(
            "; ".join(f"plugin {name!r} not found" for name in unknown)
            + f"; is the plugin installed? (allowed by {ENV_PLUGINS}; installed: {', '.join(sorted(installed)) or 'none'})"
        )
    for name in sorted(block - installed.keys()):
        logger.warning("%s names plugin %r, which is not installed", ENV_DISABLE, name)

    for name, (ep, dist) in sorted(installed.items()):
        if (allow and name not in allow) or name in block:
            logger.debug("plugin %r not loaded (allowlist/blocklist)", name)
            continue
        label = f"{dist.metadata['Name']} {dist.version}"
        try:
            # pluggy's loader records the distribution for describe_plugins().
            pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=name)
        except Exception as exc:
            raise PluginLoadError(
                f"plugin {name!r} ({ep.value}) from distribution {label} failed to load: {type(exc).__name__}: {exc}",
                plugin=name,
                distribution=dist.metadata["Name"],
            ) from exc
        logger.debug("loaded plugin %r from %s", name, label)

    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        name = pm.get_name(exc.plugin) or repr(exc.plugin)
        dist_name = installed[name][1].metadata["Name"] if name in installed else None
        raise PluginLoadError(
            f"plugin {name!r} from distribution {dist_name} implements an unknown hook: {exc}",
            plugin=name,
            distribution=dist_name,
        ) from exc


def _trace_before(hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]) -> None:
    plugins = [impl.plugin_name for impl in hook_impls]
    logger.info("hook %s(%s) calls %s", hook_name, _kwargs(kwargs), plugins)


def _trace_after(
    outcome: pluggy.Result[Any], hook_name: str, hook_impls: Sequence[pluggy.HookImpl], kwargs: Mapping[str, object]
) -> None:
    if outcome.exception is not None:
        logger.info("hook %s(%s) raised %r", hook_name, _kwargs(kwargs), outcome.exception)
    else:
        logger.info("hook %s(%s) returned %r", hook_name, _kwargs(kwargs), outcome.get_result())


def _kwargs(kwargs: Mapping[str, object]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kwargs.items())


# ---------------------------------------------------------------------------
# Provider selection
# ---------------------------------------------------------------------------


def providers(pm: pluggy.PluginManager, hook_name: str) -> dict[str, Any]:
    """Call a collecting provider hook and return its providers by ``name``.

    Each plugin is asked separately so that a duplicate name can name both
    plugins; a provider without a string ``name`` or not matching the hook's
    protocol is refused naming its plugin.

    :raises DuplicateProviderError: two plugins returned the same name.
    :raises PluginError: a plugin returned something that is not a provider.
    """
    caller = _hook(pm, hook_name)
    impls = caller.get_hookimpls()
    owners = {impl.plugin for impl in impls}
    protocol = _PROTOCOLS.get(hook_name)
    found: dict[str, Any] = {}
    origin: dict[str, str] = {}
    # pluggy calls the last registered first; keep registration order instead.
    for impl in impls:
        only_this = pm.subset_hook_caller(hook_name, remove_plugins=owners - {impl.plugin})
        for result in only_this():
            for provider in result or ():
                name = getattr(provider, "name", None)
                if not isinstance(name, str) or not name:
                    raise PluginError(
                        f"plugin {impl.plugin_name!r} returned {provider!r} from {hook_name} without a string `name`"
                    )
                if protocol is not None and not isinstance(provider, protocol):
                    missing = ", ".join(_missing_members(provider, protocol))
                    raise PluginError(
                        f"plugin {impl.plugin_name!r} returned {name!r} from {hook_name}, "
                        f"which is not a {protocol.__name__} (missing: {missing})"
                    )
                if name in found:
                    raise DuplicateProviderError(
                        f"{_kind(hook_name)} {name!r} is provided by both plugin {origin[name]!r} "
                        f"and plugin {impl.plugin_name!r}; disable one with {ENV_DISABLE}"
                    )
                found[name] = provider
                origin[name] = impl.plugin_name
    return found


def select(pm: pluggy.PluginManager, hook_name: str, name: str) -> Any:
    """The provider called ``name`` from a collecting provider hook.

    :raises PluginNotFoundError: no plugin provides ``name``; the message lists
        the available names.
    """
    available = providers(pm, hook_name)
    try:
        return available[name]
    except KeyError:
        listed = ", ".join(sorted(available)) or "none"
        raise PluginNotFoundError(
            f"{_kind(hook_name)} {name!r} not found; is the plugin installed? (available: {listed})"
        ) from None


def registry_client(pm: pluggy.PluginManager, host: str) -> RegistryClient:
    """The client for registry ``host``, from the first plugin that handles it.

    :raises PluginNotFoundError: no plugin handles ``host``.
    """
    client = pm.hook.aim_registry_client(registry=host)
    if client is None:
        raise PluginNotFoundError(f"registry client for {host!r} not found; is the plugin installed?")
    return client


def _hook(pm: pluggy.PluginManager, hook_name: str) -> pluggy.HookCaller:
    caller = getattr(pm.hook, hook_name, None)
    if caller is None or caller.spec is None:
        raise PluginError(f"unknown hook {hook_name!r}")
    if caller.spec.opts.get("firstresult"):
        raise PluginError(f"hook {hook_name!r} is a first-result hook, not a provider collection")
    return caller


def _kind(hook_name: str) -> str:
    """``aim_gpu_vendors`` -> ``GPU vendor``, for messages."""
    words = hook_name.removeprefix("aim_").removesuffix("s").split("_")
    return " ".join("GPU" if w == "gpu" else w for w in words)


def _missing_members(obj: object, protocol: type) -> list[str]:
    members = set(getattr(protocol, "__annotations__", {}))
    members |= {k for k, v in vars(protocol).items() if callable(v) and not k.startswith("_")}
    return sorted(m for m in members if not hasattr(obj, m))


# ---------------------------------------------------------------------------
# Introspection
# ---------------------------------------------------------------------------


def describe_plugins(pm: pluggy.PluginManager) -> list[dict[str, Any]]:
    """Every registered plugin as ``{name, version, distribution, hooks}``, by name.

    Entry-point plugins report their distribution and its version; a plugin
    registered explicitly reports the distribution its module belongs to, or
    ``None`` for both when it belongs to none (a test's throwaway plugin).
    ``hooks`` are the sorted names of the hooks it implements.
    """
    dists = {id(plugin): dist for plugin, dist in pm.list_plugin_distinfo()}
    rows = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # a blocked name
            continue
        dist = dists.get(id(plugin)) or _owning_distribution(plugin)
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or ())
        rows.append(
            {
                "name": name,
                "version": dist.version if dist is not None else None,
                "distribution": dist.metadata["Name"] if dist is not None else None,
                "hooks": hooks,
            }
        )
    return sorted(rows, key=lambda row: row["name"])


def _owning_distribution(plugin: object) -> Any:
    module = getattr(plugin, "__module__", None) or getattr(plugin, "__name__", None)
    if not isinstance(module, str):
        return None
    names = importlib.metadata.packages_distributions().get(module.partition(".")[0], [])
    return importlib.metadata.distribution(names[0]) if names else None
