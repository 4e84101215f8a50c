"""AIMBenchmark on the wire (issue 23): waiting for the target, the Job's shape, the real tool, the outcomes.

The test plays the kubelet and the Job controller: it runs the Job's container command
locally (the real genai-bench against the OpenAI-compatible fake, offline tokenizer),
then writes the pod's terminated state (termination message) and the Job's conditions
as a cluster would. Everything else is the real operator against the ``kube`` backend.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aim_testing.openai_server import OpenAIServer
from aim_testing.tokenizer import write_tokenizer
from tests.wire.conftest import eventually

API = "aim.eai.amd.com/v1alpha1"
BENCH = f"{API}/aimbenchmarks"
SVC = f"{API}/aimservices"
TPL = f"{API}/aimservicetemplates"
JOBS = "batch/v1/jobs"
NS = "bench"
PAUSED = {"aim.eai.amd.com/reconciliation-paused": "true"}
LABEL = "aim.eai.amd.com/benchmark.name"
GENAI_BENCH = Path(sys.executable).parent / "genai-bench"


def condition(obj: dict | None, type_: str) -> dict | None:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


def status(kube, name: str) -> dict:
    return (kube.get(BENCH, NS, name) or {}).get("status") or {}


def seed(kube) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})


def run_spec(**target: Any) -> dict:
    return {"scenarios": ["D(32,20)"], "concurrency": [1, 4], "maxRequests": 12, **target}


def benchmark(name: str, spec: dict, **meta: Any) -> dict:
    return {
        "apiVersion": API,
        "kind": "AIMBenchmark",
        "metadata": {"name": name, "namespace": NS, **meta},
        "spec": spec,
    }


def paused_service(name: str, state: str) -> dict:
    """An AIMService the service controller leaves alone, in ``state``, placed and with a pull secret."""
    return {
        "apiVersion": API,
        "kind": "AIMService",
        "metadata": {"name": name, "namespace": NS, "annotations": dict(PAUSED)},
        "spec": {
            "model": {"name": "llama"},
            "replicas": 2,
            "imagePullSecrets": [{"name": "svc-pull"}],
            "nodeSelector": {"pool": "inference"},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "llm", "effect": "NoSchedule"}],
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}
                    ]
                }
            },
        },
        "status": {
            "status": state,
            "resolvedModel": {"name": "llama", "kind": "AIMModel", "scope": "Namespace"},
            "resolvedTemplate": {"name": "llama-mi300x-fp8", "kind": "AIMServiceTemplate", "scope": "Namespace"},
            "runtime": {"currentReplicas": 2},
        },
    }


def paused_template() -> dict:
    return {
        "apiVersion": API,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "llama-mi300x-fp8", "namespace": NS, "annotations": dict(PAUSED)},
        # the model id the server is started with (AIM_MODEL_ID): the name the run sends
        "spec": {"modelName": "llama", "modelSources": [{"modelId": "org/llama", "sourceUri": "hf://org/llama"}]},
        "status": {
            "status": "Ready",
            "profile": {"metadata": {"gpu": "MI300X", "gpuCount": 1, "precision": "fp8", "metric": "latency"}},
        },
    }


# When the played Job finished: a minute ago, so that the hour a finished Job is kept
# (ttlSecondsAfterFinished) has not run out when a test looks at it again.
_NOW = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
STARTED = (_NOW - datetime.timedelta(minutes=11)).strftime("%Y-%m-%dT%H:%M:%SZ")
FINISHED_POD = (_NOW - datetime.timedelta(minutes=1, seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
FINISHED = (_NOW - datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")


def finish(
    kube,
    job: dict,
    *,
    ok: bool,
    message: str,
    exit_code: int | None = None,
    failure: tuple[str, str] = ("BackoffLimitExceeded", "Job has reached the specified backoff limit"),
) -> None:
    """Play the kubelet and the Job controller: the pod terminated with ``message``, the Job done."""
    name = job["metadata"]["name"]
    uid = job["metadata"]["uid"]
    labels = job["spec"]["template"]["metadata"]["labels"]
    pod_spec = job["spec"]["template"]["spec"]
    code = (0 if ok else 1) if exit_code is None else exit_code
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": uid, "controller": True}
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-x1",
                "namespace": NS,
                "labels": {**labels, "job-name": name, "controller-uid": uid},
                "ownerReferences": [owner],
            },
            "spec": pod_spec,
            "status": {
                "phase": "Succeeded" if ok else "Failed",
                "containerStatuses": [
                    {
                        "name": "benchmark",
                        "image": pod_spec["containers"][0]["image"],
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": {
                                "exitCode": code,
                                "reason": "Completed" if ok else "Error",
                                "message": message,
                                "finishedAt": FINISHED_POD,
                            }
                        },
                    }
                ],
            },
        }
    )
    done = {"type": "Complete" if ok else "Failed", "status": "True", "lastTransitionTime": FINISHED}
    if not ok:
        done |= {"reason": failure[0], "message": failure[1]}
    live = kube.get(JOBS, NS, name)
    live["status"] = {
        "startTime": STARTED,
        "conditions": [done],
        **({"completionTime": FINISHED, "succeeded": 1} if ok else {"failed": 1}),
    }
    kube.put_object(live)


def run_container(job: dict, tmp_path: Path, secrets: dict[str, dict[str, str]]) -> tuple[int, str, str]:
    """Run the Job's container command here, as a kubelet would: env resolved, the two paths local."""
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {"PATH": f"{GENAI_BENCH.parent}{os.pathsep}{os.environ.get('PATH', '')}", "HF_HUB_OFFLINE": "1"}
    for var in container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secrets[ref["name"]][ref["key"]]
    summary = tmp_path / "termination-log"
    env |= {"AIM_BENCH_REPORT_DIR": str(tmp_path / "report"), "AIM_BENCH_SUMMARY": str(summary), "HOME": str(tmp_path)}
    argv = [*container["command"], *container.get("args", [])]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=400)
    return done.returncode, summary.read_text() if summary.exists() else "", done.stdout + done.stderr


