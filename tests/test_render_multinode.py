"""`aim-engine render` over the bundled examples plus a two-node template and the services that use it.

The two-node service gets one LeaderWorkerSet of size 2 and no InferenceService, with GPUs,
placement and cache on both pod templates, the engine arguments, the route to its leaders only
and (autoscaled) a ScaledObject on the LeaderWorkerSet; a layout that does not fit is refused;
every single-node service renders exactly as without the lws plugin.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

from aim_core.cli import main
from aim_core.cli.offline import load_documents
from aim_core.reconcile.naming import inference_service_name, shared_cache_name
from aim_testing.crdschema import third_party_crd, validate_against_crd

ROOT = Path(__file__).resolve().parents[1]
NS = "ml-team"
BASE = "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"
TWO = "qwen3-32b-2x1-mi300x"
TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}


def documents(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def services(name: str, **spec) -> dict:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"model": {"name": "qwen3-32b"}, "template": {"name": TWO}, **spec},
    }


@pytest.fixture
def world(tmp_path: Path) -> Path:
    for f in (ROOT / "examples").glob("*.yaml"):
        shutil.copy(f, tmp_path / f.name)
    docs = load_documents([ROOT / "examples"])
    [base] = [d for d in docs if d["kind"] == "AIMClusterServiceTemplate" and d["metadata"]["name"] == BASE]
    tpl = copy.deepcopy(base)
    tpl["metadata"] = {"name": TWO, "uid": "2f0c1d7e-0000-4000-8000-000000000002"}
    tpl["spec"]["hardware"]["nodes"] = 2
    tpl["status"]["resolvedHardware"]["nodes"] = 2
    tpl["status"]["hardwareSummary"] = "2 x 1 x MI300X"
    [shared] = [d for d in docs if d["kind"] == "AIMTemplateCache" and d["spec"]["templateName"] == BASE]
    cache = copy.deepcopy(shared)
    cache["metadata"] = {"name": shared_cache_name(TWO, NS), "namespace": NS, "uid": "2f0c1d7e-0000-4000-8000-03"}
    cache["spec"]["templateName"] = TWO
    extra = [
        tpl,
        cache,
        services("big", tolerations=[TOLERATION]),
        services("big-auto", minReplicas=1, maxReplicas=3),
        services("big-bad", env=[{"name": "AIM_ENGINE_ARGS", "value": '{"tensor-parallel-size": 4}'}]),
    ]
    (tmp_path / "two-nodes.yaml").write_text(yaml.safe_dump_all(extra))
    return tmp_path


def render(path: Path, capsys, monkeypatch, *, disabled: str = "") -> list[dict]:
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", disabled)
    assert main(["render", "-f", str(path), "--kind", "AIMService"]) == 0
    return documents(capsys.readouterr().out)


def of(docs: list[dict], kind: str, service: str) -> list[dict]:
    return [
        d
        for d in docs
        if d.get("kind") == kind and (d["metadata"].get("labels") or {}).get("aim.eai.amd.com/service") == service
    ]


def test_a_two_node_template_renders_a_leaderworkerset_and_single_node_services_do_not_change(
    world, capsys, monkeypatch
):
    docs = render(world, capsys, monkeypatch)
    name = inference_service_name("big", NS)

    [lws] = of(docs, "LeaderWorkerSet", "big")
    assert not of(docs, "InferenceService", "big")
    validate_against_crd(lws, third_party_crd("leaderworkerset.x-k8s.io_leaderworkersets.yaml"))
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == 2
    for role in ("leaderTemplate", "workerTemplate"):
        pod = lws["spec"]["leaderWorkerTemplate"][role]["spec"]
        [container] = pod["containers"]
        assert str(container["resources"]["limits"]["amd.com/gpu"]) == "1"
        assert TOLERATION in pod["tolerations"]
        assert pod["affinity"]["nodeAffinity"]
        assert any(v.get("persistentVolumeClaim") for v in pod["volumes"])
        args = json.loads(next(e["value"] for e in container["env"] if e["name"] == "AIM_ENGINE_ARGS"))
        assert (args["tensor-parallel-size"], args["pipeline-parallel-size"], args["nnodes"]) == (1, 2, 2)
        assert args.get("headless", False) is (role == "workerTemplate")

    [route] = of(docs, "HTTPRoute", "big")
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == f"{name}-leader"
    [leaders] = [d for d in docs if d.get("kind") == "Service" and d["metadata"]["name"] == f"{name}-leader"]
    assert leaders["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"

    [scaled] = of(docs, "ScaledObject", "big-auto")
    assert scaled["spec"]["scaleTargetRef"]["kind"] == "LeaderWorkerSet"
    validate_against_crd(scaled, third_party_crd("keda.sh_scaledobjects.yaml"))

    reports = {d["object"]: d["status"] for d in docs if "object" in d}
    bad = reports[f"AIMService {NS}/big-bad"]
    assert bad["status"] == "Failed"
    config = next(c for c in bad["conditions"] if c["type"] == "ConfigValid")
    assert "tensor-parallel-size 4" in config["message"] and "2 nodes x 1 GPUs" in config["message"]
    assert not of(docs, "LeaderWorkerSet", "big-bad")

    # every single-node service renders exactly as without the lws plugin
    without = render(world, capsys, monkeypatch, disabled="lws")
    single = {"qwen-chat", "qwen-by-image", "qwen-batch", "llama-chat", "llama-long-context"}

    def objects(rendered: list[dict]) -> list[dict]:
        return [
            d
            for d in rendered
            if "object" not in d
            and (d.get("metadata", {}).get("labels") or {}).get("aim.eai.amd.com/service") in single
        ]

    def statuses(rendered: list[dict]) -> dict:
        found = {d["object"]: d["status"] for d in rendered if "object" in d and d["object"].split("/")[-1] in single}
        for status in found.values():  # the two renders ran a second apart
            for cond in status.get("conditions") or ():
                cond.pop("lastTransitionTime", None)
        return found

    assert objects(docs) == objects(without) and objects(docs)
    assert statuses(docs) == statuses(without)


def test_explain_shows_the_layout_and_why(world, capsys, monkeypatch):
    monkeypatch.setenv("AIM_ENGINE_DISABLE_PLUGINS", "")
    assert main(["render", "-f", str(world), "--explain", "--kind", "AIMService"]) == 0
    out = capsys.readouterr().out
    assert "layout: tensor parallel 1 from the template's profile; pipeline parallel 2 is the rest" in out
    assert "layout: 2 nodes x 1 GPUs = tensor parallel 1 x pipeline parallel 2" in out
    assert "built by the 'lws' runtime builder" in out
