"""`aim-engine doctor` against the cluster (emulator and real API server): a healthy cluster, then each thing
that can be wrong.

Each test starts from a cluster with everything in place (exit 0), breaks one
thing the way a real cluster would have it broken, and checks what a user sees:
the finding, the command that fixes it, the exit code.

The cluster holds this version's CRDs as kube-apiserver 1.24 can hold them, without the CEL transition
rules it cannot compile (``drop_transition_rules``), and doctor compares with those. On the real server
the session's CRDs are shared by every test, so the tests that delete or rewrite a CRD run on the
emulator only.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from pathlib import Path
from typing import Any

import httpx
import kmock
import pytest
import yaml

import aim_core.api.crds
from aim_core.api.crds import generate_crds
from aim_core.cli import main
from aim_testing.apiserver import drop_transition_rules
from aim_testing.crdschema import load_crd, third_party_crd
from tests.service.builders import amd_node, cpu_node

ROOT = Path(__file__).resolve().parents[2]
CRD_RESOURCE = "apiextensions.k8s.io/v1/customresourcedefinitions"
THIRD_PARTY = [
    "serving.kserve.io_inferenceservices.yaml",
    "gateway.networking.k8s.io_httproutes.yaml",
    "gateway.networking.k8s.io_gateways.yaml",
    "keda.sh_scaledobjects.yaml",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
]


def established(crd: dict[str, Any]) -> dict[str, Any]:
    crd = copy.deepcopy(dict(crd))
    crd["status"] = {
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ]
    }
    return crd


def deploy(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((ROOT / "deploy" / name).read_text()) if d]


CRDS_CHANGED = "deletes or rewrites a CRD, which the real server's session shares with every test"
READER = "doctor-reads-only"  # the token (and user) of a user who may read everything and create nothing


@pytest.fixture()
def access_reviews():
    """Ask for it to let doctor create SubjectAccessReviews (about 150, slow on the emulator); otherwise they
    are refused (403: injected on the emulator; on the real server doctor runs as a user who may only read)
    and doctor compares the roles in the cluster instead."""


def lws_controller(kube) -> None:
    """The LWS controller's webhooks registered and its webhook Service's endpoint ready, as its install
    leaves them. The webhooks match nothing here (no rules): a real server would otherwise call them."""
    service = {"name": "lws-webhook-service", "namespace": "lws-system"}
    hooks = [
        {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Ignore",
            "clientConfig": {"service": {**service, "path": path}},
            "rules": [],
        }
        for name, path in (
            ("mleaderworkerset.kb.io", "/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset"),
            ("mpod.kb.io", "/mutate--v1-pod"),
        )
    ]
    kube.put_object(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "lws-mutating-webhook-configuration"},
            "webhooks": hooks,
        }
    )
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": dict(service),
            "subsets": [{"addresses": [{"ip": "10.0.0.7"}], "ports": [{"port": 9443}]}],
        }
    )


@pytest.fixture()
def cluster(kube, kubeconfig, request, monkeypatch):
    """Everything AIM needs: CRDs (ours and third-party), KServe in Standard mode, a GPU node, the RBAC of deploy/."""
    ours = generate_crds
    monkeypatch.setattr(aim_core.api.crds, "generate_crds", lambda: [drop_transition_rules(c) for c in ours()])
    if "access_reviews" not in request.fixturenames:
        if kube.backend == "emulator":
            kube.emulator[kmock.resource("authorization.k8s.io", "v1", "subjectaccessreviews")] << 403
        else:
            _read_only_user(kube, kubeconfig)
    if kube.backend == "emulator":  # the real server has them from the start, Established by its CRD controller
        for crd in aim_core.api.crds.generate_crds():
            kube.put_object(established(crd), resource=CRD_RESOURCE)
        for name in THIRD_PARTY:
            kube.put_object(established(load_crd(str(third_party_crd(name)))), resource=CRD_RESOURCE)
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
            "data": {"deploy": json.dumps({"defaultDeploymentMode": "Standard"})},
        }
    )
    lws_controller(kube)
    kube.put_object(amd_node("gpu-node-01"))
    kube.put_object(cpu_node())
    for name in ("role.yaml", "role_binding.yaml", "leader_election_role.yaml", "leader_election_role_binding.yaml"):
        for obj in deploy(name):
            kube.put_object(obj)
    return kube


def _read_only_user(kube, kubeconfig: Path) -> None:
    """Make the kubeconfig's user one whom RBAC lets read everything but create no SubjectAccessReview."""
    kube.set_users({READER: {"username": READER, "groups": ["system:authenticated"]}})
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": READER},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}],
        }
    )
    kube.put_object(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": READER},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": READER},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": READER}],
        }
    )
    config = yaml.safe_load(kubeconfig.read_text())
    config["users"][0]["user"]["token"] = READER
    kubeconfig.write_text(yaml.safe_dump(config))
    deadline = time.monotonic() + 20  # until the authorizer has seen the binding (its informer)
    headers = {"Authorization": f"Bearer {READER}"}
    while httpx.get(f"{kube.url}/api/v1/nodes", headers=headers).status_code != 200:
        assert time.monotonic() < deadline, "the read-only user is still refused"
        time.sleep(0.1)


