import socket
import ssl

import pytest

from aim_core.reconcile.errors import (
    ApiError,
    NetworkError,
    NetworkKind,
    ReconcileError,
    classify,
    describe,
    health_from_error,
    state_for,
)
from aim_core.reconcile.health import Category, State

INFRA, AUTH, INVALID = Category.INFRASTRUCTURE, Category.AUTH, Category.INVALID_SPEC


@pytest.mark.parametrize(
    ("status", "reason", "expected"),
    [
        (404, "NotFound", (Category.MISSING_DOWNSTREAM, "NotFound")),
        (401, "Unauthorized", (AUTH, "Unauthorized")),
        (403, "Forbidden", (AUTH, "Forbidden")),
        (422, "Invalid", (INVALID, "InvalidSpec")),
        (409, "AlreadyExists", (INVALID, "AlreadyExists")),
        (409, "Conflict", (INFRA, "Conflict")),
        (504, "Timeout", (INFRA, "Timeout")),
        (500, "ServerTimeout", (INFRA, "Timeout")),
        (503, "ServiceUnavailable", (INFRA, "ServiceUnavailable")),
        (429, "TooManyRequests", (INFRA, "RateLimited")),
        (500, "InternalError", (INFRA, "ServerError")),
        (400, "BadRequest", (INVALID, "ClientError")),
        (405, "MethodNotAllowed", (INVALID, "ClientError")),
        (410, "Expired", (INVALID, "ClientError")),
        # reason unknown or missing: the HTTP code decides
        (404, "", (Category.MISSING_DOWNSTREAM, "NotFound")),
        (403, "", (AUTH, "Forbidden")),
        (409, "", (INFRA, "Conflict")),
        (422, "", (INVALID, "InvalidSpec")),
        (429, "", (INFRA, "RateLimited")),
        (502, "", (INFRA, "ServerError")),
        (503, "Whatever", (INFRA, "ServiceUnavailable")),
        (504, "", (INFRA, "Timeout")),
        (418, "", (INVALID, "ClientError")),
        (302, "", (Category.UNKNOWN, "UnknownError")),
    ],
)
def test_api_errors(status, reason, expected):
    assert classify(ApiError(status, reason, "boom")) == expected


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (NetworkError(NetworkKind.REFUSED), "ConnectionRefused"),
        (NetworkError("reset"), "ConnectionReset"),
        (NetworkError(NetworkKind.TIMEOUT), "NetworkTimeout"),
        (NetworkError(NetworkKind.DNS), "DNSFailure"),
        (NetworkError(NetworkKind.OTHER), "NetworkError"),
        (ConnectionRefusedError(111, "refused"), "ConnectionRefused"),
        (ConnectionResetError(104, "reset by peer"), "ConnectionReset"),
        (BrokenPipeError(), "ConnectionReset"),
        (TimeoutError(), "NetworkTimeout"),
        (TimeoutError(), "NetworkTimeout"),
        (TimeoutError(), "NetworkTimeout"),
        (socket.gaierror(-2, "Name or service not known"), "DNSFailure"),
        (ssl.SSLError("bad handshake"), "NetworkError"),
        (ConnectionError("other"), "NetworkError"),
    ],
)
def test_network_errors_are_infrastructure(exc, reason):
    assert classify(exc) == (INFRA, reason)


def test_unknown_exceptions():
    assert classify(ValueError("x")) == (Category.UNKNOWN, "UnknownError")
    assert classify(FileNotFoundError("no file")) == (Category.UNKNOWN, "UnknownError")


def test_reconcile_error_keeps_its_own_category_and_reason():
    err = ReconcileError.missing_upstream("ConfigNotFound", "runtime config 'x' not found")
    assert classify(err) == (Category.MISSING_UPSTREAM, "ConfigNotFound")
    assert str(err) == "runtime config 'x' not found"
    assert classify(ReconcileError.invalid_spec("InvalidImageReference", "m")) == (INVALID, "InvalidImageReference")


class WrapperError(Exception):
    """Like an HTTP client's ConnectError wrapping the socket error."""


def test_wrapped_errors_are_looked_through():
    try:
        try:
            raise ConnectionRefusedError(111, "refused")
        except ConnectionRefusedError as inner:
            raise WrapperError("could not connect") from inner
    except WrapperError as outer:
        assert classify(outer) == (INFRA, "ConnectionRefused")
    try:
        try:
            raise ApiError(403, "Forbidden", "no")
        except ApiError:
            raise RuntimeError("while fetching")  # noqa: B904 (implicit __context__)
    except RuntimeError as outer:
        assert classify(outer) == (AUTH, "Forbidden")


def test_describe_keeps_the_message():
    assert describe(ApiError(404, "NotFound", 'aimmodels "m" not found')) == (
        Category.MISSING_DOWNSTREAM,
        "NotFound",
        'aimmodels "m" not found',
    )
    assert describe(ValueError()).message == "ValueError"
    assert describe(ApiError(500)).message == "HTTP 500"


@pytest.mark.parametrize(
    ("category", "state"),
    [
        (Category.AUTH, State.FAILED),
        (Category.INVALID_SPEC, State.FAILED),
        (Category.MISSING_UPSTREAM, State.FAILED),
        (Category.RESOURCE_EXHAUSTION, State.FAILED),
        (Category.INFRASTRUCTURE, State.DEGRADED),
        (Category.UNKNOWN, State.DEGRADED),
        (Category.MISSING_DOWNSTREAM, State.PROGRESSING),
    ],
)
def test_state_for(category, state):
    assert state_for(category) is state


@pytest.mark.parametrize(
    ("exc", "upstream", "expected"),
    [
        (ApiError(404, "NotFound", "gone"), True, (State.FAILED, Category.MISSING_UPSTREAM, "ReferenceNotFound")),
        (
            ApiError(404, "NotFound", "gone"),
            False,
            (State.PROGRESSING, Category.MISSING_DOWNSTREAM, "ResourceNotReady"),
        ),
        (ApiError(403, "Forbidden", "rbac"), False, (State.FAILED, AUTH, "Forbidden")),
        (ConnectionRefusedError(), True, (State.DEGRADED, INFRA, "ConnectionRefused")),
    ],
)
def test_health_from_error(exc, upstream, expected):
    health = health_from_error(exc, upstream=upstream)
    assert (health.state, health.category, health.reason) == expected
    assert health.upstream is upstream
