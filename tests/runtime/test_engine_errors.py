"""How the engine reports failures: routine trouble is one WARNING line with the retry delay, bugs a traceback."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from aim_core.operator.logs import RoutineRetries
from aim_core.reconcile.errors import ApiError, NetworkError
from aim_core.reconcile.resources import RUNTIME_CONFIGS
from aim_core.runtime.controller import Context
from aim_core.runtime.engine import Engine
from aim_core.runtime.store import Store
from aim_core.runtimeconfig.controller import RuntimeConfigController

KEY = ("runtime-config", "team", "default")


class FailingKube:
    """An API adapter whose writes all fail with ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.writes = 0

    async def _fail(self, *args: Any, **kwargs: Any) -> Any:
        self.writes += 1
        raise self.error

    patch = create = apply = delete = _fail


def engine_with(error: BaseException) -> tuple[Engine, FailingKube]:
    kube = FailingKube(error)
    engine = Engine(
        Context(store=Store(), kube=kube, plugins=None, operator_namespace="aim-system"), [RuntimeConfigController()]
    )
    engine.store.upsert(
        RUNTIME_CONFIGS,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "default", "namespace": "team", "uid": "u1", "resourceVersion": "1", "generation": 1},
            "spec": {},
        },
    )
    return engine, kube


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("aim_engine") and r.levelno >= logging.INFO]


@pytest.mark.parametrize(
    "error",
    [
        NetworkError(
            "refused",
            "PATCH /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimruntimeconfigs/default/status: connection refused",
        ),
        NetworkError(
            "timeout",
            "PATCH /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimruntimeconfigs/default/status: timed out",
        ),
        ApiError(
            503,
            "ServiceUnavailable",
            "PATCH /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimruntimeconfigs/"
            "default/status: the server is currently unable to handle the request",
        ),
    ],
)
async def test_routine_unavailability_is_one_warning_naming_the_request_and_the_delay(caplog, error):
    engine, kube = engine_with(error)
    with caplog.at_level(logging.DEBUG):
        await engine.handle(KEY)
    found = records(caplog)
    assert len(found) == 1, [r.getMessage() for r in found]
    record = found[0]
    assert record.levelno == logging.WARNING and record.exc_info is None
    message = record.getMessage()
    assert "PATCH /apis/aim.eai.amd.com/v1alpha1/namespaces/team/aimruntimeconfigs/default/status" in message
    assert "retrying in 0.5s" in message
    assert kube.writes == 1  # the status write; no Event for a status that was not written
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        await engine.handle(KEY)
    assert "retrying in 1.0s" in records(caplog)[0].getMessage()  # the delay grows


async def test_a_bug_is_an_error_with_its_traceback(caplog, monkeypatch):
    engine, _ = engine_with(NetworkError("refused", "unused"))
    controller = engine.controllers["runtime-config"]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("spec")

    monkeypatch.setattr(controller, "plan", broken)
    with caplog.at_level(logging.DEBUG):
        await engine.handle(KEY)
    errors = [r for r in records(caplog) if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and errors[0].exc_info is not None
    assert "retrying in 0.5s" in errors[0].getMessage()


def test_kopf_retries_become_one_warning_with_the_delay_and_the_last_attempt_stays_an_error():
    routine = RoutineRetries([1, 2, 5])

    def record(message: str) -> logging.LogRecord:
        rec = logging.LogRecord("kopf._cogs.clients.watching", logging.ERROR, __file__, 1, message, (), None)
        routine.filter(rec)
        return rec

    what = "GET https://10.0.0.1/api/v1/pods?watch=true -> ClientConnectorError('refused')"
    second = record(f"Request attempt #2/4 failed; will retry: {what}")
    assert second.levelno == logging.WARNING and second.levelname == "WARNING"
    assert second.getMessage() == f"{what}; retrying in 2s (attempt 2)"
    last = record(f"Request attempt #4/4 failed; escalating: {what}")
    assert last.levelno == logging.ERROR