async def doctor(*args: str) -> int:
    """Run the command as a user would (its own event loop, in a thread; the emulator serves on this one)."""
    return await asyncio.to_thread(main, ["doctor", *args])


async def test_a_healthy_cluster_passes_every_check(cluster, access_reviews, capsys):
    assert await doctor() == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "WARN" not in out, out
    assert f"all {len(generate_crds())} aim.eai.amd.com CRDs are installed at this version" in out
    assert "CRD inferenceservices.serving.kserve.io is Established and serves v1beta1" in out
    assert "KServe's default deployment mode is Standard" in out
    assert "CRD httproutes.gateway.networking.k8s.io is Established and serves v1" in out
    assert "CRD scaledobjects.keda.sh is Established and serves v1alpha1" in out
    assert "amd GPUs: MI300X: 8 GPUs on 1 node" in out
    assert "ServiceAccount aim-system/aim-engine-controller-manager holds all" in out
    assert "(SubjectAccessReview)" in out
    assert "0 failed, 0 warning(s)" in out


async def test_json_output_lists_every_check_with_its_level(cluster, capsys, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert await doctor("-o", "json") == 0
    assert "checking the cluster: Operator RBAC" in terminal.getvalue()  # progress: on a terminal's stderr only
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    titles = [s["title"] for s in report["sections"]]
    assert titles[0] == "aim.eai.amd.com CRDs" and titles[-2] == "GPU nodes"
    assert {"KServe (runtime builder)", "Gateway API (route builder)", "KEDA (autoscaler)"} <= set(titles)
    assert all(s["level"] == "ok" for s in report["sections"])


@pytest.mark.emulator_only(CRDS_CHANGED)
async def test_missing_kserve_fails_with_the_install_command(cluster, capsys):
    await _delete(cluster, "inferenceservices.serving.kserve.io")
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  CRD inferenceservices.serving.kserve.io is not installed (InferenceService serving.kserve.io/v1beta1)"
        in out
    )
    assert "fix: helm install kserve-crd oci://ghcr.io/kserve/charts/kserve-crd --version v0.16.0" in out


async def test_kserve_in_serverless_mode_fails_with_the_patch_that_sets_standard(cluster, capsys):
    cluster.put_object(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
            "data": {"deploy": json.dumps({"defaultDeploymentMode": "Serverless"})},
        }
    )
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "FAIL  KServe's default deployment mode is Serverless" in out
    assert "need Standard (RawDeployment)" in out
    assert "kubectl -n kserve patch configmap inferenceservice-config" in out


@pytest.mark.emulator_only(CRDS_CHANGED)
async def test_a_crd_that_does_not_serve_the_version_we_write_fails(cluster, capsys):
    crd = established(load_crd(str(third_party_crd("gateway.networking.k8s.io_httproutes.yaml"))))
    crd["spec"]["versions"] = [v for v in crd["spec"]["versions"] if v["name"] != "v1"]
    cluster.put_object(crd, resource=CRD_RESOURCE)
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  CRD httproutes.gateway.networking.k8s.io does not serve gateway.networking.k8s.io/v1 (serves v1beta1)"
    ) in out
    assert "fix: kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases" in out


