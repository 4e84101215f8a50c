"""Errors the reconcile pipeline understands, and their classification (F10).

Three exception types cross the boundary into the pure layers:

* :class:`ApiError` is what the Kubernetes adapter raises for a non-2xx answer;
  ``reason`` is the ``reason`` of the Kubernetes ``Status`` body (``NotFound``,
  ``Conflict``, ...), ``status`` the HTTP code.
* :class:`NetworkError` is what adapters raise when no answer arrived at all.
* :class:`ReconcileError` is raised by our own code when it already knows the
  category, e.g. a user-referenced object that does not exist.

:func:`classify` turns any exception into ``(Category, reason)``; the reason is
what ends up in a condition. Python's own socket errors are understood too, and
an unrecognised exception is looked through (``__cause__``/``__context__``) so
that a client library's wrapper around ``ConnectionRefusedError`` still
classifies as ``ConnectionRefused``.
"""

from __future__ import annotations

import enum
import socket
import ssl
from typing import NamedTuple

from aim_core.reconcile.health import Category, Health, state_for

__all__ = [
    "ApiError",
    "ErrorInfo",
    "NetworkError",
    "NetworkKind",
    "ReconcileError",
    "classify",
    "describe",
    "health_from_error",
    "state_for",
]


class ApiError(Exception):
    """A Kubernetes API server answered with an error ``Status``."""

    def __init__(self, status: int, reason: str = "", message: str = "") -> None:
        super().__init__(message or reason or f"HTTP {status}")
        self.status = status
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"ApiError(status={self.status!r}, reason={self.reason!r}, message={self.message!r})"


class NetworkKind(str, enum.Enum):
    """Why no answer arrived."""

    REFUSED = "refused"
    RESET = "reset"
    TIMEOUT = "timeout"
    DNS = "dns"
    OTHER = "other"


class NetworkError(Exception):
    """The request never got an answer (connection refused, reset, timed out, DNS...)."""

    def __init__(self, kind: NetworkKind | str, message: str = "") -> None:
        self.kind = NetworkKind(kind)
        super().__init__(message or f"network error ({self.kind.value})")
        self.message = message or f"network error ({self.kind.value})"


