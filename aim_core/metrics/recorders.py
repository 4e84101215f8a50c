"""The running operator's metrics, and one-line recorders for the hot paths.

The API client, work queue, engine, registry transport and plugin hooks call
these functions (or wear these decorators); each costs a few dictionary lookups
and a histogram observation. Labels never name an object, only a controller,
kind, verb, code, host, hook or plugin. The metrics recorded into are those of
the operator the code runs in (:func:`activate`, set by ``aim_core.operator.run``
for its task tree), else a process-wide default nobody serves.
"""

from __future__ import annotations

import contextvars
import functools
import time
import urllib.parse
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from aim_core.metrics.families import Metrics

_default: Metrics | None = None
_current: contextvars.ContextVar[Metrics | None] = contextvars.ContextVar("aim_metrics", default=None)


def current() -> Metrics:
    """The metrics of the operator this code runs in (a process-wide default outside one)."""
    metrics = _current.get()
    if metrics is not None:
        return metrics
    global _default
    if _default is None:
        _default = Metrics()
    return _default


def activate(metrics: Metrics) -> contextvars.Token[Metrics | None]:
    """Make ``metrics`` the current ones for this task and every task it starts from now on."""
    return _current.set(metrics)


def deactivate(token: contextvars.Token[Metrics | None]) -> None:
    """Undo the :func:`activate` that returned ``token`` (in the same context)."""
    _current.reset(token)


def reconciled(controller: str, requeue: Any, error: BaseException | None, started: float) -> None:
    """A reconcile of ``controller`` ended: ``requeue`` as returned (``"backoff"``: retry), or ``error``."""
    current().reconciled(controller, requeue, error, time.monotonic() - started)


def timed_reconcile(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``Engine.reconcile(self, controller, namespace, name)``: count and time each reconcile."""

    @functools.wraps(fn)
    async def wrapper(self: Any, controller: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = await fn(self, controller, *args, **kwargs)
        except BaseException as exc:
            reconciled(controller.name, None, exc, started)
            raise
        reconciled(controller.name, result, None, started)
        return result

    return wrapper


def api_request(method: str, server: str, code: Any, started: float) -> None:
    """A request to the API server ``server`` (its URL) got an answer with status ``code``."""
    current().api_request(method, _host(server), code, time.monotonic() - started)


@functools.lru_cache(maxsize=64)
def _host(server: str) -> str:
    return urllib.parse.urlsplit(server).netloc or server


def api_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate ``Kube._request(self, verb, method, ...)``: count requests that got no answer as code ``<error>``."""
    from aim_core.reconcile.errors import NetworkError

    @functools.wraps(fn)
    async def wrapper(self: Any, verb: str, method: str, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            return await fn(self, verb, method, *args, **kwargs)
        except NetworkError:
            api_request(method, self.credentials.server, "<error>", started)
            raise

    return wrapper


def queue_added(queue: Any, key: Hashable) -> None:
    current().queue(queue).add(key)


def queue_started(queue: Any, key: Hashable) -> None:
    current().queue(queue).start(key)


def queue_done(queue: Any, key: Hashable) -> None:
    current().queue(queue).done(key)


def queue_retried(queue: Any, key: Hashable) -> None:
    current().queue(queue).retry(key)


def engine_started(controllers: Iterable[str], workers: int) -> None:
    """The engine runs ``workers`` workers for ``controllers``."""
    w = current().workers
    w.controllers, w.count = tuple(sorted(controllers)), workers


def leading(name: str, holding: bool) -> None:
    """Whether this replica holds the leader Lease ``name``."""
    current().leading(name, holding)


def event_sent(action: str) -> None:
    """The Event recorder sent an Event: ``create`` or ``patch`` (a repeat counted on the Event posted before)."""
    current().events_sent.labels(action).inc()


def event_coalesced() -> None:
    """The Event recorder folded an Event into an equal one waiting to be sent."""
    current().events_coalesced.inc()


def event_dropped(reason: str, n: int = 1) -> None:
    """The Event recorder dropped ``n`` Events for ``reason``."""
    if n:
        current().events_dropped.labels(reason).inc(n)


def event_queue_depth(depth: int) -> None:
    current().event_queue_depth.set(depth)


def registry_response(host: str, method: str, code: Any) -> None:
    """A registry (or its token service) answered a request with ``code``, or not at all (``"<error>"``)."""
    current().registry_requests.labels(host, method, str(code)).inc()


def registry_failure(host: str, reason: str) -> None:
    """A registry operation failed with a RegistryError of ``reason``."""
    current().registry_failures.labels(host, reason or "Unknown").inc()


def hook_called(hook: str, plugin: str, seconds: float, failed: bool) -> None:
    metrics = current()
    metrics.hook_calls.labels(hook, plugin).inc()
    metrics.hook_time.labels(hook, plugin).observe(seconds)
    if failed:
        metrics.hook_errors.labels(hook, plugin).inc()


def registry_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a registry transport's request method: count the RegistryErrors it ends in, by host and reason."""

    @functools.wraps(fn)
    async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(self, *args, **kwargs)
        except Exception as exc:
            registry_failure(
                str(getattr(exc, "registry", None) or self.registry),
                str(getattr(exc, "reason", None) or type(exc).__name__),
            )
            raise

    return wrapper


def timed_hook(hook: str, plugin: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a plugin's hook implementation), counting and timing each call."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            hook_called(hook, plugin, time.monotonic() - started, True)
            raise
        hook_called(hook, plugin, time.monotonic() - started, False)
        return result

    wrapper.__aim_timed__ = True  # type: ignore[attr-defined]
    return wrapper
