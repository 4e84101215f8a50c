"""The operator's Events are posted in the background: a slow Event endpoint holds up no reconcile."""

from __future__ import annotations

import asyncio
import copy
import time

import pytest

from aim_core.operator.settings import Settings
from tests.wire.conftest import eventually
from tests.wire.test_services_wire import NS, SVC, cluster, condition, create

__all__ = ["cluster"]  # the fixture, shared with the services' wire tests

ISVC = "serving.kserve.io/v1beta1/inferenceservices"
DELAY = 5.0  # seconds each Event create takes
BURST = 12  # services: with 2 workers waiting for their Events, the last status would come after 5 x DELAY


@pytest.fixture()
def operator_settings() -> Settings:
    return Settings(operator_namespace="aim-system", workers=2)


def renamed(service: dict, name: str) -> dict:
    body = copy.deepcopy(service)
    body["metadata"] = {"name": name, "namespace": NS}
    return body


@pytest.mark.emulator_only("kmock holds the Event creates for a while")
async def test_a_burst_of_new_services_is_not_held_up_by_slow_event_posts(kube, api, cluster, operator):
    async def slowly() -> None:
        await asyncio.sleep(DELAY)
        raise NotImplementedError  # kmock: matched but no answer, the emulator answers as usual (and this stays)

    kube[lambda request: request.method == "POST" and request.url.path.endswith("/events")] << slowly
    started = time.monotonic()
    for n in range(BURST):
        await create(api, kube, renamed(cluster["qwen-chat"], f"burst-{n}"))

    def reconciled() -> bool:
        services = [kube.get(SVC, NS, f"burst-{n}") for n in range(BURST)]
        return all(condition(s, "InferenceServiceReady") for s in services)

    # Had each first reconcile waited for its Event, the last status would come after 5 x DELAY.
    await eventually(reconciled, timeout=2.5 * DELAY)
    assert time.monotonic() - started < 2.5 * DELAY
    assert len(kube.list(ISVC, NS)) == BURST
    # ... and the Events do come, two at a time
    await eventually(lambda: kube.events_for("burst-0", NS) or kube.events_for("burst-1", NS), timeout=3 * DELAY)