# ---------------------------------------------------------------------------


async def test_waits_for_the_service_then_runs_a_job_placed_like_it(kube, operator):
    seed(kube)
    spec = run_spec(
        target={"serviceName": "llama"},
        apiKeySecretRef={"name": "creds", "key": "api-key"},
        hfTokenSecretRef={"name": "creds", "key": "hf-token"},
        imagePullSecrets=[{"name": "bench-pull"}, {"name": "svc-pull"}],
        report={"uri": "pvc://results/llama"},
        resources={"limits": {"cpu": "2", "memory": "4Gi"}},
    )
    kube.put_object(benchmark("run-1", spec))
    cond = await eventually(lambda: condition(kube.get(BENCH, NS, "run-1"), "TargetReady"))
    assert (cond["status"], cond["reason"]) == ("False", "TargetNotReady")
    assert "AIMService llama does not exist" in cond["message"]
    assert status(kube, "run-1")["status"] == "Pending"
    assert kube.list(JOBS, NS) == []

    kube.put_object(paused_template())
    kube.put_object(paused_service("llama", "Starting"))
    await eventually(lambda: "is Starting" in condition(kube.get(BENCH, NS, "run-1"), "TargetReady")["message"])
    assert kube.list(JOBS, NS) == [] and status(kube, "run-1")["status"] == "Pending"

    kube.put_object(paused_service("llama", "Running"))
    job = await eventually(lambda: kube.get(JOBS, NS, "run-1"))
    st = await eventually(lambda: status(kube, "run-1").get("status") == "Running" and status(kube, "run-1"))
    target = st["target"]
    # the KServe predictor Service of the service's InferenceService (named with a hash)
    assert target["serviceName"] == "llama"
    assert re.fullmatch(r"http://llama-[0-9a-f]{8}-predictor\.bench\.svc\.cluster\.local", target["endpoint"]), target
    assert {k: target[k] for k in ("template", "templateScope", "gpuModel", "gpuCount", "precision", "metric")} == {
        "template": "llama-mi300x-fp8",
        "templateScope": "Namespace",
        "gpuModel": "MI300X",
        "gpuCount": 1,
        "precision": "fp8",
        "metric": "latency",
    }
    assert target["replicas"] == 2 and target["model"] == "org/llama" and st["tool"] == "genai-bench"

    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("AIMBenchmark", "run-1", True)
    assert job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]
    assert pod["metadata"]["labels"][LABEL] == "run-1" and job["metadata"]["labels"][LABEL] == "run-1"
    ps = pod["spec"]
    assert ps["securityContext"]["runAsNonRoot"] is True
    assert ps["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (c,) = ps["containers"]
    assert c["securityContext"]["allowPrivilegeEscalation"] is False
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert c["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert c["image"] == "ghcr.io/moirai-internal/genai-bench:v0.0.3"
    assert c["resources"]["limits"] == {"cpu": "2", "memory": "4Gi"}
    # placement and pull secrets of the service (no duplicates), plus the run's own
    assert ps["nodeSelector"] == {"pool": "inference"}
    assert ps["tolerations"] == paused_service("llama", "Running")["spec"]["tolerations"]
    assert "podAntiAffinity" in ps["affinity"]
    assert ps["imagePullSecrets"] == [{"name": "svc-pull"}, {"name": "bench-pull"}]
    env = {e["name"]: e for e in c["env"]}
    assert env["AIM_BENCH_API_KEY"]["valueFrom"]["secretKeyRef"] == {"name": "creds", "key": "api-key"}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "creds", "key": "hf-token"}
    assert env["AIM_BENCH_REPORT_DIR"]["value"] == "/report/llama"
    assert env["AIM_BENCH_SUMMARY"]["value"] == "/dev/termination-log" == c["terminationMessagePath"]
    volumes = {v["name"]: v for v in ps["volumes"]}
    assert volumes["report"]["persistentVolumeClaim"] == {"claimName": "results"}
    script = " ".join(c["command"])
    assert target["endpoint"] in script and '--api-key "$AIM_BENCH_API_KEY"' in script

    # The target goes away after the start: the run goes on.
    kube.put_object(paused_service("llama", "Degraded"))
    await operator.settle()
    assert status(kube, "run-1")["status"] == "Running"


@pytest.mark.skipif(not GENAI_BENCH.exists(), reason="genai-bench is not installed (scripts/setup installs it)")
async def test_a_real_run_against_the_fake_measures_its_timing(kube, operator, tmp_path):
    seed(kube)
    with OpenAIServer(ttft=0.05, itl=0.01, api_key="sk-test-123") as fake:
        url = fake.url
        tokenizer = write_tokenizer(tmp_path / "tok")
        spec = run_spec(
            target={"endpoint": fake.url, "model": "fake-model"},
            tokenizer=str(tokenizer),
            apiKeySecretRef={"name": "llm", "key": "token"},
        )
        kube.put_object(benchmark("real", spec))
        job = await eventually(lambda: kube.get(JOBS, NS, "real"))
        code, summary, output = run_container(job, tmp_path, {"llm": {"token": "sk-test-123"}})
    assert code == 0, output[-3000:]
    assert fake.requests
    finish(kube, job, ok=True, message=summary)
    st = await eventually(lambda: status(kube, "real").get("status") == "Succeeded" and status(kube, "real"))
    assert st["target"] == {"endpoint": url, "model": "fake-model"}
    assert st["startTime"] == job["metadata"]["creationTimestamp"]  # the Job had not started when first seen
    assert st["completionTime"] == FINISHED
    results = {r["concurrency"]: r for r in st["results"]}
    assert set(results) == {1, 4}
    for level, r in results.items():
        assert r["scenario"] == "D(32,20)" and r["completedRequests"] >= 12 and r["failedRequests"] == 0
        assert 50.0 <= r["ttftMs"]["p50"] <= 110.0, r  # the fake's 50 ms plus client overhead
        assert 8.0 <= r["interTokenLatencyMs"]["p50"] <= 15.0, r  # the fake's 10 ms per token
        ideal = level * 20 / 0.24  # 20 tokens in 50 + 19 x 10 ms, `level` at a time
        assert 0.4 * ideal <= r["outputTokensPerSecond"] <= 1.05 * ideal, (r, ideal)
    assert condition(kube.get(BENCH, NS, "real"), "JobReady")["reason"] == "Succeeded"
    assert condition(kube.get(BENCH, NS, "real"), "Ready")["status"] == "True"
    assert "report" not in st  # no spec.report: only the summary is kept

    # Finished runs are immutable: a later change of the Job or pod changes nothing.
    before = kube.get(BENCH, NS, "real")["status"]
    finish(kube, job, ok=False, message="late noise")
    await operator.settle()
    after = kube.get(BENCH, NS, "real")["status"]
    assert after["results"] == before["results"] and after["status"] == "Succeeded"


async def test_a_failed_job_reports_the_tools_last_log_lines_redacted(kube, operator):
    seed(kube)
    kube.put_object(benchmark("broken", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    job = await eventually(lambda: kube.get(JOBS, NS, "broken"))
    log = "\n".join(
        [*(f"line {i}" for i in range(40)), "using token hf_abcdefghijklmnopqrstuvwxyz", "ValueError: No values found"]
    )
    finish(kube, job, ok=False, message=log)
    st = await eventually(lambda: status(kube, "broken").get("status") == "Failed" and status(kube, "broken"))
    cond = condition(kube.get(BENCH, NS, "broken"), "JobReady")
    assert (cond["status"], cond["reason"]) == ("False", "JobFailed")
    assert "BackoffLimitExceeded" in cond["message"] and "ValueError: No values found" in cond["message"]
    assert "line 39" in cond["message"] and "line 5\n" not in cond["message"]  # the last lines only
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in cond["message"] and "[REDACTED]" in cond["message"]
    assert condition(kube.get(BENCH, NS, "broken"), "Ready")["reason"] == "JobFailed"
    assert st["completionTime"] == FINISHED and "results" not in st


async def test_a_hung_tool_is_stopped_at_the_jobs_deadline_and_the_run_says_what_to_change(kube, operator):
    seed(kube)
    endpoint = {"endpoint": "http://127.0.0.1:9", "model": "m"}
    # 1 scenario x 2 levels x (30s rounded up to 1m, plus 1m) plus 15m for start-up and upload
    kube.put_object(benchmark("hung", run_spec(target=endpoint) | {"maxDuration": "30s"}))
    kube.put_object(benchmark("bounded", run_spec(target=endpoint) | {"timeout": "45m"}))
    job = await eventually(lambda: kube.get(JOBS, NS, "hung"))
    assert job["spec"]["activeDeadlineSeconds"] == 2 * (60 + 60) + 900
    assert (await eventually(lambda: kube.get(JOBS, NS, "bounded")))["spec"]["activeDeadlineSeconds"] == 45 * 60

    # The Job controller stops the pod at the deadline (SIGTERM: exit 143) and fails the Job.
    deadline = ("DeadlineExceeded", "Job was active longer than specified deadline")
    log = "run 1 of 2 ...\nstill waiting for the first token"
    finish(kube, job, ok=False, message=log, exit_code=143, failure=deadline)
    st = await eventually(lambda: status(kube, "hung").get("status") == "Failed" and status(kube, "hung"))
    cond = condition(kube.get(BENCH, NS, "hung"), "JobReady")
    assert (cond["status"], cond["reason"]) == ("False", "DeadlineExceeded")
    assert "deadline of 1140s" in cond["message"] and "maxDuration 30s" in cond["message"]
    assert "set spec.timeout" in cond["message"] and "still waiting for the first token" in cond["message"]
    assert condition(kube.get(BENCH, NS, "hung"), "Ready")["reason"] == "DeadlineExceeded"
    assert st["completionTime"] == FINISHED and "results" not in st
    assert status(kube, "bounded")["status"] == "Running"


async def test_an_unparsable_summary_ends_in_report_unparsable(kube, operator):
    seed(kube)
    kube.put_object(benchmark("garbled", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    job = await eventually(lambda: kube.get(JOBS, NS, "garbled"))
    finish(kube, job, ok=True, message="all done, see the logs")
    await eventually(lambda: status(kube, "garbled").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "garbled"), "JobReady")
    assert (cond["status"], cond["reason"]) == ("False", "ReportUnparsable")
    assert "all done, see the logs" in cond["message"]


async def test_rates_with_a_concurrency_only_tool_fail_with_the_field_to_change(kube, operator):
    seed(kube)
    spec = {"target": {"endpoint": "http://x:8000", "model": "m"}, "scenarios": ["D(8,8)"], "requestRates": [1.5]}
    kube.put_object(benchmark("rated", spec | {"maxDuration": "30s"}))
    await eventually(lambda: status(kube, "rated").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "rated"), "JobReady")
    assert cond["reason"] == "UnsupportedByTool" and "spec.concurrency" in cond["message"]
    assert kube.list(JOBS, NS) == []


SUMMARY = '{"format":"aim-genai-bench/v1","runs":[["D(32,20)",1,12,0,3.5,70.0,[60,70,80],[10,11,12],[250,260,270]]]}'


def finished(name: str, completed: str, *, owner: dict | None = None) -> dict:
    """A run finished earlier, seeded as is: paused, so the seeding (object, then status) races nothing."""
    spec = run_spec(target={"endpoint": "http://llm.example:8000", "model": "m"})
    meta: dict[str, Any] = {"annotations": dict(PAUSED)}
    if owner:
        meta["ownerReferences"] = [owner]
    body = benchmark(name, spec, **meta)
    body["status"] = {
        "status": "Succeeded",
        "startTime": "2026-11-27T17:00:00Z",
        "completionTime": completed,
        "target": {"endpoint": "http://llm.example:8000", "model": "m"},
        "results": [{"scenario": "D(32,20)", "concurrency": 1, "completedRequests": 12}],
    }
    return body


async def test_history_limit_keeps_the_newest_finished_runs_of_a_target(kube, operator):
    seed(kube)
    # an owner that exists (a real API server's garbage collector removes runs whose owner does not)
    kube.put_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sweep", "namespace": NS}})
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "sweep", "uid": "u-1", "controller": True}
    kube.put_object(finished("old-1", "2026-11-27T18:00:00Z"))
    kube.put_object(finished("old-2", "2026-11-27T18:30:00Z"))
    kube.put_object(finished("new-1", "2026-11-27T19:00:00Z"))
    kube.put_object(finished("swept", "2026-11-27T17:00:00Z", owner=owner))  # owned (e.g. a sweep's): never pruned
    other = finished("elsewhere", "2026-11-27T16:00:00Z")  # another target: its own history
    other["spec"]["target"]["endpoint"] = "http://other.example:8000"
    kube.put_object(other)
    # A new run of the same target, limit 2 (the newest run's limit applies), finishes.
    spec = run_spec(target={"endpoint": "http://llm.example:8000", "model": "m"}) | {"historyLimit": 2}
    kube.put_object(benchmark("new-2", spec))
    job = await eventually(lambda: kube.get(JOBS, NS, "new-2"))
    await operator.settle()
    assert len(kube.list(BENCH, NS)) == 6, [b["metadata"]["name"] for b in kube.list(BENCH, NS)]  # nothing pruned yet
    finish(kube, job, ok=True, message=SUMMARY)
    await eventually(lambda: status(kube, "new-2").get("status") == "Succeeded")
    names = lambda: sorted(b["metadata"]["name"] for b in kube.list(BENCH, NS))  # noqa: E731
    await eventually(lambda: names() == ["elsewhere", "new-1", "new-2", "swept"])
    (result,) = status(kube, "new-2")["results"]
    assert result == {
        "scenario": "D(32,20)",
        "concurrency": 1,
        "completedRequests": 12,
        "failedRequests": 0,
        "requestsPerSecond": 3.5,
        "outputTokensPerSecond": 70.0,
        "ttftMs": {"p50": 60.0, "p90": 70.0, "p99": 80.0},
        "interTokenLatencyMs": {"p50": 10.0, "p90": 11.0, "p99": 12.0},
        "e2eLatencyMs": {"p50": 250.0, "p90": 260.0, "p99": 270.0},
    }


async def test_a_tool_that_is_not_installed_fails_the_run_naming_the_installed_ones(kube, operator):
    seed(kube)
    kube.put_object(benchmark("unknown", run_spec(target={"endpoint": "http://x:8000", "model": "m"}, tool="vegeta")))
    await eventually(lambda: status(kube, "unknown").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "unknown"), "JobReady")
    assert cond["reason"] == "ToolNotFound" and "'vegeta'" in cond["message"] and "genai-bench" in cond["message"]
    assert kube.list(JOBS, NS) == []


@pytest.mark.apiserver_only("the emulator does not check a custom resource against its schema")
async def test_the_api_server_refuses_what_the_schema_can_catch(kube, api):
    """Bad specs never reach the controller: the CRD's patterns, bounds and CEL rules refuse them."""
    seed(kube)
    good = run_spec(target={"serviceName": "llama"})
    cases = {
        "both-targets": good | {"target": {"serviceName": "s", "endpoint": "http://x:8000", "model": "m"}},
        "no-target": good | {"target": {}},
        "endpoint-without-model": good | {"target": {"endpoint": "http://x:8000"}},
        "both-loads": good | {"requestRates": [1.0]},
        "no-load": {k: v for k, v in good.items() if k != "concurrency"},
        "no-bound": {k: v for k, v in good.items() if k != "maxRequests"},
        "bad-scenario": good | {"scenarios": ["D(1)"]},
        "bad-duration": good | {"maxDuration": "five minutes"},
        "endless-duration": good | {"maxDuration": "99999999999h"},
        "long-duration": good | {"timeout": "1h" * 20},
        "bad-report": good | {"report": {"uri": "gs://bucket/x"}},
        "too-many-runs": good | {"scenarios": [f"D({i},8)" for i in range(1, 6)], "concurrency": list(range(1, 10))},
        "fine": good,
    }
    codes = {}
    for case, spec in cases.items():
        body = benchmark(case, spec)
        codes[case] = (await api.post(kube.path(BENCH, NS), json=body)).status_code
    assert codes == {case: 201 if case == "fine" else 422 for case in cases}


@pytest.mark.emulator_only("1.24 cannot compile CEL transition rules (oldSelf); the emulator enforces them")
async def test_a_runs_spec_cannot_change(kube, api):
    seed(kube)
    response = await api.post(kube.path(BENCH, NS), json=benchmark("fine", run_spec(target={"serviceName": "s"})))
    assert response.status_code == 201
    live = kube.get(BENCH, NS, "fine")
    live["spec"]["maxRequests"] = 50
    response = await api.put(kube.path(BENCH, NS, "fine"), json=live)
    assert response.status_code == 422 and "create a new AIMBenchmark to re-run" in response.text


OLD_SUMMARY = '{"format":"aim-genai-bench/v1","runs":[["D(32,20)",1,12,0,9.9,999.0,[1,1,1],[1,1,1],[9,9,9]]]}'


def leftover_job(name: str) -> dict:
    """A Job of a run's name that the run does not control (an earlier run's, its owner gone)."""
    container = {"name": "benchmark", "image": "example.com/old:1", "command": ["true"]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "labels": {LABEL: name}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {LABEL: name}},
                "spec": {"restartPolicy": "Never", "containers": [container]},
            },
        },
    }


