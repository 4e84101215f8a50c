"""What the operator logs at INFO while it brings services up: a few lines per service, none per request."""

from __future__ import annotations

import copy
import logging
import re

import pytest

from aim_core.operator.logs import PerRequestAtDebug, quiet_http_clients, resolve_level
from tests.wire.conftest import eventually
from tests.wire.test_services_wire import ISVC, NS, SVC, cluster, create  # noqa: F401 - fixture

# What a line about one HTTP request looks like (httpx, aiohttp's access log, kopf's request retries).
PER_REQUEST = re.compile(r"HTTP Request:|\b(GET|PUT|POST|PATCH|DELETE|HEAD) (/|https?://)|HTTP/1\.[01]\"? \d{3}")


class OperatorLines(logging.Handler):
    """Records logged from the operator's thread (the emulator serves from the test's thread)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName == "aim-operator":
            self.records.append(record)


@pytest.fixture()
def lines():
    handler = OperatorLines()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


def operator_lines(lines: OperatorLines) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in lines.records]


async def test_a_fleet_of_services_logs_a_few_info_lines_each_and_none_per_request(
    kube,
    api,
    cluster,
    lines,  # noqa: F811
    operator,
):
    """Many services on one Ready model, template and cache, as a fleet runs (and the benchmark measures)."""
    names = [f"chat-{i}" for i in range(6)]
    for name in names:
        body = copy.deepcopy(cluster["qwen-chat"])
        body["metadata"]["name"] = name
        await create(api, kube, body)

    def all_started():
        for name in names:
            assert kube.list(ISVC, NS, label_selector=f"aim.eai.amd.com/service={name}"), name
            assert kube.get(SVC, NS, name)["status"]["status"] == "Starting", name
        return True

    await eventually(all_started, timeout=15)
    await operator.settle()
    messages = operator_lines(lines)
    per_service = [m for m in messages if "AIMService" in m]
    assert per_service, "the operator logs nothing about the services at INFO: is the handler attached?"
    assert len(messages) / len(names) < 5, "\n".join(messages)
    assert [m for m in messages if PER_REQUEST.search(m)] == []
    assert kube.count("write", agent="aim-engine") > len(messages)  # more requests than lines


async def test_every_write_is_one_line_and_no_request_is(kube, api, cluster, lines, operator):  # noqa: F811
    """All example services: caches, artifacts, PVCs, Jobs get created; each creation says so once."""
    for body in cluster.values():
        await create(api, kube, body)

    def all_have_a_status():
        for name in cluster:
            assert (kube.get(SVC, NS, name).get("status") or {}).get("status"), name
        return True

    await eventually(all_have_a_status, timeout=15)
    await eventually(lambda: kube.list("batch/v1/jobs", NS))
    await operator.settle()
    messages = operator_lines(lines)
    assert [m for m in messages if PER_REQUEST.search(m)] == []
    for resource in (ISVC, "batch/v1/jobs", "v1/persistentvolumeclaims", "aimtemplatecaches", "aimartifacts"):
        created = [
            o
            for o in kube.list(resource, NS)
            if any(m["manager"].startswith("aim-") for m in o["metadata"].get("managedFields") or ())
        ]
        assert created, resource  # by the operator, not seeded
        for obj in created:
            said = [m for m in messages if f": created {obj['kind']} {obj['metadata']['name']}" in m]
            assert len(said) == 1, (obj["kind"], obj["metadata"]["name"], messages)


def test_http_client_request_lines_are_debug_lines(caplog):
    quiet_http_clients()
    caplog.set_level(logging.INFO)
    logging.getLogger("httpx").info('HTTP Request: PATCH http://127.0.0.1/apis/x "HTTP/1.1 200 OK"')
    logging.getLogger("httpx").warning("something is wrong with the connection pool")
    assert [r.levelname for r in caplog.records if r.name == "httpx"] == ["WARNING"]
    caplog.clear()
    caplog.set_level(logging.DEBUG)
    logging.getLogger("httpx").info('HTTP Request: PATCH http://127.0.0.1/apis/x "HTTP/1.1 200 OK"')
    assert [(r.levelname, r.name) for r in caplog.records] == [("DEBUG", "httpx")]
    assert any(isinstance(f, PerRequestAtDebug) for f in logging.getLogger("aiohttp.access").filters)


def test_log_level_from_flag_verbose_and_environment():
    assert resolve_level(None, env={}) == logging.INFO
    assert resolve_level(None, env={"AIM_ENGINE_LOG_LEVEL": "WARNING"}) == logging.WARNING
    assert resolve_level(None, verbose=True, env={"AIM_ENGINE_LOG_LEVEL": "error"}) == logging.DEBUG
    assert resolve_level("error", verbose=True, env={"AIM_ENGINE_LOG_LEVEL": "debug"}) == logging.ERROR
    with pytest.raises(ValueError, match="AIM_ENGINE_LOG_LEVEL"):
        resolve_level(None, env={"AIM_ENGINE_LOG_LEVEL": "loud"})
