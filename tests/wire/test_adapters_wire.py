"""LoRA adapters end to end (issue 22): the real operator against the API server (the ``kube`` facade).

The cluster is the one in ``examples/`` (see tests/wire/test_services_wire.py).
The download of an adapter is played by writing the artifact's status as the
downloader and the artifact controller leave it (the artifacts are paused for
that, F13, so only the service controller acts on them).
"""

from __future__ import annotations

import copy
import json

from aim_core.reconcile.naming import artifact_name
from aim_core.service.adapters import volume_name
from tests.wire.conftest import eventually
from tests.wire.serving import serve
from tests.wire.test_services_wire import ISVC, NS, PAUSED, REACT, ROUTE, SVC, cluster, condition, create  # noqa: F401

ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
SQL, CHAT, LLAMA = "hf://acme/qwen3-sql-lora", "s3://adapters/qwen3/chat", "hf://acme/llama-lora"


def adapters(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": n, "sourceUri": u} for n, u in pairs]


def artifact_of(kube, source: str) -> dict:
    found = [a for a in kube.list(ART, NS) if a["spec"]["sourceUri"] == source]
    assert len(found) == 1, [a["metadata"]["name"] for a in found]
    return found[0]


async def downloaded(
    kube, operator, source: str, *, base: str = "Qwen/Qwen3-32B", rank: int = 16, failed: str = ""
) -> dict:
    """Play the download of ``source``'s artifact: Ready with the adapter's config, or Failed with a reason.

    The artifact is paused first and the operator left to finish what it was doing with it, so its
    controller's own status write cannot land after ours.
    """
    art = copy.deepcopy(artifact_of(kube, source))
    art["metadata"].setdefault("annotations", {}).update(PAUSED)
    art = kube.put_object(art)
    await operator.settle()
    art = copy.deepcopy(artifact_of(kube, source))
    name = art["metadata"]["name"]
    if failed:
        art["status"] = {
            "status": "Failed",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": failed,
                    "message": f"{source}: not found",
                    "lastTransitionTime": "2026-03-01T12:00:00Z",
                }
            ],
        }
    else:
        art["status"] = {
            "status": "Ready",
            "persistentVolumeClaim": f"{name}-cache-0123abcd",
            "adapter": {"baseModel": base, "rank": rank},
        }
    return kube.put_object(art)


def isvc_of(kube, service: str) -> dict:
    found = kube.list(ISVC, NS, label_selector=f"aim.eai.amd.com/service={service}")
    assert len(found) == 1
    return found[0]


def lora(isvc: dict) -> tuple[dict, list[str]]:
    """The engine arguments and the adapter mounts of an InferenceService."""
    container = isvc["spec"]["predictor"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container.get("env") or ()}
    mounts = [m["name"] for m in container["volumeMounts"] if m["name"].startswith("adapter-")]
    return json.loads(env.get("AIM_ENGINE_ARGS") or "{}"), mounts


def states(svc: dict) -> dict[str, tuple[str, str]]:
    return {a["name"]: (a["state"], a["reason"]) for a in (svc.get("status") or {}).get("adapters") or ()}


async def test_adapters_download_then_roll_in_and_a_second_service_shares_one(kube, api, cluster, operator):
    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["adapters"] = adapters(("sql", SQL), ("chat-tuned", CHAT))
    await create(api, kube, body)

    # two artifacts, unowned, named by source; the base model serves meanwhile
    arts = await eventually(
        lambda: (
            len(kube.list(ART, NS, label_selector="aim.eai.amd.com/adapter=true")) == 2
            and kube.list(ART, NS, label_selector="aim.eai.amd.com/adapter=true")
        )
    )
    assert {a["metadata"]["name"] for a in arts} == {artifact_name(SQL), artifact_name(CHAT)}
    assert not any(a["metadata"].get("ownerReferences") for a in arts)
    isvc = await eventually(lambda: isvc_of(kube, "qwen-chat"))
    assert lora(isvc) == ({}, [])
    serve(kube, isvc)

    def running_while_downloading():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert svc["status"]["status"] == "Running", svc["status"]
        assert condition(svc, "AdaptersReady")["reason"] == "AdaptersDownloading"
        assert {s for s, _ in states(svc).values()} <= {"Pending", "Downloading"}
        return svc

    await eventually(running_while_downloading)

    # the weights arrive: the predictor gets both adapters at once
    await downloaded(kube, operator, SQL)
    await downloaded(kube, operator, CHAT, rank=32)

    def rolled():
        args, mounts = lora(isvc_of(kube, "qwen-chat"))
        assert sorted(mounts) == sorted([volume_name("sql"), volume_name("chat-tuned")])
        assert args["enable-lora"] is True and args["max-loras"] == 2 and args["max-lora-rank"] == 32
        assert [m.split("=")[0] for m in args["lora-modules"]] == ["sql", "chat-tuned"]
        return True

    await eventually(rolled, timeout=REACT)
    serve(kube, isvc_of(kube, "qwen-chat"))

    def all_served():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert condition(svc, "AdaptersReady")["status"] == "True", condition(svc, "AdaptersReady")
        assert svc["status"]["status"] == "Running"
        assert svc["status"]["adapterSummary"] == "2/2"
        return svc

    await eventually(all_served, timeout=REACT)

    # a second service with one of the adapters uses the same artifact
    other = copy.deepcopy(cluster["qwen-batch"])
    other["spec"]["adapters"] = adapters(("sql", SQL))
    await create(api, kube, other)

    def shared():
        svc = kube.get(SVC, NS, "qwen-batch")
        assert svc["status"]["adapters"][0]["artifact"] == artifact_name(SQL)
        return svc

    await eventually(shared, timeout=REACT)
    assert len(kube.list(ART, NS, label_selector="aim.eai.amd.com/adapter=true")) == 2


