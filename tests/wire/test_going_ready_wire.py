"""A service going Ready writes its status once and posts one Event, though its children turn Ready one by one.

KServe, the kubelet and the gateway report separately: the route accepted, the predictor
pod running and Ready, then the InferenceService Ready arrive as separate watch events a
few milliseconds apart. Reconciling after each wrote an intermediate status (and an
Event) per event; the operator gathers such triggers and reconciles once they are quiet.
"""

from __future__ import annotations

import copy

from tests.wire.conftest import eventually
from tests.wire.serving import ROUTES, accept_route, predictor_pod
from tests.wire.test_services_wire import ISVC, NS, SVC, cluster, create  # noqa: F401 - fixture

SERVICES = 4


async def test_children_turning_ready_one_by_one_cost_one_status_write_and_one_event(kube, api, cluster, operator):
    names = [f"ready-{i}" for i in range(SERVICES)]
    for name in names:
        body = copy.deepcopy(cluster["qwen-chat"])
        body["metadata"]["name"] = name
        await create(api, kube, body)

    def children():
        found = {n: kube.list(ISVC, NS, label_selector=f"aim.eai.amd.com/service={n}") for n in names}
        routes = {n: kube.list(ROUTES, NS, label_selector=f"aim.eai.amd.com/service={n}") for n in names}
        assert all(len(v) == 1 for v in found.values()) and all(len(v) == 1 for v in routes.values())
        return {n: (found[n][0], routes[n][0]) for n in names}

    made = await eventually(children, timeout=30)
    await eventually(lambda: all(kube.get(SVC, NS, n)["status"]["status"] == "Starting" for n in names), timeout=30)
    await operator.settle()
    mark = kube.mark()
    before = {n: len(kube.events_for(n, NS)) for n in names}

    for name in names:  # each child's change is a write (a watch event) of its own, as in a cluster
        isvc, route = made[name]
        accept_route(kube, route)
        kube.put_object(predictor_pod(isvc))
        kube.put_object({**isvc, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})

    def running():
        states = {n: kube.get(SVC, NS, n)["status"]["status"] for n in names}
        assert set(states.values()) == {"Running"}, states
        return True

    await eventually(running, timeout=30)
    await operator.settle()
    status_writes = [
        c
        for c in kube.calls[mark:]
        if c.user_agent.startswith("aim-engine")
        and c.verb not in ("get", "list", "watch")
        and c.resource.endswith("aimservices")
        and c.subresource == "status"
    ]
    per_service = {n: sum(1 for c in status_writes if c.name == n) for n in names}
    assert per_service == {n: 1 for n in names}, per_service  # Starting -> Running, nothing in between
    events = {n: kube.events_for(n, NS)[before[n] :] for n in names}
    assert {n: len(e) for n, e in events.items()} == {n: 1 for n in names}, {
        n: [(e["reason"], e.get("message")) for e in got] for n, got in events.items()
    }
    assert {e[0]["reason"] for e in events.values()} == {"AllComponentsReady"}
