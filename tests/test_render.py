"""`aim-engine render`: the operator's planners over files, offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from aim_core.cli import main

ROOT = Path(__file__).resolve().parents[1]


def documents(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]


def test_render_examples_prints_the_objects_and_status_the_operator_would_write(capsys):
    assert main(["render", "-f", str(ROOT / "examples"), "--kind", "AIMService"]) == 0
    docs = documents(capsys.readouterr().out)
    reports = {d["object"]: d["status"] for d in docs if "object" in d}
    chat = reports["AIMService ml-team/qwen-chat"]
    assert chat["status"] == "Starting"
    assert chat["resolvedTemplate"]["name"].endswith("1x-mi300x-lat-fp8-31dd")  # MI325X is not in the cluster
    isvcs = [d for d in docs if d.get("kind") == "InferenceService"]
    # only the services of the template whose shared cache is Ready get one; qwen-by-image shares it
    assert sorted(i["metadata"]["name"] for i in isvcs) == ["qwen-by-image-a04542d9", "qwen-chat-a04542d9"]
    chat_isvc = next(i for i in isvcs if i["metadata"]["name"] == "qwen-chat-a04542d9")
    assert chat_isvc["spec"]["predictor"]["containers"][0]["image"] == "amdenterpriseai/aim-qwen-qwen3-32b:0.8.5"
    assert chat_isvc["metadata"]["ownerReferences"][0]["name"] == "qwen-chat"
    assert {d["kind"] for d in docs if "kind" in d} >= {"InferenceService", "HTTPRoute", "AIMTemplateCache"}


def test_explain_says_why_templates_were_rejected_and_nodes_can_come_separately(capsys, tmp_path):
    for f in (ROOT / "examples").glob("*.yaml"):
        if f.name != "nodes.yaml":
            shutil.copy(f, tmp_path / f.name)
    assert main(["render", "-f", str(tmp_path), "--explain", "--kind", "AIMService"]) == 0
    without_nodes = capsys.readouterr().out
    assert "rejected [gpu]: GPU MI300X is not in the cluster" in without_nodes
    assert "# ---- AIMService ml-team/qwen-chat: status Pending" in without_nodes

    assert (
        main(
            [
                "render",
                "-f",
                str(tmp_path),
                "--nodes",
                str(ROOT / "examples" / "nodes.yaml"),
                "--explain",
                "--kind",
                "AIMService",
            ]
        )
        == 0
    )
    with_nodes = capsys.readouterr().out
    assert "# ---- AIMService ml-team/qwen-chat: status Starting" in with_nodes
    assert "rejected [gpu]: GPU MI325X is not in the cluster" in with_nodes


def test_the_gpu_preference_setting_reaches_template_selection(capsys, tmp_path, monkeypatch):
    from tests.service.builders import amd_node, cluster_template, qwen_model, service

    monkeypatch.delenv("AIM_GPU_PREFERENCE", raising=False)
    docs = [
        qwen_model(),
        service("chat").model_name("qwen3-32b"),
        cluster_template("qwen-mi355x", "qwen3-32b").ready().optimized().gpu("MI355X", 1, ["75a3"]),
        cluster_template("qwen-mi325x", "qwen3-32b").ready().optimized().gpu("MI325X", 1, ["74a5"]),
        amd_node("new", device_id="75a3", vram="288G"),
        amd_node("older", device_id="74a5", vram="256G"),
    ]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all([dict(d) for d in docs]))

    def chosen(*flags: str) -> str:
        assert main(["render", "-f", str(tmp_path), "--kind", "AIMService", *flags]) == 0
        reports = [d for d in documents(capsys.readouterr().out) if "object" in d]
        return reports[0]["status"]["resolvedTemplate"]["name"]

    assert chosen() == "qwen-mi325x"  # upstream's order (2.11): MI325X first, newer models last
    assert chosen("--gpu-preference", "MI355X,MI350X,MI325X,MI300X") == "qwen-mi355x"
    monkeypatch.setenv("AIM_GPU_PREFERENCE", "mi355x, mi325x")
    assert chosen() == "qwen-mi355x"


def test_render_model_sources_offline_creates_explicit_images_and_lists_no_registry(capsys):
    assert main(["render", "-f", str(ROOT / "examples" / "model-sources.yaml")]) == 0
    docs = documents(capsys.readouterr().out)
    reports = {d["object"]: d["status"] for d in docs if "object" in d}
    models = [d for d in docs if d.get("kind") == "AIMClusterModel"]
    assert sorted(m["spec"]["image"] for m in models) == [
        "ghcr.io/amdenterpriseai/aim-deepseek-deepseek-r1:0.8.5",
        "ghcr.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.4",
        "ghcr.io/amdenterpriseai/aim-qwen-qwen3-32b:0.8.5",
    ]
    assert all(m["metadata"]["labels"]["aim.eai.amd.com/model-source"] == "specific-versions" for m in models)
    assert reports["AIMClusterModelSource specific-versions"]["status"] == "Ready"
    multi = reports["AIMClusterModelSource multi-registry-models"]
    filters = next(c for c in multi["conditions"] if c["type"] == "FiltersReady")
    assert multi["status"] == "Failed" and "NotListedOffline" in filters["message"]


def test_yaml_output_starts_with_the_summary_as_comments(capsys):
    assert main(["render", "-f", str(ROOT / "examples")]) == 0
    out = capsys.readouterr().out
    head = out.split("\n\n", 1)[0].splitlines()
    assert head[0].split() == ["#", "SERVICE", "TEMPLATE", "WHY", "STATUS", "WOULD", "APPLY"]
    chat = next(line for line in head if "ml-team/qwen-chat " in line)
    assert "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd" in chat
    assert "auto-selected (optimized, MI300X, latency, fp8) over 1 other candidate" in chat
    assert "Starting" in chat and "HTTPRoute qwen-chat-a04542d9, InferenceService qwen-chat-a04542d9" in chat
    named = next(line for line in head if "ml-team/qwen-batch " in line)
    assert "named in spec.template" in named
    assert len(head) == 1 + 5  # the header and the five services of examples/
    assert all(line.startswith("#") for line in head)
    documents(out)  # still one valid YAML stream


def test_summary_output_is_only_the_table_and_says_why_no_template(capsys, tmp_path):
    for f in (ROOT / "examples").glob("*.yaml"):
        if f.name != "nodes.yaml":
            shutil.copy(f, tmp_path / f.name)
    assert main(["render", "-f", str(tmp_path), "-o", "summary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["SERVICE", "TEMPLATE"] and len(lines) == 6
    chat = next(line for line in lines if line.startswith("ml-team/qwen-chat "))
    assert chat.split()[1] == "-"
    assert "TemplateNotFound: no template's GPU (MI300X, MI325X) is present in the cluster" in chat
    assert "Pending" in chat and "InferenceService" not in chat  # nothing to run it on


def test_json_output_is_one_object_with_the_summary_and_the_objects(capsys):
    import json

    assert main(["render", "-f", str(ROOT / "examples"), "-o", "json", "--kind", "AIMService", "--explain"]) == 0
    report = json.loads(capsys.readouterr().out)
    summary = {row["service"]: row for row in report["summary"]}
    assert summary["ml-team/qwen-chat"]["applies"] == [
        "HTTPRoute qwen-chat-a04542d9",
        "InferenceService qwen-chat-a04542d9",
    ]
    assert {o["kind"] for o in report["objects"]} == {"AIMService"}
    chat = next(o for o in report["objects"] if o["name"] == "qwen-chat")
    assert chat["status"]["status"] == "Starting" and chat["notes"]
    assert [c["kind"] for c in chat["apply"]] == ["HTTPRoute", "InferenceService"]


def test_input_without_services_says_so_in_the_summary(capsys):
    assert main(["render", "-f", str(ROOT / "examples" / "model-sources.yaml"), "-o", "summary"]) == 0
    assert capsys.readouterr().out == "no AIMService in the input\n"


def test_progress_goes_to_a_terminal_stderr_only(capsys, monkeypatch):
    import io
    import sys

    assert main(["render", "-f", str(ROOT / "examples"), "-o", "summary"]) == 0
    assert capsys.readouterr().err == ""  # piped or captured: silent

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["render", "-f", str(ROOT / "examples"), "-o", "summary"]) == 0
    shown = terminal.getvalue()
    assert "planning" in shown and "(of 21)" in shown  # the display ends on the last object of the 21
    assert "planning" not in capsys.readouterr().out


def test_render_shows_the_placement_of_the_inference_service_and_where_it_came_from(capsys, tmp_path):
    from tests.service.builders import MI300X_CLUSTER, ConfigBuilder, cluster_config, ready_world, service

    svc = service("chat").model_name("qwen3-32b")
    svc["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
            }
        }
    }
    cluster = cluster_config()
    cluster["spec"]["tolerations"] = [{"key": "team", "operator": "Exists"}]
    team = ConfigBuilder("AIMRuntimeConfig", "default", "ml-team")
    team["spec"]["nodeSelector"] = {"pool": "inference"}
    docs = [svc, *ready_world(svc), cluster, team, *MI300X_CLUSTER]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all([dict(d) for d in docs]))

    assert main(["render", "-f", str(tmp_path), "--kind", "AIMService", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "placement: nodeSelector from AIMRuntimeConfig ml-team/default spec.nodeSelector" in out
    assert "placement: tolerations from AIMClusterRuntimeConfig default spec.tolerations" in out
    assert "placement: affinity from AIMService ml-team/chat spec.affinity" in out
    assert "placement: toleration amd.com/gpu (Exists) added" in out
    [isvc] = [d for d in documents(out) if d.get("kind") == "InferenceService"]
    predictor = isvc["spec"]["predictor"]
    assert predictor["nodeSelector"] == {"pool": "inference"}
    assert predictor["tolerations"] == [
        {"key": "team", "operator": "Exists"},
        {"key": "amd.com/gpu", "operator": "Exists"},
    ]
    [term] = predictor["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert [e["key"] for e in term["matchExpressions"]] == ["amd.com/gpu.device-id", "zone"]


def test_explain_names_the_measurement_that_decided_or_that_none_did(capsys, tmp_path):
    from tests.service.builders import amd_node, cluster_template, qwen_model, service

    def measured(t, tps):
        t["status"]["benchmarks"] = [
            {
                "scenario": "D(128,128)",
                "concurrency": 8,
                "outputTokensPerSecond": tps,
                "benchmark": f"run-{tps:g}",
                "namespace": "ml-team",
                "completionTime": "2026-11-27T20:00:00Z",
            }
        ]
        return t

    chat = service("chat").model_name("qwen3-32b")
    chat["spec"]["template"] = {"preferMeasured": {"by": "outputTokensPerSecond", "concurrency": 8}}
    unmeasured = service("cold").model_name("qwen3-32b")
    unmeasured["spec"]["template"] = {"preferMeasured": {"by": "outputTokensPerSecond", "concurrency": 64}}
    docs = [
        qwen_model(),
        chat,
        unmeasured,
        measured(cluster_template("qwen-fp8", "qwen3-32b").ready().optimized().gpu("MI300X").precision("fp8"), 300),
        measured(cluster_template("qwen-fp16", "qwen3-32b").ready().optimized().gpu("MI300X").precision("fp16"), 450),
        amd_node("gpu-1"),
    ]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all([dict(d) for d in docs]))

    assert main(["render", "-f", str(tmp_path), "--explain", "--kind", "AIMService"]) == 0
    out = capsys.readouterr().out
    reports = {d["object"]: d["status"] for d in documents(out) if "object" in d}

    assert reports["AIMService ml-team/chat"]["resolvedTemplate"]["name"] == "qwen-fp16"
    assert reports["AIMService ml-team/cold"]["resolvedTemplate"]["name"] == "qwen-fp8"  # usual order: fp8 first
    assert (
        "measured ranking: outputTokensPerSecond at concurrency 8 in scenario D(128,128) "
        "(spec.template.preferMeasured): 2 of 2 candidates measured; the best is measured outputTokensPerSecond "
        "450 tokens/s at concurrency 8 in D(128,128) (AIMBenchmark ml-team/run-450, 2026-11-27T20:00:00Z)"
    ) in out
    assert "on measured outputTokensPerSecond at concurrency 8 in D(128,128): 450 tokens/s before 300 tokens/s" in out
    assert (
        "measured ranking: no candidate has a measurement of outputTokensPerSecond at concurrency 64 "
        "(spec.template.preferMeasured); the usual order decided"
    ) in out
