"""`aim-engine describe service` against the API emulator, with the real operator having reconciled the chain.

The cluster is the one in ``examples/`` (as in test_services_wire.py): Ready models,
templates and a Ready shared cache with its artifact; the operator creates the
InferenceService and HTTPRoute, and the test plays KServe and the gateway.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re

import pytest

from aim_core.cli import main
from tests.wire.conftest import eventually
from tests.wire.serving import serve
from tests.wire.test_services_wire import NS, ROUTE, SVC, cluster, condition, create  # noqa: F401 - fixture

ISVC = "serving.kserve.io/v1beta1/inferenceservices"


async def describe(*args: str) -> int:
    return await asyncio.to_thread(main, ["describe", "service", *args])


def lines_with(text: str, *words: str) -> list[str]:
    return [line for line in text.splitlines() if all(w in line for w in words)]


async def running_chat(kube, api, cluster, body=None):  # noqa: F811 - the fixture of the same name
    body = body or cluster["qwen-chat"]
    service = body["metadata"]["name"]
    await create(api, kube, body)
    isvc = await eventually(lambda: kube.list(ISVC, NS, label_selector=f"aim.eai.amd.com/service={service}")[0])
    route = await eventually(lambda: kube.list(ROUTE, NS, label_selector=f"aim.eai.amd.com/service={service}")[0])
    name = isvc["metadata"]["name"]
    serve(kube, isvc)
    if not body["spec"].get("maxReplicas"):
        await eventually(lambda: kube.get(SVC, NS, service)["status"]["status"] == "Running")
    return name, route["metadata"]["name"]


async def test_a_running_service_shows_its_whole_chain(kube, api, cluster, operator, kubeconfig, capsys):  # noqa: F811
    isvc, route = await running_chat(kube, api, cluster)
    assert await describe("qwen-chat", "-n", NS) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out  # piped: no colours
    first = out.splitlines()[0]
    assert first.startswith(f"AIMService {NS}/qwen-chat  Running  AllComponentsReady")
    assert lines_with(out, "AIMClusterModel qwen3-32b", "Ready")
    [template] = lines_with(out, "1x-mi300x-lat-fp8-31dd", "Ready")
    assert "AIMClusterServiceTemplate" in template or "AIMServiceTemplate" in template
    assert lines_with(out, "AIMTemplateCache", "Ready")
    assert lines_with(out, "AIMArtifact", "Ready")
    assert lines_with(out, f"InferenceService {NS}/{isvc}", "Ready")
    assert lines_with(out, f"HTTPRoute {NS}/{route}", "Ready")
    # the tree: the model under the service, the template under the model, the cache under the template
    order = [
        next(i for i, line in enumerate(out.splitlines()) if word in line)
        for word in ("AIMService ", "Model ", "Template ", "AIMTemplateCache", "AIMArtifact")
    ]
    assert order == sorted(order)

    assert await describe("qwen-chat", "-n", NS, "-o", "json") == 0
    chain = json.loads(capsys.readouterr().out)
    assert (chain["kind"], chain["state"]) == ("AIMService", "Running")
    kinds = [c["kind"] for c in chain["children"]]
    assert kinds == ["AIMClusterModel", "InferenceService", "HTTPRoute"]
    template = chain["children"][0]["children"][0]
    cache = template["children"][0]
    assert cache["kind"] == "AIMTemplateCache" and cache["state"] == "Ready"
    assert cache["children"][0]["kind"] == "AIMArtifact"


async def test_a_service_whose_model_does_not_exist_says_so(kube, api, cluster, operator, kubeconfig, capsys):  # noqa: F811
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "lost", "namespace": NS},
        "spec": {"model": {"name": "no-such-model"}},
    }
    await create(api, kube, body)
    await eventually(lambda: condition(kube.get(SVC, NS, "lost"), "ModelReady")["status"] == "False")
    assert await describe("lost", "-n", NS) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"AIMService {NS}/lost  ")
    assert "Failed  ReferenceNotFound: model 'no-such-model' not found" in first
    [model] = lines_with(out, f"AIMModel {NS}/no-such-model")
    assert "Missing" in model
    assert f"neither AIMModel {NS}/no-such-model nor AIMClusterModel no-such-model exists" in model
    [template] = lines_with(out, "AIMServiceTemplate")
    assert "AIMServiceTemplate (none)  Missing" in template
    assert "no template can be chosen before the model is found" in template
    [isvc] = lines_with(out, "InferenceService ")
    assert "Missing" in isvc and "waiting for a Ready template" in isvc


async def test_a_missing_service_exits_1_naming_it(kube, kubeconfig, capsys):
    assert await describe("ghost", "-n", "nowhere") == 1
    err = capsys.readouterr().err
    assert "aim-engine: AIMService nowhere/ghost not found" in err


async def test_the_namespace_defaults_to_the_contexts(kube, kubeconfig, capsys):
    # the kubeconfig fixture's context names the namespace "default"
    assert await describe("ghost") == 1
    assert "AIMService default/ghost not found" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--context"])
async def test_an_unknown_context_exits_1(kube, kubeconfig, capsys, flag):
    assert await describe("x", flag, "nope") == 1
    assert "context nope" in capsys.readouterr().err


async def test_colours_on_a_terminal_unless_no_color(kube, kubeconfig, monkeypatch):
    import io
    import sys

    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": "bare", "namespace": NS},
            "spec": {"model": {"name": "m"}},
            "status": {
                "status": "Failed",
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False",
                        "reason": "ReferenceNotFound",
                        "message": "no m",
                        "lastTransitionTime": "2025-01-01T00:00:00Z",
                    }
                ],
            },
        }
    )

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    for no_color, coloured in ((None, True), ("1", False)):
        if no_color:
            monkeypatch.setenv("NO_COLOR", no_color)
        terminal = Terminal()
        monkeypatch.setattr(sys, "stdout", terminal)
        assert await describe("bare", "-n", NS) == 0
        shown = terminal.getvalue()
        assert "AIMService" in shown and "ReferenceNotFound" in shown
        colour = re.search(r"\x1b\[[0-9;]*(?:3[0-7]|9[0-7]|38;[0-9;]+)m", shown)  # a foreground colour
        assert bool(colour) is coloured, shown  # NO_COLOR keeps bold, drops colours (no-color.org)


POD_METRIC = {
    "type": "PodMetric",
    "podmetric": {
        "metric": {
            "backend": "opentelemetry",
            "metricNames": ["vllm:num_requests_running"],
            "query": "vllm:num_requests_running",
            "operationOverTime": "avg",
        },
        "target": {"type": "Value", "value": "1"},
    },
}


def scaled_object(isvc: str, conditions: list[dict]) -> dict:
    """The ScaledObject KServe builds for the InferenceService (wire-facts 2.7), with KEDA's status."""
    query = f'sum(vllm:num_requests_running{{namespace="{NS}", deployment="{isvc}-predictor"}})'
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": f"{isvc}-predictor", "namespace": NS},
        "spec": {
            "scaleTargetRef": {"name": f"{isvc}-predictor"},
            "minReplicaCount": 1,
            "maxReplicaCount": 3,
            "triggers": [
                {
                    "type": "external",
                    "metadata": {
                        "scalerAddress": "keda-otel-scaler.keda.svc:4318",
                        "metricQuery": query,
                        "targetValue": "1",
                        "operationOverTime": "avg",
                    },
                }
            ],
        },
        "status": {"conditions": conditions},
    }