@pytest.mark.emulator_only(CRDS_CHANGED)
async def test_a_crd_that_is_not_established_fails(cluster, capsys):
    crd = load_crd(str(third_party_crd("serving.kserve.io_inferenceservices.yaml")))
    crd = established(crd)
    crd["status"]["conditions"][1] = {
        "type": "Established",
        "status": "False",
        "reason": "Installing",
        "message": "the initial names have not been accepted",
    }
    cluster.put_object(crd, resource=CRD_RESOURCE)
    assert await doctor() == 1
    assert "CRD inferenceservices.serving.kserve.io is not Established: Installing" in capsys.readouterr().out


@pytest.mark.emulator_only(CRDS_CHANGED)
async def test_missing_keda_is_a_warning_until_a_service_autoscales(cluster, capsys):
    await _delete(cluster, "scaledobjects.keda.sh")
    assert await doctor() == 0
    out = capsys.readouterr().out
    assert "WARN  CRD scaledobjects.keda.sh is not installed" in out
    assert "no AIMService asks for autoscaling yet" in out
    assert "helm install keda kedacore/keda" in out
    assert await doctor("--strict") == 1
    capsys.readouterr()

    cluster.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": "chat", "namespace": "ml"},
            "spec": {"model": {"name": "qwen"}, "minReplicas": 1, "maxReplicas": 3},
        }
    )
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "FAIL  CRD scaledobjects.keda.sh is not installed" in out
    assert "1 AIMService(s) autoscale: ml/chat" in out


@pytest.mark.emulator_only(CRDS_CHANGED)
async def test_outdated_project_crds_say_to_apply_this_versions_crds(cluster, capsys):
    crd = established(next(c for c in generate_crds() if c["metadata"]["name"] == "aimservices.aim.eai.amd.com"))
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]
    cluster.put_object(crd, resource=CRD_RESOURCE)
    await _delete(cluster, "aimartifacts.aim.eai.amd.com")
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "FAIL  CRDs not installed: aimartifacts.aim.eai.amd.com" in out
    assert "FAIL  CRDs differ from this version of aim-engine (versions or schemas): aimservices.aim.eai.amd.com" in out
    assert "fix: aim-engine crds | kubectl apply --server-side -f -" in out


async def test_a_permission_missing_from_the_cluster_role_is_named(cluster, access_reviews, capsys):
    role = next(d for d in deploy("role.yaml") if d["kind"] == "ClusterRole")
    role["rules"] = [r for r in role["rules"] if "jobs" not in r.get("resources", [])]
    cluster.put_object(role)
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "FAIL  ServiceAccount aim-system/aim-engine-controller-manager lacks 6 of" in out
    assert "(SubjectAccessReview): create delete get list patch watch jobs.batch" in out
    assert "fix: kubectl apply -k deploy/" in out


async def test_an_unbound_service_account_lacks_everything(cluster, access_reviews, capsys):
    await _delete(
        cluster, "aim-engine-manager-rolebinding", resource="rbac.authorization.k8s.io/v1/clusterrolebindings"
    )
    assert await doctor("-o", "json") == 1
    report = json.loads(capsys.readouterr().out)
    rbac = report["sections"][-1]
    assert rbac["level"] == "fail"
    message = rbac["findings"][0]["message"]
    from aim_core.doctor import rbac

    cluster_rules, leader_rules = rbac.required_rules()
    cluster_wide, leader = len(rbac.permissions(cluster_rules)), len(rbac.permissions(leader_rules, "aim-system"))
    assert f"lacks {cluster_wide} of {cluster_wide + leader} permissions" in message  # the leader Role is still bound
    assert "create delete get list patch watch aimartifacts.aim.eai.amd.com" in message


