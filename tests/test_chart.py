"""The Helm chart in ``charts/aim-engine`` renders what the kustomize base in ``deploy/`` ships.

The chart is rendered and linted by real Helm: ``helm-python-sdk`` binds Helm's
own Go SDK (no helm binary), so what passes here is what ``helm install`` renders.
With the default values,
namespace ``aim-system`` and the same image, the chart gives the objects of
``deploy/`` except the Namespace (Helm installs into an existing release
namespace) and Helm's own bookkeeping labels. The RBAC rules are read from
``deploy/`` through symlinks, so the checks of ``tests/test_deploy.py`` (rules
derived from the code) cover the chart as well.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_core.cli import build_parser
from aim_core.operator.run import settings_from_args
from tests.test_deploy import MANIFESTS

ROOT = Path(__file__).resolve().parents[1]
CHART = ROOT / "charts" / "aim-engine"
DEFAULTS = yaml.safe_load((CHART / "values.yaml").read_text())
HELM_LABELS = ("app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version")


def render(namespace: str = "aim-system", **overrides: Any) -> list[dict[str, Any]]:
    values = copy.deepcopy(DEFAULTS)
    for dotted, value in overrides.items():
        *parents, last = dotted.split("__")
        node = values
        for p in parents:
            node = node[p]
        node[last] = value
    import helm_python as helm

    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(values, name="aim-engine", namespace=namespace)
    return [
        doc
        for name, text in sorted(manifests.items())
        if "/templates/" in name and name.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def _without_bookkeeping(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    labels = obj["metadata"].get("labels") or {}
    for key in HELM_LABELS:
        labels.pop(key, None)
    return obj


def _key(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["kind"], obj["metadata"]["name"]


def _deployment(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [dep] = [o for o in objects if o["kind"] == "Deployment"]
    return dep


def _container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [c] = _deployment(objects)["spec"]["template"]["spec"]["containers"]
    return c


def test_defaults_render_the_kustomize_base():
    chart = {_key(o): _without_bookkeeping(o) for o in render(image__tag="latest")}
    base = {_key(o): _without_bookkeeping(o) for o in MANIFESTS if o["kind"] != "Namespace"}
    assert chart.keys() == base.keys()
    for key, obj in base.items():
        assert chart[key] == obj, key


def test_every_object_carries_the_release_labels_and_namespace():
    for obj in render(namespace="platform"):
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "Helm"
        assert labels["app.kubernetes.io/name"] == "aim-engine"
        if obj["kind"] in ("ServiceAccount", "Deployment", "Role", "RoleBinding"):
            assert obj["metadata"]["namespace"] == "platform", _key(obj)
        for subject in obj.get("subjects", []):
            assert subject["namespace"] == "platform"


def test_image_defaults_to_the_app_version():
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert _container(render())["image"] == f"docker.io/amdenterpriseai/aim-engine:{chart['appVersion']}"


def test_values_reach_the_operator(monkeypatch):
    objects = render(
        replicaCount=3,
        watchNamespaces=["team-a", "team-b"],
        plugins={"allow": "kserve,gateway,gpu_amd", "disable": "keda", "trace": True},
        gpuPreference="MI355X,MI300X",
        workers=8,
        log={"format": "plain", "verbose": True},
        extraEnv=[{"name": "AIM_ENGINE_REGISTRY_CA_FILE", "value": "/etc/aim/ca.pem"}],
    )
    assert _deployment(objects)["spec"]["replicas"] == 3
    c = _container(objects)
    monkeypatch.setenv("AIM_SYSTEM_NAMESPACE", "aim-system")
    args = build_parser().parse_args(c["args"])
    settings = settings_from_args(args)
    assert settings.namespaces == ("team-a", "team-b")
    assert settings.leader_election is True
    assert settings.workers == 8
    assert args.log_format == "plain" and args.verbose
    assert args.gpu_preference == "MI355X,MI300X"
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["AIM_ENGINE_PLUGINS"] == "kserve,gateway,gpu_amd"
    assert env["AIM_ENGINE_DISABLE_PLUGINS"] == "keda"
    assert env["AIM_ENGINE_TRACE_PLUGINS"] == "1"
    assert env["AIM_ENGINE_REGISTRY_CA_FILE"] == "/etc/aim/ca.pem"


def test_leader_election_can_be_turned_off():
    args = build_parser().parse_args(_container(render(leaderElection=False))["args"])
    assert args.leader_elect is False


def test_scheduling_values_reach_the_pod():
    pod = _deployment(
        render(
            nodeSelector={"node-role.kubernetes.io/control-plane": ""},
            tolerations=[{"key": "dedicated", "operator": "Exists"}],
            imagePullSecrets=[{"name": "regcred"}],
            priorityClassName="system-cluster-critical",
        )
    )["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node-role.kubernetes.io/control-plane": ""}
    assert pod["tolerations"] == [{"key": "dedicated", "operator": "Exists"}]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert pod["priorityClassName"] == "system-cluster-critical"


def test_chart_crds_are_the_generated_ones():
    chart_crds = CHART / "crds" / "aim.eai.amd.com_crds.yaml"
    assert chart_crds.read_text() == (ROOT / "aim_core" / "crds" / "aim.eai.amd.com_crds.yaml").read_text()


def test_rbac_files_are_the_kustomize_base():
    for link in (CHART / "files").iterdir():
        assert link.is_symlink() and link.resolve().parent == (ROOT / "deploy").resolve(), link.name


def test_helm_lints_the_chart_without_warnings():
    import helm_python as helm

    report = helm.lint(str(CHART))
    assert report["errors"] == [], report
    assert [m for m in report["messages"] if m["severity"] >= 2] == [], report  # 2: warning, 3: error


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed (./scripts/setup installs it)")
def test_kubectl_kustomize_renders_the_base_the_tests_read():
    out = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "deploy")], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    rendered = {_key(o): o for o in yaml.safe_load_all(out) if o}
    assert rendered == {_key(o): o for o in MANIFESTS}


# ------------------------------------------------------------- metrics, probes, logs

# The monitoring.coreos.com/v1 ServiceMonitor fields the chart writes, with the types and formats
# of the Prometheus operator's CRD (not installed here). Unknown fields are refused, so a typo fails.
_DURATION = {
    "type": "string",
    "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?"
    r"(([0-9]+)s)?(([0-9]+)ms)?)$",
}
_LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
_RELABEL = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "action": {"type": "string"},
            "modulus": {"type": "integer"},
            "regex": {"type": "string"},
            "replacement": {"type": "string"},
            "separator": {"type": "string"},
            "sourceLabels": {"type": "array", "items": {"type": "string"}},
            "targetLabel": {"type": "string"},
        },
    },
}
SERVICE_MONITOR_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}, "labels": _LABELS},
        },
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "selector": {"type": "object", "additionalProperties": False, "properties": {"matchLabels": _LABELS}},
                "namespaceSelector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "any": {"type": "boolean"},
                        "matchNames": {"type": "array", "items": {"type": "string"}},
                    },
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "scheme": {"enum": ["http", "https"]},
                            "interval": _DURATION,
                            "scrapeTimeout": _DURATION,
                            "honorLabels": {"type": "boolean"},
                            "relabelings": _RELABEL,
                            "metricRelabelings": _RELABEL,
                            "bearerTokenFile": {"type": "string"},
                            "tlsConfig": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "insecureSkipVerify": {"type": "boolean"},
                                    "serverName": {"type": "string"},
                                    "caFile": {"type": "string"},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [found] = [o for o in objects if o["kind"] == kind]
    return found


def test_service_monitor_is_off_by_default_and_valid_when_on():
    import jsonschema

    assert not [o for o in render() if o["kind"] == "ServiceMonitor"]
    relabel = [{"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"}]
    objects = render(
        namespace="platform",
        metrics__serviceMonitor={
            "enabled": True,
            "interval": "15s",
            "scrapeTimeout": "5s",
            "labels": {"release": "kube-prometheus-stack"},
            "honorLabels": True,
            "relabelings": relabel,
            "metricRelabelings": [],
        },
    )
    monitor = _one(objects, "ServiceMonitor")
    jsonschema.validate(monitor, SERVICE_MONITOR_SCHEMA)
    assert monitor["metadata"]["namespace"] == "platform"
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["interval"] == "15s" and endpoint["honorLabels"] is True and endpoint["relabelings"] == relabel
    # it selects the metrics Service, by its labels and the name of its port, in the release namespace
    service = _one(objects, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert endpoint["port"] in [p["name"] for p in service["spec"]["ports"]]
    assert monitor["spec"]["namespaceSelector"]["matchNames"] == [service["metadata"]["namespace"]]
    # the schema refuses what the Prometheus operator would
    broken = copy.deepcopy(monitor)
    broken["spec"]["endpoints"][0]["interval"] = "15 seconds"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SERVICE_MONITOR_SCHEMA)


def test_metrics_values_reach_the_operator_the_service_and_the_probes():
    objects = render(metrics__port=9090, healthPort=9091, log={"format": "json", "level": "warning"})
    c = _container(objects)
    args = build_parser().parse_args(c["args"])
    assert args.metrics_bind_address == ":9090" and args.health_probe_bind_address == ":9091"
    assert args.log_level == "warning"
    assert {"name": "metrics", "containerPort": 9090, "protocol": "TCP"} in c["ports"]
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 9091}
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 9091}
    assert args.metrics_secure is True
    service = _one(objects, "Service")
    assert service["spec"]["ports"] == [{"name": "https", "port": 9090, "targetPort": "metrics", "protocol": "TCP"}]
    assert service["spec"]["selector"].items() <= _deployment(objects)["spec"]["template"]["metadata"]["labels"].items()


def test_metrics_can_be_served_over_plain_http():
    objects = render(metrics__secure=False, metrics__port=8080, metrics__serviceMonitor__enabled=True)
    args = build_parser().parse_args(_container(objects)["args"])
    assert args.metrics_secure is False and args.metrics_bind_address == ":8080"
    [port] = _one(objects, "Service")["spec"]["ports"]
    [endpoint] = _one(objects, "ServiceMonitor")["spec"]["endpoints"]
    assert port["name"] == endpoint["port"] == "http-metrics" and endpoint["scheme"] == "http"


def test_the_service_monitor_scrapes_https_with_its_token_by_default():
    import jsonschema

    objects = render(metrics__serviceMonitor__enabled=True)
    monitor = _one(objects, "ServiceMonitor")
    jsonschema.validate(monitor, SERVICE_MONITOR_SCHEMA)
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["scheme"] == "https" and endpoint["port"] == "https"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    reader = [o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "aim-engine-metrics-reader"]
    assert reader and reader[0]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]


def test_metrics_can_be_turned_off():
    objects = render(metrics__enabled=False)
    assert not [o for o in objects if o["kind"] in ("Service", "ServiceMonitor")]
    c = _container(objects)
    assert build_parser().parse_args(c["args"]).metrics_bind_address == "0"
    assert [p["name"] for p in c["ports"]] == ["health"]


def test_default_cluster_runtime_config_and_model_source_are_off_by_default_and_valid_when_on(tmp_path):
    from aim_core.api.crds import CRDS_FILE
    from aim_testing.crdschema import crd_errors

    assert not [o for o in render() if o["kind"] in ("AIMClusterRuntimeConfig", "AIMClusterModelSource")]
    spec = {
        "routing": {"enabled": True, "gatewayRef": {"name": "gw", "namespace": "gateway-system"}},
        "tolerations": [{"key": "example.com/dedicated", "operator": "Exists"}],
    }
    objects = render(
        clusterRuntimeConfig__enable=True, clusterRuntimeConfig__spec=spec, clusterModelSource__enable=True
    )
    config, source = _one(objects, "AIMClusterRuntimeConfig"), _one(objects, "AIMClusterModelSource")
    assert config["metadata"]["name"] == "default" and config["spec"] == spec
    assert "namespace" not in config["metadata"]  # cluster-scoped
    assert source["metadata"]["name"] == "amd-aim-model-source"
    assert source["spec"] == {
        "registry": "docker.io",
        "filters": [{"image": "amdenterpriseai/aim-*"}],
        "versions": [">=0.8.4"],
        "syncInterval": "1h",
        "maxModels": 500,
    }
    crds = {d["spec"]["names"]["kind"]: d for d in yaml.safe_load_all(CRDS_FILE.read_text())}
    for obj in (config, source):
        path = tmp_path / f"{obj['kind']}.yaml"
        path.write_text(yaml.safe_dump(crds[obj["kind"]]))
        assert crd_errors(obj, path) == []
    empty = _one(render(clusterRuntimeConfig__enable=True), "AIMClusterRuntimeConfig")
    assert empty["spec"] == {}