async def test_a_keda_autoscaled_service_shows_its_scaledobject_above_the_hpa(
    kube, api, cluster, operator, kubeconfig, capsys
):  # noqa: F811
    body = copy.deepcopy(cluster["qwen-chat"])
    body["metadata"]["name"] = "scaled"
    body["spec"].update(minReplicas=1, maxReplicas=3, autoScaling={"metrics": [POD_METRIC]})
    isvc, _ = await running_chat(kube, api, cluster, body)
    assert kube.get(ISVC, NS, isvc)["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "keda"

    # Before KServe builds it: the ScaledObject is missing, the HPA under it too.
    assert await describe("scaled", "-n", NS) == 0
    out = capsys.readouterr().out
    [missing] = lines_with(out, f"ScaledObject {NS}/{isvc}-predictor")
    assert "Missing" in missing and "the operator does not create it" in missing

    # KServe builds it, KEDA accepts it (not active: no load) and creates the HPA.
    kube.put_object(
        scaled_object(
            isvc,
            [
                {"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ScaledObject is ready"},
                {
                    "type": "Active",
                    "status": "False",
                    "reason": "ScalerNotActive",
                    "message": "triggers are not active",
                },
                {"type": "Fallback", "status": "False", "reason": "NoFallbackFound"},
            ],
        )
    )
    kube.put_object(
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": f"keda-hpa-{isvc}-predictor", "namespace": NS},
            "spec": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"{isvc}-predictor"},
            },
            "status": {
                "currentReplicas": 1,
                "desiredReplicas": 1,
                "conditions": [{"type": "AbleToScale", "status": "True"}, {"type": "ScalingActive", "status": "True"}],
            },
        }
    )

    assert await describe("scaled", "-n", NS) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if f"ScaledObject {NS}/{isvc}-predictor" in line)
    assert "  Ready  ScalerNotActive: ready, not active" in lines[at]
    facts = lines[at + 1]
    assert "minReplicas=1  maxReplicas=3" in facts
    assert (
        f'triggers: external sum(vllm:num_requests_running{{namespace="{NS}", deployment="{isvc}-predictor"}}) '
        "target 1 via keda-otel-scaler.keda.svc:4318"
    ) in facts
    assert "conditions: Ready=True Active=False Fallback=False" in facts
    [hpa] = [i for i, line in enumerate(lines) if f"HorizontalPodAutoscaler {NS}/keda-hpa-{isvc}-predictor" in line]
    assert "Ready  HPAOperational" in lines[hpa]
    isvc_at = next(i for i, line in enumerate(lines) if f"InferenceService {NS}/{isvc}" in line)
    indent = [len(lines[i]) - len(lines[i].lstrip("│├└─ ")) for i in (isvc_at, at, hpa)]
    assert isvc_at < at < hpa and indent == sorted(indent) and len(set(indent)) == 3  # each under the one before

    assert await describe("scaled", "-n", NS, "-o", "json") == 0
    chain = json.loads(capsys.readouterr().out)
    [serving] = [c for c in chain["children"] if c["kind"] == "InferenceService"]
    [scaler] = serving["children"]
    assert (scaler["kind"], scaler["name"], scaler["state"]) == ("ScaledObject", f"{isvc}-predictor", "Ready")
    assert scaler["details"]["minReplicas"] == 1 and scaler["details"]["maxReplicas"] == 3
    assert scaler["details"]["conditions"] == {"Ready": "True", "Active": "False", "Fallback": "False"}
    assert len(scaler["details"]["triggers"]) == 1 and scaler["details"]["triggers"][0].startswith("external sum(")
    assert [(c["kind"], c["state"]) for c in scaler["children"]] == [("HorizontalPodAutoscaler", "Ready")]

    # KEDA refuses the object: describe says so, with KEDA's reason.
    kube.put_object(
        scaled_object(
            isvc,
            [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ScaledObjectCheckFailed",
                    "message": "failed to ensure HPA is correctly created",
                }
            ],
        )
    )
    assert await describe("scaled", "-n", NS) == 0
    [refused] = lines_with(capsys.readouterr().out, f"ScaledObject {NS}/{isvc}-predictor")
    assert "Failed  ScaledObjectCheckFailed: failed to ensure HPA is correctly created" in refused