async def test_a_mismatched_base_and_an_unreachable_source_fail_alone_and_removal_rolls_out(
    kube, api, cluster, operator
):
    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["adapters"] = adapters(("sql", SQL), ("llama", LLAMA), ("chat-tuned", CHAT))
    await create(api, kube, body)
    await eventually(lambda: len(kube.list(ART, NS, label_selector="aim.eai.amd.com/adapter=true")) == 3)
    await downloaded(kube, operator, SQL)
    await downloaded(kube, operator, LLAMA, base="meta-llama/Llama-3.1-8B-Instruct")
    await downloaded(kube, operator, CHAT, failed="SourceNotFound")

    def degraded():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert states(svc) == {
            "sql": ("Ready", "Served"),
            "llama": ("Failed", "AdapterBaseModelMismatch"),
            "chat-tuned": ("Failed", "AdapterDownloadFailed"),
        }
        assert svc["status"]["status"] == "Degraded"
        assert condition(svc, "AdaptersReady")["status"] == "False"
        return svc

    svc = await eventually(degraded, timeout=REACT)
    assert "SourceNotFound" in {a["name"]: a for a in svc["status"]["adapters"]}["chat-tuned"]["message"]
    args, mounts = await eventually(lambda: lora(isvc_of(kube, "qwen-chat"))[1] and lora(isvc_of(kube, "qwen-chat")))
    assert mounts == [volume_name("sql")]
    assert args["lora-modules"] == [f"sql=/workspace/adapters/{volume_name('sql')}"]

    # the failed adapters removed: the service recovers; then sql removed too: the predictor drops it
    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"),
        json={"spec": {"adapters": adapters(("sql", SQL))}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    await eventually(lambda: states(kube.get(SVC, NS, "qwen-chat")) == {"sql": ("Ready", "Served")}, timeout=REACT)
    assert condition(kube.get(SVC, NS, "qwen-chat"), "AdaptersReady")["status"] == "True"

    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"),
        json={"spec": {"adapters": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def dropped():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert "adapters" not in svc["status"] and condition(svc, "AdaptersReady") is None
        isvc = isvc_of(kube, "qwen-chat")
        assert lora(isvc) == ({}, [])
        assert not [v for v in isvc["spec"]["predictor"]["volumes"] if v["name"].startswith("adapter-")]
        assert any(v.get("persistentVolumeClaim") for v in isvc["spec"]["predictor"]["volumes"])  # the model stays
        return True

    await eventually(dropped, timeout=REACT)
    assert kube.get(ART, NS, artifact_name(SQL)) is not None  # left for reuse (or eviction)


async def test_describe_service_shows_each_adapter_and_its_artifact(kube, api, cluster, operator, kubeconfig, capsys):
    import asyncio

    from aim_core.cli import main

    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["adapters"] = adapters(("sql", SQL), ("chat-tuned", CHAT))
    await create(api, kube, body)
    await eventually(lambda: len(kube.list(ART, NS, label_selector="aim.eai.amd.com/adapter=true")) == 2)
    await downloaded(kube, operator, SQL, rank=8)
    await eventually(lambda: states(kube.get(SVC, NS, "qwen-chat")).get("sql") == ("Ready", "Served"), timeout=REACT)

    assert await asyncio.to_thread(main, ["describe", "service", "qwen-chat", "-n", NS, "-o", "json"]) == 0
    chain = json.loads(capsys.readouterr().out)
    found = {c["name"]: c for c in chain["children"] if c["kind"] == "Adapter"}
    assert (found["sql"]["state"], found["sql"]["reason"]) == ("Ready", "Served")
    assert found["sql"]["details"] == {"sourceUri": SQL, "baseModel": "Qwen/Qwen3-32B", "rank": 8}
    assert [(a["kind"], a["name"], a["state"]) for a in found["sql"]["children"]] == [
        ("AIMArtifact", artifact_name(SQL), "Ready")
    ]
    assert found["chat-tuned"]["state"] in ("Pending", "Downloading")
    assert found["chat-tuned"]["children"][0]["name"] == artifact_name(CHAT)

    assert await asyncio.to_thread(main, ["describe", "service", "qwen-chat", "-n", NS]) == 0
    text = capsys.readouterr().out
    assert [line for line in text.splitlines() if "Adapter sql" in line and "Served" in line]
    assert [line for line in text.splitlines() if f"AIMArtifact {NS}/{artifact_name(SQL)}" in line]


async def test_the_api_server_refuses_bad_adapter_names_duplicates_and_ranks(kube, api):
    """What the schema catches never reaches the operator (the emulator does not check all of it: docs/testing.md)."""
    import pytest

    from aim_testing.fixtures import Kube

    if isinstance(kube, Kube):
        pytest.skip("the emulator checks no list-map key uniqueness and no CEL rule but immutability (docs/testing.md)")
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    good = {"name": "ft:qwen3:acme:sql", "sourceUri": SQL}
    cases = {
        "space": {"adapters": [{"name": "has space", "sourceUri": SQL}]},
        "equals": {"adapters": [{"name": "a=b", "sourceUri": SQL}]},
        "scheme": {"adapters": [{"name": "sql", "sourceUri": "ftp://x/y"}]},
        "duplicate": {"adapters": [good, {**good, "sourceUri": CHAT}]},
        "rank": {"adapters": [good], "adapterLimits": {"maxRank": 48}},
        "base-name": {"adapters": [{"name": "m", "sourceUri": SQL}]},
        "fine": {
            "adapters": [good, {"name": "acme/chat.v2", "sourceUri": CHAT}],
            "adapterLimits": {"maxLoaded": 2, "maxRank": 64},
        },
    }
    codes = {}
    for case, extra in cases.items():
        body = {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": f"bad-{case}", "namespace": NS},
            "spec": {"model": {"name": "m"}, **extra},
        }
        codes[case] = (await api.post(kube.path(SVC, NS), json=body)).status_code
    assert codes == {
        "space": 422,
        "equals": 422,
        "scheme": 422,
        "duplicate": 422,
        "rank": 422,
        "base-name": 422,
        "fine": 201,
    }


async def test_an_adapter_artifact_no_service_uses_goes_after_its_retention(kube, api, cluster, operator):
    # a short retention for the namespace; the default is a week (docs/adapters.md)
    config = copy.deepcopy(kube.get("aim.eai.amd.com/v1alpha1/aimruntimeconfigs", NS, "default"))
    config["spec"]["artifact"] = {"unusedAdapterRetention": "6s"}
    kube.put_object(config)
    # a user's own artifact, labelled as if it were an adapter's: never deleted by retention
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMArtifact",
            "metadata": {"name": "my-weights", "namespace": NS, "labels": {"aim.eai.amd.com/adapter": "true"}},
            "spec": {"sourceUri": LLAMA},
        }
    )
    body = copy.deepcopy(cluster["qwen-chat"])
    body["spec"]["adapters"] = adapters(("sql", SQL))
    await create(api, kube, body)

    def listed():
        svc = kube.get(SVC, NS, "qwen-chat")
        assert svc["status"]["adapters"][0]["artifact"] == artifact_name(SQL), svc["status"]
        assert kube.get(ART, NS, artifact_name(SQL))["status"]["lastUsed"]  # in use, so it stays
        return svc

    await eventually(listed, timeout=REACT * 2)
    response = await api.delete(kube.path(SVC, NS, "qwen-chat"))
    assert response.status_code in (200, 202), response.text

    await eventually(lambda: kube.get(ART, NS, artifact_name(SQL)) is None, timeout=60)
    assert kube.get(ART, NS, "my-weights") is not None
