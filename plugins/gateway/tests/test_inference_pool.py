"""The InferencePool and endpoint picker the route builder adds with ``routing.inferencePool`` on.

Shapes against the real GAIE v1.3.0 and Gateway API CRDs, the rules the issue sets (picker port
9002 whatever the model port, a selector that takes the predictor pods and nothing else, the
reference chart's arguments, probes and scorers, a restricted-namespace security context, RBAC
the operator itself holds), names within limits, and the doctor's CRD check.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs
import pytest
import yaml
from aim_plugin_gateway import inferencepool as ip
from aim_plugin_gateway.doctor import GatewayChecks, pool_versions
from aim_plugin_gateway.httproute import HTTPRouteBuilder

from aim_core import ResourceRef, RouteRequest, ServingEndpoint
from aim_testing.crdschema import third_party_crd, validate_against_crd

ROOT = Path(__file__).resolve().parents[3]
ISVC = "qwen-chat-1080a608"
SELECTOR = {"serving.kserve.io/inferenceservice": ISVC}
PARENT = {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "inference-gateway", "namespace": "gw"}
CRDS = {
    ip.V1: "inference.networking.k8s.io_inferencepools.yaml",
    ip.V1ALPHA2: "inference.networking.x-k8s.io_inferencepools.yaml",
}


def make_request(
    pool: dict[str, Any] | None = None,
    *,
    port: int = 8000,
    service: str = "qwen-chat",
    adapters: bool = False,
    **changes,
) -> RouteRequest:
    spec: dict[str, Any] = {"adapters": [{"name": "sql", "source": "hf://org/sql-lora"}]} if adapters else {}
    base = RouteRequest(
        service={
            "kind": "AIMService",
            "metadata": {"name": service, "namespace": "ml-team", "uid": "u1"},
            "spec": spec,
        },
        name=ISVC,
        namespace="ml-team",
        labels={"aim.eai.amd.com/service": service},
        annotations={},
        parent_ref=PARENT,
        path="/ml-team/u1",
        backend_service=f"{ISVC}-predictor",
        endpoint=ServingEndpoint(dict(SELECTOR), port),
        settings={"inferencePool": {"enabled": True, **(pool or {})}} if pool is not None else {},
    )
    return attrs.evolve(base, **changes)


def build(pool: dict[str, Any] | None = None, **kw) -> dict[str, dict[str, Any]]:
    objects = HTTPRouteBuilder().build(make_request(pool if pool is not None else {}, **kw))
    assert isinstance(objects, list)
    return {o["kind"]: o for o in objects}


def container(objects: dict[str, dict[str, Any]]) -> dict[str, Any]:
    [epp] = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    return epp


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_without_the_pool_the_route_alone_exactly_as_before():
    plain = HTTPRouteBuilder().build(make_request(None))
    off = HTTPRouteBuilder().build(
        make_request(None, settings={"inferencePool": {"enabled": False, "apiVersion": ip.V1ALPHA2}})
    )

    assert isinstance(plain, dict) and plain == off
    assert plain["spec"]["rules"][0]["backendRefs"] == [
        {"kind": "Service", "name": f"{ISVC}-predictor", "namespace": "ml-team", "port": 80}
    ]


def test_the_builder_declares_every_kind_it_returns_and_the_route_comes_first():
    builder = HTTPRouteBuilder()
    objects = builder.build(make_request({}))
    declared = {(r.api_version, r.kind) for r in (builder.resource, *builder.kinds)}

    assert objects[0]["kind"] == "HTTPRoute"
    assert {(o["apiVersion"], o["kind"]) for o in objects} <= declared
    assert {(r.api_version, r.kind) for r in ip.POOLS.values()} <= declared


@pytest.mark.parametrize("version", [ip.V1, ip.V1ALPHA2])
def test_every_object_fits_the_real_crds(version):
    objects = build({"apiVersion": version, "endpointPicker": {"failureMode": "FailOpen"}})

    validate_against_crd(objects["InferencePool"], third_party_crd(CRDS[version]))
    validate_against_crd(objects["HTTPRoute"], third_party_crd("gateway.networking.k8s.io_httproutes.yaml"))
    assert objects["HTTPRoute"]["spec"]["rules"][0]["backendRefs"] == [
        {
            "group": version.split("/")[0],
            "kind": "InferencePool",
            "name": objects["InferencePool"]["metadata"]["name"],
            "namespace": "ml-team",
        }
    ]


def test_a_v1_pool_has_match_labels_target_ports_and_endpoint_picker_ref():
    objects = build({"apiVersion": ip.V1})
    spec = objects["InferencePool"]["spec"]

    assert spec == {
        "selector": {"matchLabels": SELECTOR},
        "targetPorts": [{"number": 8000}],
        "endpointPickerRef": {
            "kind": "Service",
            "name": objects["Service"]["metadata"]["name"],
            "port": {"number": 9002},
            "failureMode": "FailClose",
        },
    }


def test_a_v1alpha2_pool_has_selector_target_port_number_and_extension_ref():
    objects = build({"apiVersion": ip.V1ALPHA2, "endpointPicker": {"failureMode": "FailOpen"}})
    spec = objects["InferencePool"]["spec"]

    assert spec == {
        "selector": SELECTOR,
        "targetPortNumber": 8000,
        "extensionRef": {
            "kind": "Service",
            "name": objects["Service"]["metadata"]["name"],
            "portNumber": 9002,
            "failureMode": "FailOpen",
        },
    }


@pytest.mark.parametrize("port", [8000, 8080, 9002, 30000])
@pytest.mark.parametrize("version", [ip.V1, ip.V1ALPHA2])
def test_the_picker_port_is_9002_whatever_the_model_port(port, version):
    objects = build({"apiVersion": version}, port=port)
    spec = objects["InferencePool"]["spec"]

    if version == ip.V1:
        assert spec["targetPorts"] == [{"number": port}]
        assert spec["endpointPickerRef"]["port"] == {"number": 9002}
    else:
        assert spec["targetPortNumber"] == port
        assert spec["extensionRef"]["portNumber"] == 9002
    assert [p["port"] for p in objects["Service"]["spec"]["ports"]] == [9002, 9090]
    ports = {p["name"]: p["containerPort"] for p in container(objects)["ports"]}
    assert ports == {"grpc": 9002, "grpc-health": 9003, "metrics": 9090}


def test_the_pool_selects_the_predictor_pods_and_nothing_else():
    objects = build({})
    selector = objects["InferencePool"]["spec"]["selector"]["matchLabels"]
    predictor = {"serving.kserve.io/inferenceservice": ISVC, "component": "predictor", "app": f"{ISVC}-predictor"}
    other_service = {"serving.kserve.io/inferenceservice": "qwen-batch-5d2c9a11", "component": "predictor"}
    picker = objects["Deployment"]["spec"]["template"]["metadata"]["labels"]

    assert selects(selector, predictor)
    assert not selects(selector, other_service)
    assert not selects(selector, picker)
    assert not selects(objects["Service"]["spec"]["selector"], predictor)  # the picker Service takes only the picker
    assert selects(objects["Service"]["spec"]["selector"], picker)
    assert objects["Deployment"]["spec"]["selector"]["matchLabels"] == objects["Service"]["spec"]["selector"]


def test_the_picker_runs_as_the_reference_chart_runs_it():
    objects = build({"apiVersion": ip.V1ALPHA2})
    epp = container(objects)
    pool = objects["InferencePool"]["metadata"]["name"]

    assert epp["image"] == "registry.k8s.io/gateway-api-inference-extension/epp:v1.3.0"
    args = epp["args"]
    assert args[args.index("--pool-name") + 1] == pool
    assert args[args.index("--pool-namespace") + 1] == "ml-team"
    assert args[args.index("--pool-group") + 1] == "inference.networking.x-k8s.io"
    assert args[args.index("--config-file") + 1] == "/config/default-plugins.yaml"
    probe = {"grpc": {"port": 9003, "service": "inference-extension"}}
    assert epp["readinessProbe"]["grpc"] == epp["livenessProbe"]["grpc"] == probe["grpc"]
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in epp["env"]}
    assert env == {"NAMESPACE": "metadata.namespace", "POD_NAME": "metadata.name"}
    [mount] = epp["volumeMounts"]
    [volume] = objects["Deployment"]["spec"]["template"]["spec"]["volumes"]
    assert mount["mountPath"] == "/config" and volume["configMap"]["name"] == objects["ConfigMap"]["metadata"]["name"]
    assert "default-plugins.yaml" in objects["ConfigMap"]["data"]
    assert (
        objects["Deployment"]["spec"]["template"]["spec"]["serviceAccountName"]
        == objects["ServiceAccount"]["metadata"]["name"]
    )


def test_the_picker_is_cpu_only_and_admitted_by_a_restricted_namespace():
    objects = build({"endpointPicker": {"resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}})
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    epp = container(objects)

    assert epp["resources"] == {"requests": {"cpu": "500m", "memory": "512Mi"}}
    assert not {"nodeSelector", "tolerations", "affinity"} & pod.keys()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert epp["securityContext"]["allowPrivilegeEscalation"] is False
    assert epp["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert "privileged" not in epp["securityContext"]


def test_the_default_config_has_the_reference_scorers_and_lora_affinity_with_adapters():
    plain = yaml.safe_load(build({})["ConfigMap"]["data"]["default-plugins.yaml"])
    lora = yaml.safe_load(build({}, adapters=True)["ConfigMap"]["data"]["default-plugins.yaml"])

    assert plain["apiVersion"] == "inference.networking.x-k8s.io/v1alpha1"
    assert plain["kind"] == "EndpointPickerConfig"
    assert [p["type"] for p in plain["plugins"]] == [
        "queue-scorer",
        "kv-cache-utilization-scorer",
        "prefix-cache-scorer",
        "max-score-picker",
    ]
    [profile] = plain["schedulingProfiles"]
    assert profile["plugins"] == [
        {"pluginRef": "queue-scorer", "weight": 2},
        {"pluginRef": "kv-cache-utilization-scorer", "weight": 2},
        {"pluginRef": "prefix-cache-scorer", "weight": 3},
        {"pluginRef": "max-score-picker"},
    ]
    assert "lora-affinity-scorer" in [p["type"] for p in lora["plugins"]]
    assert {"pluginRef": "lora-affinity-scorer", "weight": 1} in lora["schedulingProfiles"][0]["plugins"]


def test_a_config_ref_mounts_the_users_config_map_instead_of_ours():
    objects = build({"endpointPicker": {"configRef": {"name": "my-epp", "key": "scorers.yaml"}}})

    assert "ConfigMap" not in objects
    [volume] = objects["Deployment"]["spec"]["template"]["spec"]["volumes"]
    assert volume["configMap"] == {"name": "my-epp", "items": [{"key": "scorers.yaml", "path": "default-plugins.yaml"}]}


def test_the_image_comes_from_the_setting_else_the_operator_flag_else_the_pinned_release(monkeypatch):
    monkeypatch.delenv(ip.IMAGE_ENV, raising=False)
    assert container(build({}))["image"] == ip.DEFAULT_IMAGE
    monkeypatch.setenv(ip.IMAGE_ENV, "mirror.example.com/epp:v1.3.0")
    assert container(build({}))["image"] == "mirror.example.com/epp:v1.3.0"
    assert container(build({"endpointPicker": {"image": "own/epp:2"}}))["image"] == "own/epp:2"


def test_the_picker_role_reads_pods_and_pools_of_its_group_only():
    for version, group in ((ip.V1, "inference.networking.k8s.io"), (ip.V1ALPHA2, "inference.networking.x-k8s.io")):
        objects = build({"apiVersion": version})
        assert objects["Role"]["rules"] == [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [group], "resources": ["inferencepools"], "verbs": ["get", "list", "watch"]},
        ]
        binding = objects["RoleBinding"]
        name = objects["ServiceAccount"]["metadata"]["name"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": "ml-team"}]
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": objects["Role"]["metadata"]["name"],
        }


def test_the_operator_holds_what_the_picker_role_grants_and_may_create_every_kind():
    """The API server refuses a Role granting what its creator does not hold (escalation prevention)."""
    [role] = [d for d in yaml.safe_load_all((ROOT / "deploy" / "role.yaml").read_text()) if d]

    def granted(group: str, plural: str, verb: str) -> bool:
        return any(
            group in r.get("apiGroups", [])
            and plural in r.get("resources", [])
            and verb in r.get("verbs", [])
            and not r.get("resourceNames")
            for r in role["rules"]
        )

    for version in ip.API_VERSIONS:
        for rule in build({"apiVersion": version})["Role"]["rules"]:
            for group in rule["apiGroups"]:
                for plural in rule["resources"]:
                    for verb in rule["verbs"]:
                        assert granted(group, plural, verb), (group, plural, verb)
    for ref in (HTTPRouteBuilder.resource, *HTTPRouteBuilder.kinds):
        for verb in ("get", "list", "watch", "create", "patch", "delete"):
            assert granted(ref.group, ref.plural, verb), (ref.kind, verb)


def test_names_stay_within_limits_and_differ_per_service():
    long_a = "a" * 60 + "-one"
    long_b = "a" * 60 + "-two"
    a = build({}, service=long_a)
    b = build({}, service=long_b)

    for objects in (a, b):
        for obj in objects.values():
            assert len(obj["metadata"]["name"]) <= 63, obj["kind"]
        picker = objects["Service"]["metadata"]["name"]
        assert picker[0].isalpha()  # a Service name is a DNS-1035 label
        assert len(objects["Deployment"]["spec"]["template"]["metadata"]["labels"][ip.PICKER_LABEL]) <= 63
    assert a["InferencePool"]["metadata"]["name"] != b["InferencePool"]["metadata"]["name"]
    assert a["Deployment"]["metadata"]["name"] != b["Deployment"]["metadata"]["name"]
    digit = build({}, service="1chat")
    assert digit["Service"]["metadata"]["name"].startswith("epp-1chat-")


# ---------------------------------------------------------------- doctor


class FakeCluster:
    def __init__(self, objects: list[dict[str, Any]], crds: dict[str, dict[str, Any]]) -> None:
        self.objects, self.crds = objects, crds

    async def get(self, ref: ResourceRef, namespace: str | None, name: str) -> dict[str, Any] | None:
        if ref.kind == "CustomResourceDefinition":
            return self.crds.get(name)
        if ref.kind == "Gateway":
            return {"metadata": {"name": name}}
        return None

    async def list(self, ref: ResourceRef, namespace: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.objects if o["kind"] == ref.kind]


def _crd(filename: str) -> dict[str, Any]:
    crd = dict(yaml.safe_load(third_party_crd(filename).read_text()))
    crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
    return crd


GATEWAY_CRDS = {
    "httproutes.gateway.networking.k8s.io": "gateway.networking.k8s.io_httproutes.yaml",
    "gateways.gateway.networking.k8s.io": "gateway.networking.k8s.io_gateways.yaml",
}


def _service(name: str, pool: dict[str, Any], kind: str = "AIMService") -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": "ml-team"},
        "spec": {"routing": {"gatewayRef": PARENT, "inferencePool": pool}},
    }


def test_pool_versions_are_those_turned_on():
    found = pool_versions(
        [
            _service("a", {"enabled": True}),
            _service("b", {"enabled": True, "apiVersion": ip.V1ALPHA2}),
            _service("c", {"enabled": False, "apiVersion": ip.V1ALPHA2}),
            _service("d", {}),
            _service("default", {"enabled": True}, kind="AIMRuntimeConfig"),
        ]
    )
    assert found == {
        ip.V1: {"AIMService ml-team/a", "AIMRuntimeConfig ml-team/default"},
        ip.V1ALPHA2: {"AIMService ml-team/b"},
    }


def test_doctor_fails_the_pool_crd_of_the_configured_version_only():
    crds = {name: _crd(f) for name, f in GATEWAY_CRDS.items()}
    crds["inferencepools.inference.networking.k8s.io"] = _crd(CRDS[ip.V1])
    cluster = FakeCluster(
        [_service("a", {"enabled": True}), _service("b", {"enabled": True, "apiVersion": ip.V1ALPHA2})], crds
    )

    findings = asyncio.run(GatewayChecks().run(cluster))

    failed = [f for f in findings if f.level == "fail"]
    assert [f.message for f in failed] == [
        "CRD inferencepools.inference.networking.x-k8s.io is not installed (InferencePool "
        "inference.networking.x-k8s.io/v1alpha2) (routing.inferencePool of AIMService ml-team/b)"
    ]
    assert "manifests.yaml" in failed[0].fix
    assert any(f.level == "ok" and "inferencepools.inference.networking.k8s.io" in f.message for f in findings)

    nobody = asyncio.run(
        GatewayChecks().run(FakeCluster([_service("d", {})], {n: _crd(f) for n, f in GATEWAY_CRDS.items()}))
    )
    assert not any("inferencepools" in f.message for f in nobody)
