"""The operator never takes over an object someone else made under the name it derives.

A user's HTTPRoute already holds the name an AIMService's route would get: the service reports
``NameConflict`` (naming the route and what to do) and the user's route stays exactly as it was;
once the user deletes it, the service's own route follows.
"""

from __future__ import annotations

import copy

import pytest

from aim_core.reconcile.naming import route_name
from aim_core.runtime import adoption
from tests.wire.conftest import eventually
from tests.wire.test_services_wire import NS, ROUTE, SVC, cluster, condition, create  # noqa: F401 - fixture

USERS_ROUTE_SPEC = {
    "parentRefs": [{"name": "someone-elses-gateway"}],
    "rules": [{"backendRefs": [{"name": "their-backend", "port": 8080}]}],
}


@pytest.fixture()
def quick_recheck(monkeypatch):
    # The user's object carries none of our labels, so its deletion triggers nothing: the service looks
    # again on a timer. Shortened so the test need not wait the production interval.
    monkeypatch.setattr(adoption, "CONFLICT_RECHECK", 0.5)


async def test_a_users_route_of_the_derived_name_is_reported_and_left_alone(
    kube, api, cluster, quick_recheck, operator
):
    svc = copy.deepcopy(cluster["qwen-chat"])
    name = route_name(svc["metadata"]["name"], NS)
    kube.put_object(
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": name, "namespace": NS, "labels": {"team": "web"}},
            "spec": copy.deepcopy(USERS_ROUTE_SPEC),
        }
    )
    await create(api, kube, svc)

    def conflict_reported():
        found = kube.get(SVC, NS, "qwen-chat")
        ready = condition(found, "Ready")
        assert ready is not None and ready["reason"] == "NameConflict", found.get("status")
        return ready

    ready = await eventually(conflict_reported)
    assert f"HTTPRoute {NS}/{name} already exists" in ready["message"]
    assert "Rename or delete" in ready["message"]
    users = kube.get(ROUTE, NS, name)
    assert not users["metadata"].get("ownerReferences")
    assert users["metadata"]["labels"] == {"team": "web"}
    assert users["spec"]["parentRefs"][0]["name"] == "someone-elses-gateway"
    assert "aim-service-controller" not in {m["manager"] for m in users["metadata"].get("managedFields") or ()}

    assert (await api.delete(kube.path(ROUTE, NS, name))).status_code == 200

    def ours():
        route = kube.get(ROUTE, NS, name)
        assert route is not None
        owner = route["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "AIMService" and owner["name"] == "qwen-chat"
        return route

    route = await eventually(ours, timeout=15)
    assert route["spec"]["parentRefs"][0]["name"] == "kserve-ingress-gateway"
    await eventually(lambda: condition(kube.get(SVC, NS, "qwen-chat"), "Ready")["reason"] != "NameConflict")
