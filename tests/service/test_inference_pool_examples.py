"""The bundled examples with model-aware routing render as their comments say, and nothing fails by accident.

``docs/routing-examples.yaml`` holds a runtime config that turns ``routing.inferencePool`` on and
five services: one inherits it, one turns it on itself (v1), one on the older API (v1alpha2), one
opts out and one has routing off. Rendered offline over the cluster of ``examples/`` (the same
planners the operator runs; they live beside the docs so that ``examples/`` stays a screenful in
``./scripts/demo``), each gets what its comment promises, every pool and route fits the real
third-party CRDs, and ``--explain``'s notes say where the pool settings came from.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from aim_core.cli.offline import load_documents, render
from aim_core.plugin.manager import get_plugin_manager
from aim_testing.crdschema import third_party_crd, validate_against_crd

ROOT = Path(__file__).resolve().parents[2]
ROUTING_EXAMPLES = ROOT / "docs" / "routing-examples.yaml"
OUR_CRDS = ROOT / "aim_core" / "crds" / "aim.eai.amd.com_crds.yaml"
POOL_CRDS = {
    "inference.networking.k8s.io/v1": "inference.networking.k8s.io_inferencepools.yaml",
    "inference.networking.x-k8s.io/v1alpha2": "inference.networking.x-k8s.io_inferencepools.yaml",
}
PICKER = ["ConfigMap", "Deployment", "Role", "RoleBinding", "Service", "ServiceAccount"]


@pytest.fixture(scope="module")
def rendered() -> dict[str, Any]:
    docs = load_documents([ROOT / "examples", ROUTING_EXAMPLES])
    results = asyncio.run(render(docs, plugins=get_plugin_manager()))
    return {f"{r.obj['kind']} {r.obj['metadata'].get('namespace')}/{r.obj['metadata']['name']}": r for r in results}


def service(rendered: dict[str, Any], name: str) -> Any:
    return rendered[f"AIMService ml-team/{name}"]


def by_kind(result: Any) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for obj in result.apply:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def test_the_routing_examples_fit_our_crds_and_parse(tmp_path):
    import yaml

    from aim_core.api import parse
    from aim_testing.crdschema import crd_errors

    crds = {c["spec"]["names"]["kind"]: c for c in yaml.safe_load_all(OUR_CRDS.read_text(encoding="utf-8"))}
    docs = load_documents([ROUTING_EXAMPLES])
    assert sorted(d["kind"] for d in docs) == ["AIMRuntimeConfig", *["AIMService"] * 5]
    for doc in docs:
        path = tmp_path / f"{doc['kind']}.yaml"
        path.write_text(yaml.safe_dump(crds[doc["kind"]]), encoding="utf-8")
        assert crd_errors(doc, path) == [], doc["metadata"]["name"]
        assert type(parse(doc)).__name__ == doc["kind"]


def test_no_example_service_fails_or_is_degraded(rendered):
    services = [r for key, r in rendered.items() if key.startswith("AIMService ")]
    assert len(services) == 10
    for r in services:
        assert r.status["status"] not in ("Failed", "Degraded"), (r.obj["metadata"]["name"], r.status)
        bad = [
            c
            for c in r.status["conditions"]
            if c["status"] == "False" and c["reason"] in ("CRDNotInstalled", "InferencePoolNotAccepted", "InvalidSpec")
        ]
        assert bad == [], r.obj["metadata"]["name"]


@pytest.mark.parametrize(
    ("name", "version", "replicas", "failure_mode"),
    [
        ("qwen-pool", "inference.networking.k8s.io/v1", 1, "FailClose"),
        ("qwen-pool-v1", "inference.networking.k8s.io/v1", 2, "FailClose"),
        ("qwen-pool-alpha", "inference.networking.x-k8s.io/v1alpha2", 1, "FailOpen"),
    ],
)
def test_services_with_the_pool_route_through_it(rendered, name, version, replicas, failure_mode):
    result = service(rendered, name)
    objects = by_kind(result)

    assert sorted(objects) == sorted(["HTTPRoute", "InferencePool", "InferenceService", *PICKER])
    [pool], [route], [isvc], [deployment] = (
        objects["InferencePool"],
        objects["HTTPRoute"],
        objects["InferenceService"],
        objects["Deployment"],
    )
    validate_against_crd(pool, third_party_crd(POOL_CRDS[version]))
    validate_against_crd(route, third_party_crd("gateway.networking.k8s.io_httproutes.yaml"))
    assert pool["apiVersion"] == version
    assert route["spec"]["rules"][0]["backendRefs"][0] == {
        "group": version.split("/")[0],
        "kind": "InferencePool",
        "name": pool["metadata"]["name"],
        "namespace": "ml-team",
    }
    selector = pool["spec"]["selector"].get("matchLabels", pool["spec"]["selector"])
    assert selector == {"serving.kserve.io/inferenceservice": isvc["metadata"]["name"]}
    ref = pool["spec"].get("endpointPickerRef") or pool["spec"]["extensionRef"]
    assert ref["failureMode"] == failure_mode
    assert deployment["spec"]["replicas"] == replicas
    for obj in [pool, *(objects[k][0] for k in PICKER)]:
        owner = obj["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("AIMService", name, True)
        assert obj["metadata"]["labels"]["aim.eai.amd.com/component"] == "routing"


def test_the_inherited_pool_takes_the_picker_resources_from_the_runtime_config(rendered):
    result = service(rendered, "qwen-pool")
    [deployment] = by_kind(result)["Deployment"]

    resources = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}
    notes = "\n".join(result.notes)
    assert "routing.inferencePool: on (routing.inferencePool.enabled of runtime config 'pool-routing')" in notes
    assert "routing.inferencePool.endpointPicker.resources" in notes
    assert "the route's backend is the pool; builds InferencePool qwen-pool-" in notes


def test_the_opted_out_service_routes_to_its_predictor_service(rendered):
    result = service(rendered, "qwen-pool-optout")
    objects = by_kind(result)

    assert sorted(objects) == ["HTTPRoute", "InferenceService"]
    backend = objects["HTTPRoute"][0]["spec"]["rules"][0]["backendRefs"][0]
    assert (
        backend["kind"] == "Service"
        and backend["name"] == f"{objects['InferenceService'][0]['metadata']['name']}-predictor"
    )
    assert "routing.inferencePool: off (spec.routing.inferencePool.enabled of the AIMService)" in result.notes


def test_routing_off_has_no_route_and_no_pool(rendered):
    result = service(rendered, "qwen-pool-unrouted")

    assert sorted(by_kind(result)) == ["InferenceService"]
    assert not any(c["type"] == "HTTPRouteReady" for c in result.status["conditions"])


def test_the_services_of_services_yaml_are_untouched(rendered):
    for name in ("qwen-chat", "qwen-by-image", "llama-long-context"):
        result = service(rendered, name)
        assert "InferencePool" not in by_kind(result)
        assert not any(n.startswith("routing.inferencePool") for n in result.notes)