def stray_pod(name: str, label: str, message: str, finished: str) -> dict:
    """A pod carrying a run's label, not created by the run's Job: its summary must not count."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {LABEL: label, "job-name": label, "controller-uid": "x"}},
        "spec": {"restartPolicy": "Never", "containers": [{"name": "benchmark", "image": "example.com/old:1"}]},
        "status": {
            "phase": "Succeeded",
            "containerStatuses": [
                {
                    "name": "benchmark",
                    "image": "example.com/old:1",
                    "imageID": "",
                    "ready": False,
                    "restartCount": 0,
                    "state": {
                        "terminated": {"exitCode": 0, "reason": "Completed", "message": message, "finishedAt": finished}
                    },
                }
            ],
        },
    }


async def test_a_rerun_under_the_same_name_waits_out_the_old_job_and_reads_only_its_own_pod(kube, api, operator):
    seed(kube)
    kube.put_object(leftover_job("again"))
    kube.put_object(stray_pod("again-old", "again", OLD_SUMMARY, "2099-01-01T00:00:00Z"))  # "newer"
    old = kube.get(JOBS, NS, "again")
    kube.put_object(benchmark("again", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))

    cond = await eventually(
        lambda: (c := condition(kube.get(BENCH, NS, "again"), "JobReady")) and c["reason"] == "WaitingForOldJob" and c
    )
    assert "is not this run's" in cond["message"]
    await operator.settle()
    live = kube.get(JOBS, NS, "again")
    assert live["metadata"]["uid"] == old["metadata"]["uid"] and not live["metadata"].get("ownerReferences")
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "example.com/old:1"  # not re-templated
    assert status(kube, "again")["status"] == "Pending"

    # The old Job goes: the run creates its own, and only that Job's pod is read.
    response = await api.delete(kube.path(JOBS, NS, "again"), params={"propagationPolicy": "Background"})
    assert response.status_code in (200, 202), response.text
    job = await eventually(
        lambda: (j := kube.get(JOBS, NS, "again")) and j["metadata"]["uid"] != old["metadata"]["uid"] and j
    )
    assert job["metadata"]["ownerReferences"][0]["kind"] == "AIMBenchmark"
    finish(kube, job, ok=True, message=SUMMARY)
    st = await eventually(lambda: status(kube, "again").get("status") == "Succeeded" and status(kube, "again"))
    assert [r["outputTokensPerSecond"] for r in st["results"]] == [70.0]  # not the stray pod's 999


async def test_a_running_run_whose_job_disappeared_fails_job_lost_and_is_not_restarted(kube, api, operator):
    seed(kube)
    kube.put_object(benchmark("lost", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    await eventually(lambda: kube.get(JOBS, NS, "lost"))
    await eventually(lambda: status(kube, "lost").get("startTime"))
    response = await api.delete(kube.path(JOBS, NS, "lost"), params={"propagationPolicy": "Background"})
    assert response.status_code in (200, 202), response.text
    await eventually(lambda: status(kube, "lost").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "lost"), "JobReady")
    assert cond["reason"] == "JobLost" and "create a new AIMBenchmark" in cond["message"]
    await operator.settle()
    assert kube.get(JOBS, NS, "lost") is None  # not started again


async def test_a_finished_runs_job_gets_a_time_to_live(kube, operator):
    seed(kube)
    kube.put_object(benchmark("expiring", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    job = await eventually(lambda: kube.get(JOBS, NS, "expiring"))
    assert "ttlSecondsAfterFinished" not in job["spec"]  # not while the results are still to be read
    finish(kube, job, ok=True, message=SUMMARY)
    await eventually(lambda: status(kube, "expiring").get("status") == "Succeeded")
    live = await eventually(
        lambda: (j := kube.get(JOBS, NS, "expiring")) and j["spec"].get("ttlSecondsAfterFinished") == 3600 and j
    )
    assert live["metadata"]["uid"] == job["metadata"]["uid"]
    assert live["spec"]["template"]["spec"]["containers"] == job["spec"]["template"]["spec"]["containers"]


async def test_the_pod_follows_the_services_runtime_config_and_an_unknown_model_name_says_what_to_set(kube, operator):
    seed(kube)
    kube.put_object(
        {
            "apiVersion": API,
            "kind": "AIMRuntimeConfig",
            "metadata": {"name": "placed", "namespace": NS},
            "spec": {
                "nodeSelector": {"pool": "from-config"},
                "tolerations": [{"key": "cfg", "operator": "Exists", "effect": "NoSchedule"}],
            },
        }
    )
    template = paused_template()
    template["spec"]["imagePullSecrets"] = [{"name": "tpl-pull"}]
    kube.put_object(template)
    svc = paused_service("placed", "Running")
    for key in ("nodeSelector", "tolerations", "affinity"):
        del svc["spec"][key]
    svc["spec"]["runtimeConfigName"] = "placed"
    kube.put_object(svc)
    kube.put_object(benchmark("placed", run_spec(target={"serviceName": "placed"})))
    job = await eventually(lambda: kube.get(JOBS, NS, "placed"))
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "from-config"}
    assert pod["tolerations"] == [{"key": "cfg", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["imagePullSecrets"] == [{"name": "svc-pull"}, {"name": "tpl-pull"}]

    # A template that names no model id, a model without metadata: the run cannot know the served name.
    bare = paused_template()
    bare["metadata"]["name"] = "bare"
    del bare["spec"]["modelSources"]
    kube.put_object(bare)
    anonymous = paused_service("anonymous", "Running")
    anonymous["status"]["resolvedTemplate"]["name"] = "bare"
    kube.put_object(anonymous)
    kube.put_object(benchmark("anonymous", run_spec(target={"serviceName": "anonymous"})))
    await eventually(lambda: status(kube, "anonymous").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "anonymous"), "JobReady")
    assert cond["reason"] == "ModelNameUnknown" and "set spec.target.model" in cond["message"]
    assert kube.get(JOBS, NS, "anonymous") is None


async def test_a_duration_longer_than_kubernetes_holds_is_invalid_spec_naming_the_field(kube, operator):
    seed(kube)
    # 7 digits pass the schema; over 2562047h the operator refuses it, naming the field
    spec = run_spec(target={"endpoint": "http://x:8000", "model": "m"}) | {"timeout": "9999999h"}
    kube.put_object(benchmark("forever", spec))
    await eventually(lambda: status(kube, "forever").get("status") == "Failed")
    cond = condition(kube.get(BENCH, NS, "forever"), "JobReady")
    assert cond["reason"] == "InvalidSpec" and cond["message"].startswith("spec.timeout: ")
    assert kube.get(JOBS, NS, "forever") is None


async def test_two_long_run_names_sharing_63_characters_read_only_their_own_pods(kube, operator):
    seed(kube)
    stem = "a-run-with-a-very-long-name-that-goes-on-and-on-past-sixty-three-chars"
    names = (f"{stem}-one", f"{stem}-two")
    for name in names:
        kube.put_object(benchmark(name, run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    jobs = {}
    for name in names:
        jobs[name] = await eventually(
            lambda name=name: next(
                (j for j in kube.list(JOBS, NS) if j["metadata"]["ownerReferences"][0]["name"] == name), None
            )
        )
    labels = {jobs[n]["spec"]["template"]["metadata"]["labels"][LABEL] for n in names}
    assert len(labels) == 2 and all(len(v) <= 63 for v in labels)  # hashed, not cut to the same 63
    finish(kube, jobs[names[0]], ok=True, message=SUMMARY)
    finish(kube, jobs[names[1]], ok=True, message=OLD_SUMMARY)
    for name, tps in ((names[0], 70.0), (names[1], 999.0)):
        st = await eventually(lambda name=name: status(kube, name).get("status") == "Succeeded" and status(kube, name))
        assert [r["outputTokensPerSecond"] for r in st["results"]] == [tps]


async def test_a_failure_with_a_huge_log_is_still_written_with_a_capped_message(kube, operator):
    seed(kube)
    kube.put_object(benchmark("noisy", run_spec(target={"endpoint": "http://127.0.0.1:9", "model": "m"})))
    job = await eventually(lambda: kube.get(JOBS, NS, "noisy"))
    log = "\n".join(f"line {i} " + "x" * 3000 for i in range(20))  # 60 KB in the last 20 lines
    finish(kube, job, ok=False, message=log)
    await eventually(lambda: status(kube, "noisy").get("status") == "Failed", timeout=20)
    cond = condition(kube.get(BENCH, NS, "noisy"), "JobReady")
    assert cond["reason"] == "JobFailed" and len(cond["message"]) <= 32768
    assert cond["message"].endswith("characters in all)")