class ReconcileError(Exception):
    """An error whose category our own code already knows."""

    def __init__(self, category: Category, reason: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.reason = reason
        self.message = message

    @classmethod
    def invalid_spec(cls, reason: str, message: str) -> ReconcileError:
        return cls(Category.INVALID_SPEC, reason, message)

    @classmethod
    def missing_upstream(cls, reason: str, message: str) -> ReconcileError:
        """A user-referenced object does not exist (``ReferenceNotFound`` unless more specific)."""
        return cls(Category.MISSING_UPSTREAM, reason, message)

    def __repr__(self) -> str:
        return f"ReconcileError({self.category.value}, {self.reason!r}, {self.message!r})"


class ErrorInfo(NamedTuple):
    """An error as data: what :mod:`aim_core.reconcile.status` consumes."""

    category: Category
    reason: str
    message: str


# Kubernetes Status reasons (metav1.StatusReason) and what they mean to us.
# Reason wins over the HTTP code, like apimachinery's Is* helpers; the code is
# only consulted for reasons we do not know.
_API_REASONS: dict[str, tuple[Category, str]] = {
    "NotFound": (Category.MISSING_DOWNSTREAM, "NotFound"),
    "Unauthorized": (Category.AUTH, "Unauthorized"),
    "Forbidden": (Category.AUTH, "Forbidden"),
    "Invalid": (Category.INVALID_SPEC, "InvalidSpec"),
    "AlreadyExists": (Category.INVALID_SPEC, "AlreadyExists"),
    "Conflict": (Category.INFRASTRUCTURE, "Conflict"),
    "Timeout": (Category.INFRASTRUCTURE, "Timeout"),
    "ServerTimeout": (Category.INFRASTRUCTURE, "Timeout"),
    "ServiceUnavailable": (Category.INFRASTRUCTURE, "ServiceUnavailable"),
    "TooManyRequests": (Category.INFRASTRUCTURE, "RateLimited"),
    "InternalError": (Category.INFRASTRUCTURE, "ServerError"),
}

_API_CODES: dict[int, tuple[Category, str]] = {
    401: (Category.AUTH, "Unauthorized"),
    403: (Category.AUTH, "Forbidden"),
    404: (Category.MISSING_DOWNSTREAM, "NotFound"),
    409: (Category.INFRASTRUCTURE, "Conflict"),
    422: (Category.INVALID_SPEC, "InvalidSpec"),
    429: (Category.INFRASTRUCTURE, "RateLimited"),
    503: (Category.INFRASTRUCTURE, "ServiceUnavailable"),
    504: (Category.INFRASTRUCTURE, "Timeout"),
}

_NETWORK_REASONS: dict[NetworkKind, str] = {
    NetworkKind.REFUSED: "ConnectionRefused",
    NetworkKind.RESET: "ConnectionReset",
    NetworkKind.TIMEOUT: "NetworkTimeout",
    NetworkKind.DNS: "DNSFailure",
    NetworkKind.OTHER: "NetworkError",
}

_UNKNOWN = (Category.UNKNOWN, "UnknownError")


def _classify_api(exc: ApiError) -> tuple[Category, str]:
    if exc.reason in _API_REASONS:
        return _API_REASONS[exc.reason]
    if exc.status in _API_CODES:
        return _API_CODES[exc.status]
    if exc.status >= 500:
        return Category.INFRASTRUCTURE, "ServerError"
    if 400 <= exc.status < 500:
        return Category.INVALID_SPEC, "ClientError"
    return _UNKNOWN


def _network_kind(exc: BaseException) -> NetworkKind | None:
    # Order matters: gaierror and the timeout/refused/reset types are OSErrors too.
    if isinstance(exc, NetworkError):
        return exc.kind
    if isinstance(exc, (socket.gaierror, socket.herror)):
        return NetworkKind.DNS
    if isinstance(exc, TimeoutError):  # also socket.timeout, asyncio.TimeoutError
        return NetworkKind.TIMEOUT
    if isinstance(exc, ConnectionRefusedError):
        return NetworkKind.REFUSED
    if isinstance(exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
        return NetworkKind.RESET
    if isinstance(exc, (ConnectionError, ssl.SSLError)):
        return NetworkKind.OTHER
    return None


def _classify_one(exc: BaseException) -> tuple[Category, str] | None:
    if isinstance(exc, ReconcileError):
        return exc.category, exc.reason
    if isinstance(exc, ApiError):
        return _classify_api(exc)
    kind = _network_kind(exc)
    if kind is not None:
        return Category.INFRASTRUCTURE, _NETWORK_REASONS[kind]
    return None


def classify(exc: BaseException) -> tuple[Category, str]:
    """Return ``(category, reason)`` for any exception; unknown ones give ``(UNKNOWN, "UnknownError")``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _classify_one(current)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return _UNKNOWN


def describe(exc: BaseException) -> ErrorInfo:
    """Classify ``exc`` and keep its message: the triple status derivation consumes."""
    category, reason = classify(exc)
    message = getattr(exc, "message", "") or str(exc) or type(exc).__name__
    return ErrorInfo(category, reason, message)


def health_from_error(exc: BaseException, *, upstream: bool = False) -> Health:
    """Turn an exception met while observing a component into that component's health.

    A ``NotFound`` is read in context (2.1): for an upstream component (something
    the user referenced) it becomes MissingUpstream ``ReferenceNotFound``; for a
    child the controller manages it becomes MissingDownstream ``ResourceNotReady``.
    """
    info = describe(exc)
    if info.category is Category.MISSING_DOWNSTREAM and info.reason == "NotFound":
        if upstream:
            info = ErrorInfo(Category.MISSING_UPSTREAM, "ReferenceNotFound", info.message)
        else:
            info = ErrorInfo(Category.MISSING_DOWNSTREAM, "ResourceNotReady", info.message)
    return Health.error(info.category, info.reason, info.message, upstream=upstream)