async def test_without_access_reviews_the_roles_in_the_cluster_are_compared(cluster, capsys):
    assert await doctor() == 0
    out = capsys.readouterr().out
    assert "rules of ClusterRole aim-engine-manager-role and Role aim-engine-leader-election-role" in out

    leader = next(d for d in deploy("leader_election_role.yaml"))
    leader["rules"] = leader["rules"][:1]
    cluster.put_object(leader)
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "get update leases.coordination.k8s.io/3be10d2f.eai.amd.com in aim-system" in out


async def test_gpu_nodes_without_product_labels_are_named(cluster, capsys):
    bare = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "gpu-node-02", "labels": {}},
        "status": {"capacity": {"amd.com/gpu": "8", "cpu": "96"}, "allocatable": {"amd.com/gpu": "8"}},
    }
    cluster.put_object(bare)
    assert await doctor() == 0
    out = capsys.readouterr().out
    assert "WARN  amd: nodes with a GPU resource but no GPU model labels the amd plugin reads" in out
    assert "gpu-node-02 (amd.com/gpu: 8)" in out
    assert await doctor("--strict") == 1


async def test_a_cluster_without_gpus_warns(cluster, capsys):
    await _delete(cluster, "gpu-node-01", resource="v1/nodes")
    assert await doctor() == 0
    assert "WARN  no node has GPUs that the installed vendor plugins (amd, nvidia) recognise" in capsys.readouterr().out


async def test_only_installed_plugins_are_checked(cluster, capsys, monkeypatch):
    assert await doctor() == 0
    assert "CRD scaledobjects.keda.sh is Established" in capsys.readouterr().out
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "keda")
    assert await doctor() == 0
    assert "scaledobjects" not in capsys.readouterr().out


async def test_an_unreachable_api_server_exits_1_saying_so(tmp_path, monkeypatch, capsys):
    config = tmp_path / "kubeconfig"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "gone",
                "clusters": [{"name": "gone", "cluster": {"server": "http://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "u"}}],
            }
        )
    )
    assert await doctor("--kubeconfig", str(config)) == 1
    assert "aim-engine: cannot reach the API server" in capsys.readouterr().err


async def test_an_unknown_context_exits_1_naming_it(cluster, capsys):
    assert await doctor("--context", "nope") == 1
    assert "context nope" in capsys.readouterr().err


async def _delete(kube, name: str, resource: str = CRD_RESOURCE) -> None:
    async with httpx.AsyncClient(base_url=kube.url) as client:
        response = await client.delete(kube.path(resource, None, name))
        assert response.status_code == 200, response.text


async def test_a_gateway_that_routing_names_but_does_not_exist_warns(cluster, capsys):
    cluster.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterRuntimeConfig",
            "metadata": {"name": "default"},
            "spec": {"routing": {"enabled": True, "gatewayRef": {"name": "gw", "namespace": "edge"}}},
        }
    )
    assert await doctor() == 0
    out = capsys.readouterr().out
    assert "WARN  Gateway edge/gw does not exist; routing of AIMClusterRuntimeConfig default points at it" in out
    cluster.put_object(
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": "gw", "namespace": "edge"},
            "spec": {"gatewayClassName": "x", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
        }
    )
    assert await doctor() == 0
    assert "Gateway edge/gw" not in capsys.readouterr().out


async def test_a_stopped_lws_controller_fails_once_a_template_spans_nodes(cluster, capsys):
    cluster.put_object(
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "lws-webhook-service", "namespace": "lws-system"},
            "subsets": [],
        }
    )
    assert await doctor() == 0  # nothing spans nodes yet: a warning
    out = capsys.readouterr().out
    assert "WARN  the LWS controller's webhook Service lws-system/lws-webhook-service has no ready endpoint" in out
    cluster.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterServiceTemplate",
            "metadata": {"name": "big-2x8"},
            "spec": {"modelName": "big", "hardware": {"nodes": 2, "gpu": {"requests": 8}}},
        }
    )
    assert await doctor() == 1
    out = capsys.readouterr().out
    assert "FAIL  the LWS controller's webhook Service" in out
    assert "1 template(s) span several nodes: big-2x8" in out
