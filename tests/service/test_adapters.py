"""LoRA adapters on a served model (issue 22): what the service plan renders and reports.

Each test plans a real service over the objects a store would hold (model,
template and cache Ready, the adapters' artifacts in some state) and checks
what a user would see: the artifacts created, the InferenceService's mounts
and engine arguments, ``status.adapters``, ``AdaptersReady`` and the root status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aim_core.reconcile.naming import artifact_name
from aim_core.service.adapters import volume_name
from aim_testing.crdschema import crd_errors
from tests.service.builders import (
    NS,
    QWEN,
    QWEN_SOURCE,
    Obj,
    applied,
    condition,
    live,
    pod,
    prepared,
    ready_world,
    reason,
    run,
    service,
)

SQL, CHAT = "hf://acme/qwen3-sql-lora", "s3://adapters/qwen3/chat"


def with_adapters(svc: Obj, *adapters: tuple[str, str], **limits: Any) -> Obj:
    svc["spec"]["adapters"] = [{"name": n, "sourceUri": u} for n, u in adapters]
    if limits:
        svc["spec"]["adapterLimits"] = limits
    return svc


def artifact(
    source: str,
    state: str = "Ready",
    *,
    base: str | None = QWEN_SOURCE,
    rank: int | None = 16,
    name: str | None = None,
    reason_: str = "",
    message: str = "",
    **status: Any,
) -> Obj:
    art = Obj("AIMArtifact", name or artifact_name(source), NS)
    art["spec"] = {"sourceUri": source}
    st: dict[str, Any] = {"status": state, **status}
    if state in ("Ready", "Progressing"):
        st["persistentVolumeClaim"] = f"{art.name}-cache-0123abcd"
    if state == "Ready" and (base or rank):
        st["adapter"] = {k: v for k, v in (("baseModel", base), ("rank", rank)) if v is not None}
    if reason_:
        st["conditions"] = [{"type": "Ready", "status": "False", "reason": reason_, "message": message}]
    art["status"] = st
    return art


def serving(plan, svc) -> dict[str, Any]:
    isvc = prepared(plan, svc, "InferenceService")
    return isvc["spec"]["predictor"]


def engine_args(predictor: dict[str, Any]) -> dict[str, Any]:
    env = {e["name"]: e.get("value") for e in predictor["containers"][0].get("env") or ()}
    return json.loads(env.get("AIM_ENGINE_ARGS") or "{}")


def adapter_mounts(predictor: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in predictor["containers"][0]["volumeMounts"] if m["name"].startswith("adapter-")]


def states(status: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {a["name"]: (a["state"], a["reason"]) for a in status.get("adapters") or ()}


def running(svc: Obj, *objects: Any) -> tuple[Any, dict[str, Any]]:
    """Plan twice: create the InferenceService, then again with it Ready and its pod serving."""
    world = (*ready_world(svc), *objects)
    first, _ = run(svc, *world)
    isvc = live(prepared(first, svc, "InferenceService"), ready=True)
    return run(svc, *world, runtime=isvc, pods=[pod(isvc["metadata"]["name"])])


# ---------------------------------------------------------------- artifacts


def test_two_adapters_get_two_shared_artifacts_and_the_base_keeps_running_while_they_download() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))

    plan, status = running(svc)

    made = {a["spec"]["sourceUri"]: a for a in applied(plan, "AIMArtifact")}
    assert set(made) == {SQL, CHAT}
    assert made[SQL]["metadata"]["name"] == artifact_name(SQL)
    assert made[SQL]["metadata"]["labels"]["aim.eai.amd.com/adapter"] == "true"
    assert not [d for d in plan.apply if d.resource.kind == "AIMArtifact" and d.owned]  # outlive the service
    assert states(status) == {"sql": ("Pending", "CreatingArtifact"), "chat-tuned": ("Pending", "CreatingArtifact")}
    assert status["status"] == "Running"
    assert reason(status, "AdaptersReady") == ("False", "AdaptersDownloading")
    assert status["adapterSummary"] == "0/2"
    assert engine_args(serving(plan, svc)) == {}  # nothing changes on the predictor while downloading
    assert adapter_mounts(serving(plan, svc)) == []


def test_ready_adapters_are_mounted_read_only_and_passed_to_the_engine() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))
    svc.env("AIM_ENGINE_ARGS", '{"max-model-len": 8192}')

    plan, status = running(svc, artifact(SQL, rank=8), artifact(CHAT, rank=48))

    predictor = serving(plan, svc)
    mounts = {m["name"]: m for m in adapter_mounts(predictor)}
    assert set(mounts) == {volume_name("sql"), volume_name("chat-tuned")}
    assert all(m["readOnly"] for m in mounts.values())
    volumes = {v["name"]: v for v in predictor["volumes"]}
    assert volumes[volume_name("sql")]["persistentVolumeClaim"] == {
        "claimName": f"{artifact_name(SQL)}-cache-0123abcd",
        "readOnly": True,
    }
    args = engine_args(predictor)
    assert args == {
        "enable-lora": True,
        "max-loras": 2,
        "max-lora-rank": 64,
        "max-model-len": 8192,  # the user's kept
        "lora-modules": [
            f"sql={mounts[volume_name('sql')]['mountPath']}",
            f"chat-tuned={mounts[volume_name('chat-tuned')]['mountPath']}",
        ],
    }
    assert not applied(plan, "AIMArtifact")
    assert states(status) == {"sql": ("Ready", "Served"), "chat-tuned": ("Ready", "Served")}
    assert [a["artifact"] for a in status["adapters"]] == [artifact_name(SQL), artifact_name(CHAT)]
    assert reason(status, "AdaptersReady") == ("True", "AllAdaptersServed")
    assert status["status"] == "Running"
    assert status["adapterSummary"] == "2/2"


def test_a_second_service_with_the_same_adapter_reuses_its_artifact() -> None:
    existing = artifact(SQL, "Progressing", name="made-by-another-service")
    svc = with_adapters(service("other").model_name(QWEN), ("sql", SQL))

    plan, status = running(svc, existing)

    assert not applied(plan, "AIMArtifact")
    assert status["adapters"][0]["artifact"] == "made-by-another-service"
    assert states(status) == {"sql": ("Downloading", "Downloading")}


def test_an_artifact_owned_by_something_else_is_not_taken() -> None:
    dedicated = artifact(SQL, name="dedicated-one")
    dedicated.meta["ownerReferences"] = [
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "name": "x",
            "uid": "u",
            "controller": True,
        }
    ]
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))

    plan, _ = running(svc, dedicated)

    assert [a["metadata"]["name"] for a in applied(plan, "AIMArtifact")] == [artifact_name(SQL)]


# ---------------------------------------------------------------- failures: the rest still serves


def test_a_base_model_mismatch_and_an_unreachable_source_each_fail_their_adapter_and_the_rest_serves() -> None:
    other = "hf://acme/llama-lora"
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("llama", other), ("chat-tuned", CHAT))
    mismatch = artifact(other, base="meta-llama/Llama-3.1-8B-Instruct")
    unreachable = artifact(CHAT, "Failed", reason_="SourceNotFound", message="no such bucket: adapters")

    plan, status = running(svc, artifact(SQL), mismatch, unreachable)

    assert states(status) == {
        "sql": ("Ready", "Served"),
        "llama": ("Failed", "AdapterBaseModelMismatch"),
        "chat-tuned": ("Failed", "AdapterDownloadFailed"),
    }
    by_name = {a["name"]: a for a in status["adapters"]}
    assert "meta-llama/Llama-3.1-8B-Instruct" in by_name["llama"]["message"]
    assert QWEN_SOURCE in by_name["llama"]["message"]
    assert "SourceNotFound" in by_name["chat-tuned"]["message"]
    assert status["status"] == "Degraded"
    adapters_ready = condition(status, "AdaptersReady")
    assert adapters_ready["status"] == "False" and adapters_ready["reason"] == "AdapterBaseModelMismatch"
    assert "chat-tuned" in adapters_ready["message"] and "1 served" in adapters_ready["message"]
    assert [m.split("=")[0] for m in engine_args(serving(plan, svc))["lora-modules"]] == ["sql"]
    assert reason(status, "InferenceServiceReady") == ("True", "RuntimeReady")


def test_a_rank_above_the_explicit_limit_fails_only_that_adapter() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT), maxRank=16)

    plan, status = running(svc, artifact(SQL, rank=16), artifact(CHAT, rank=64))

    assert states(status)["chat-tuned"] == ("Failed", "AdapterRankTooHigh")
    assert "rank 64" in status["adapters"][1]["message"]
    args = engine_args(serving(plan, svc))
    assert args["max-lora-rank"] == 16 and len(args["lora-modules"]) == 1


def test_weights_without_an_adapter_config_are_not_served() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))
    art = artifact(SQL)
    art["status"]["adapter"] = {"problem": "no adapter_config.json"}

    plan, status = running(svc, art)

    assert states(status) == {"sql": ("Failed", "AdapterConfigInvalid")}
    assert engine_args(serving(plan, svc)) == {}


def test_an_adapter_named_like_the_base_model_is_refused() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), (QWEN, SQL), ("sql", CHAT))

    plan, status = running(svc, artifact(SQL), artifact(CHAT))

    assert states(status) == {QWEN: ("Failed", "AdapterNameConflict"), "sql": ("Ready", "Served")}
    assert [a["spec"]["sourceUri"] for a in applied(plan, "AIMArtifact")] == []


def test_a_users_own_lora_modules_are_kept_and_reported_as_a_conflict() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))
    svc.env("AIM_ENGINE_ARGS", '{"lora-modules": ["mine=/models/mine"], "max-loras": 4}')

    plan, status = running(svc, artifact(SQL))

    args = engine_args(serving(plan, svc))
    assert args["lora-modules"] == ["mine=/models/mine"] and args["max-loras"] == 4  # never clobbered
    assert states(status) == {"sql": ("Failed", "LoraModulesConflict")}
    assert reason(status, "AdaptersReady") == ("False", "LoraModulesConflict")
    assert status["status"] == "Degraded"


# ---------------------------------------------------------------- changes


def test_removing_an_adapter_drops_its_mount_and_engine_argument_and_its_reference() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))
    objects = (*ready_world(svc), artifact(SQL), artifact(CHAT))
    both, _ = run(svc, *objects)
    isvc = live(prepared(both, svc, "InferenceService"), ready=True)
    assert len(adapter_mounts(isvc["spec"]["predictor"])) == 2

    fewer = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))
    plan, status = run(fewer, *objects, runtime=isvc, pods=[pod(isvc["metadata"]["name"])])

    predictor = serving(plan, fewer)
    assert [m["name"] for m in adapter_mounts(predictor)] == [volume_name("sql")]
    assert volume_name("chat-tuned") not in {v["name"] for v in predictor["volumes"]}
    assert [m.split("=")[0] for m in engine_args(predictor)["lora-modules"]] == ["sql"]
    assert [a["artifact"] for a in status["adapters"]] == [artifact_name(SQL)]
    # the cache volume is still carried over from the live object
    assert any(
        v["name"].startswith("qwen") or "persistentVolumeClaim" in v
        for v in predictor["volumes"]
        if not v["name"].startswith("adapter-")
    )


def test_adding_an_adapter_changes_nothing_until_its_weights_are_ready() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))
    objects = (*ready_world(svc), artifact(SQL))
    first, _ = run(svc, *objects)
    isvc = live(prepared(first, svc, "InferenceService"), ready=True)

    more = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))
    downloading, status = run(
        more,
        *objects,
        artifact(CHAT, "Progressing", progress={"percentage": 40}),
        runtime=isvc,
        pods=[pod(isvc["metadata"]["name"])],
    )
    assert serving(downloading, more) == isvc["spec"]["predictor"]
    assert states(status)["chat-tuned"] == ("Downloading", "Downloading")
    assert status["adapters"][1]["message"] == f"artifact {artifact_name(CHAT)} is Progressing"
    assert status["status"] == "Running"

    ready, status = run(more, *objects, artifact(CHAT), runtime=isvc, pods=[pod(isvc["metadata"]["name"])])
    assert len(adapter_mounts(serving(ready, more))) == 2
    assert reason(status, "AdaptersReady") == ("True", "AllAdaptersServed")


def test_a_service_without_adapters_reports_nothing_about_them() -> None:
    svc = service("chat").model_name(QWEN)
    svc.setdefault("status", {})["adapters"] = [{"name": "old", "state": "Ready", "reason": "Served"}]

    plan, status = running(svc)

    assert "adapters" not in status and "adapterSummary" not in status
    assert condition(status, "AdaptersReady") is None
    assert engine_args(serving(plan, svc)) == {}
    assert not applied(plan, "AIMArtifact")


# ---------------------------------------------------------------- the schema


@pytest.fixture(scope="module")
def service_crd(tmp_path_factory) -> Path:
    path = Path(__file__).resolve().parents[2] / "aim_core" / "crds" / "aim.eai.amd.com_crds.yaml"
    crd = next(
        d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d["spec"]["names"]["kind"] == "AIMService"
    )
    out = tmp_path_factory.mktemp("crd") / "aimservice.yaml"
    out.write_text(yaml.safe_dump(crd), encoding="utf-8")
    return out


@pytest.mark.parametrize(
    "adapters",
    [
        [{"name": "has space", "sourceUri": SQL}],
        [{"name": "a=b", "sourceUri": SQL}],
        [{"name": "-leading", "sourceUri": SQL}],
        [{"name": "x" * 129, "sourceUri": SQL}],
        [{"name": "sql", "sourceUri": "ftp://x/y"}],
        [{"name": "sql"}],
        [{"name": "sql", "sourceUri": SQL}, {"name": "sql", "sourceUri": CHAT}],
    ],
    ids=["space", "equals", "leading-dash", "too-long", "scheme", "no-source", "duplicate"],
)
def test_the_api_server_refuses_bad_adapters(service_crd, adapters) -> None:
    svc = service("chat").model_name(QWEN)
    svc["spec"]["adapters"] = adapters
    assert crd_errors(dict(svc), service_crd)


def test_the_api_server_accepts_openai_style_names_and_vllm_limits(service_crd) -> None:
    svc = with_adapters(
        service("chat").model_name(QWEN), ("ft:qwen3:acme:sql", SQL), ("acme/chat.v2", CHAT), maxLoaded=2, maxRank=64
    )
    assert crd_errors(dict(svc), service_crd) == []
    svc["spec"]["adapterLimits"]["maxRank"] = 48  # not a rank vLLM accepts
    assert crd_errors(dict(svc), service_crd)


def test_render_explain_shows_the_adapters_artifacts_mounts_and_engine_arguments(tmp_path, capsys) -> None:
    import shutil

    from aim_core.cli import main

    root = Path(__file__).resolve().parents[2]
    for f in (root / "examples").glob("*.yaml"):
        if f.name != "model-sources.yaml":
            shutil.copy(f, tmp_path / f.name)
    svc = with_adapters(service("qwen-lora").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))
    ready = artifact(SQL, name="sql-lora", base="Qwen/Qwen3-32B", rank=8)
    (tmp_path / "adapters.yaml").write_text(yaml.safe_dump_all([dict(svc), dict(ready)]), encoding="utf-8")

    assert main(["render", "-f", str(tmp_path), "--explain", "--kind", "AIMService"]) == 0
    out = capsys.readouterr().out

    mount = f"/workspace/adapters/{volume_name('sql')}"
    assert "#   adapter sql: Ready Served" in out
    assert f"#   adapter chat-tuned: Pending CreatingArtifact (creating artifact {artifact_name(CHAT)}" in out
    assert f'#   adapters: engine args {{"enable-lora":true,"lora-modules":["sql={mount}"]' in out
    assert f"#   adapters: mount {volume_name('sql')} at {mount} (read-only)" in out
    assert f"applies AIMArtifact {NS}/{artifact_name(CHAT)}" in out


def test_ready_weights_without_a_reported_adapter_config_are_not_served() -> None:
    """Files without adapter_config.json (or a downloader that does not read it) would break vLLM's start."""
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL), ("chat-tuned", CHAT))

    plan, status = running(svc, artifact(SQL, base=None, rank=None), artifact(CHAT))

    assert states(status) == {"sql": ("Failed", "AdapterConfigInvalid"), "chat-tuned": ("Ready", "Served")}
    assert "no adapter_config.json was reported" in status["adapters"][0]["message"]
    assert [m.split("=")[0] for m in engine_args(serving(plan, svc))["lora-modules"]] == ["chat-tuned"]


def test_a_mismatch_the_size_check_found_fails_the_adapter_before_the_download() -> None:
    svc = with_adapters(service("chat").model_name(QWEN), ("sql", SQL))
    checking = artifact(SQL, "Progressing")
    checking["status"]["adapter"] = {"baseModel": "meta-llama/Llama-3.1-8B-Instruct", "rank": 16}

    _, status = running(svc, checking)

    assert states(status) == {"sql": ("Failed", "AdapterBaseModelMismatch")}
    assert status["status"] == "Degraded"
