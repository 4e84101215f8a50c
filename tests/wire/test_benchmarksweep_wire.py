"""Measured ranking on the wire (issue 23): runs -> template status.benchmarks -> automatic selection.

The benchmark tool is not run here (that is tests/benchmark's business): the test writes the
finished AIMBenchmarks' status itself, as the benchmark controller would, and checks what the
template controllers and the service controller make of it.
"""

from __future__ import annotations

import copy

from aim_core.benchmarksweep.plan import child_name
from aim_core.benchmarksweep.view import SweepView
from tests.wire.conftest import eventually
from tests.wire.discovery import gpu_node

API = "aim.eai.amd.com/v1alpha1"
TPL = f"{API}/aimservicetemplates"
CTPL = f"{API}/aimclusterservicetemplates"
SVC = f"{API}/aimservices"
BENCH = f"{API}/aimbenchmarks"
NS = "team"
IMAGE = "ghcr.io/silogen/aim-dummy:0.1.8"
PAUSED = {"aim.eai.amd.com/reconciliation-paused": "true"}


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


def template(name: str, precision: str) -> dict:
    """A template with inline sources: Ready without discovery, optimized, 1 x MI300X, latency."""
    return {
        "apiVersion": API,
        "kind": "AIMServiceTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "modelName": "m",
            "metric": "latency",
            "precision": precision,
            "type": "optimized",
            "hardware": {"gpu": {"model": "MI300X", "requests": 1}},
            "modelSources": [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny", "size": "1Gi"}],
        },
    }


def result(concurrency: int, tps: float, ttft: float) -> dict:
    return {
        "scenario": "D(128,128)",
        "concurrency": concurrency,
        "completedRequests": 100,
        "failedRequests": 0,
        "requestsPerSecond": tps / 128,
        "outputTokensPerSecond": tps,
        "ttftMs": {"p50": ttft, "p90": ttft * 1.5, "p99": ttft * 2},
        "interTokenLatencyMs": {"p50": 12.0, "p99": 20.0},
        "e2eLatencyMs": {"p50": 1600.0, "p99": 2100.0},
    }


def finished_run(name: str, template: str, precision: str, *results: dict, finished: str, service: str = "") -> dict:
    """An AIMBenchmark as the benchmark controller leaves a Succeeded run."""
    return {
        "apiVersion": API,
        "kind": "AIMBenchmark",
        # paused: the benchmark controller leaves it alone while the test writes what it would have
        "metadata": {"name": name, "namespace": NS, "annotations": dict(PAUSED)},
        "spec": {
            "target": {"serviceName": service or f"svc-{template}"},
            "scenarios": ["D(128,128)"],
            "concurrency": sorted({r["concurrency"] for r in results}),
            "maxRequests": 100,
        },
        "status": {
            "status": "Succeeded",
            "startTime": "2026-11-27T20:00:00Z",
            "completionTime": finished,
            "target": {
                "serviceName": service or f"svc-{template}",
                "model": "m",
                "template": template,
                "templateScope": "Namespace",
                "gpuModel": "MI300X",
                "gpuCount": 1,
                "precision": precision,
                "metric": "latency",
                "replicas": 1,
            },
            "results": list(results),
        },
    }


def service(name: str, prefer: dict | None = None) -> dict:
    body = {"apiVersion": API, "kind": "AIMService", "metadata": {"name": name, "namespace": NS}}
    body["spec"] = {"model": {"name": "m"}, "replicas": 1}
    if prefer:
        body["spec"]["template"] = {"preferMeasured": prefer}
    return body


def seed(kube) -> None:
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    kube.put_object(gpu_node())
    kube.put_object(
        {
            "apiVersion": API,
            "kind": "AIMModel",
            "metadata": {"name": "m", "namespace": NS, "annotations": dict(PAUSED)},
            "spec": {"image": IMAGE},
            "status": {"status": "Ready"},
        }
    )


async def create(api, kube, body, resource) -> dict:
    body = copy.deepcopy(body)
    body.pop("status", None)
    response = await api.post(kube.path(resource, NS), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


def resolved(kube, name: str) -> tuple[str, str]:
    svc = kube.get(SVC, NS, name)
    chosen = ((svc or {}).get("status") or {}).get("resolvedTemplate") or {}
    assert chosen.get("name"), (svc or {}).get("status")
    return chosen["name"], condition(svc, "TemplateReady")["message"]


async def test_measurements_reach_the_templates_and_rank_an_automatic_selection(kube, api, operator):
    seed(kube)
    for name, precision in (("llama-fp8", "fp8"), ("llama-fp16", "fp16")):
        await create(api, kube, template(name, precision), TPL)
    await eventually(
        lambda: all(kube.get(TPL, NS, n)["status"]["status"] == "Ready" for n in ("llama-fp8", "llama-fp16"))
    )

    # fp8 wins by the labels; fp16 measured more throughput at concurrency 8 (the latest run counts).
    kube.put_object(finished_run("fp8-1", "llama-fp8", "fp8", result(8, 400.0, 45.0), finished="2026-11-27T20:05:00Z"))
    kube.put_object(
        finished_run("fp16-old", "llama-fp16", "fp16", result(8, 10.0, 99.0), finished="2026-11-27T19:00:00Z")
    )
    kube.put_object(
        finished_run(
            "fp16-1",
            "llama-fp16",
            "fp16",
            result(1, 60.0, 50.0),
            result(8, 500.0, 60.0),
            finished="2026-11-27T20:25:00Z",
        )
    )
    kube.put_object(  # a run still going counts for nothing
        {
            **finished_run("fp16-2", "llama-fp16", "fp16", result(8, 9999.0, 1.0), finished=""),
            "status": {"status": "Running"},
        }
    )

    def summary(name):
        entries = kube.get(TPL, NS, name)["status"].get("benchmarks") or []
        assert entries, kube.get(TPL, NS, name)["status"]
        return entries

    fp16 = await eventually(lambda: len(summary("llama-fp16")) == 2 and summary("llama-fp16"))
    assert [(e["concurrency"], e["outputTokensPerSecond"], e["benchmark"]) for e in fp16] == [
        (1, 60.0, "fp16-1"),
        (8, 500.0, "fp16-1"),
    ]
    assert fp16[1]["ttftMs"] == {"p50": 60.0, "p90": 90.0, "p99": 120.0}
    assert fp16[1]["completionTime"] == "2026-11-27T20:25:00Z" and fp16[1]["namespace"] == NS
    assert [e["benchmark"] for e in await eventually(lambda: summary("llama-fp8"))] == ["fp8-1"]

    await create(api, kube, service("usual"), SVC)
    await create(api, kube, service("by-tps", {"by": "outputTokensPerSecond", "concurrency": 8}), SVC)
    await create(api, kube, service("by-ttft", {"by": "ttftP50", "concurrency": 8}), SVC)
    await create(api, kube, service("unmeasured", {"by": "ttftP50", "concurrency": 64}), SVC)

    assert (await eventually(lambda: resolved(kube, "usual")))[0] == "llama-fp8"
    chosen, message = await eventually(lambda: resolved(kube, "by-tps"))
    assert chosen == "llama-fp16"
    assert "measured outputTokensPerSecond 500 tokens/s at concurrency 8 in D(128,128)" in message
    assert f"AIMBenchmark {NS}/fp16-1" in message
    assert (await eventually(lambda: resolved(kube, "by-ttft")))[0] == "llama-fp8"  # 45 ms before 60 ms
    chosen, message = await eventually(lambda: resolved(kube, "unmeasured"))
    assert chosen == "llama-fp8" and "measured" not in message  # nothing at concurrency 64: the usual order

    # The run is deleted: the template forgets it.
    await api.delete(kube.path(BENCH, NS, "fp8-1"))
    await eventually(lambda: not kube.get(TPL, NS, "llama-fp8")["status"].get("benchmarks"))


SWEEP = f"{API}/aimbenchmarksweeps"


async def finish(kube, operator, name: str, *results: dict, finished: str) -> None:
    """Play the benchmark controller: the sweep's run Succeeded with these results.

    The operator settles first, so no reconcile of the run that started before is still writing.
    """
    await operator.settle()
    run = kube.get(BENCH, NS, name)
    svc = kube.get(SVC, NS, run["spec"]["target"]["serviceName"])
    chosen = svc["spec"]["template"]["name"]
    body = finished_run(name, chosen, "fp8" if chosen.endswith("fp8") else "fp16", *results, finished=finished)
    kube.put_object(
        {
            **run,
            "status": {
                **body["status"],
                "target": {**body["status"]["target"], "serviceName": svc["metadata"]["name"]},
            },
        }
    )


async def test_a_sweep_benchmarks_each_template_in_turn_and_its_table_ranks_a_selection(kube, api, operator, tmp_path):
    seed(kube)
    for name, precision in (("llama-fp8", "fp8"), ("llama-fp16", "fp16")):
        await create(api, kube, template(name, precision), TPL)
    await eventually(
        lambda: all(kube.get(TPL, NS, n)["status"]["status"] == "Ready" for n in ("llama-fp8", "llama-fp16"))
    )
    sweep = {
        "apiVersion": API,
        "kind": "AIMBenchmarkSweep",
        "metadata": {"name": "llama", "namespace": NS},
        "spec": {"model": "m", "benchmark": {"scenarios": ["D(128,128)"], "concurrency": [1, 8], "maxRequests": 50}},
    }
    created = await create(api, kube, sweep, SWEEP)
    # the children's names: the sweep's, a hash of its uid, the position
    one, two = (child_name(SweepView.of(created), i) for i in (0, 1))

    # One template at a time, in name order: llama-fp16 first.
    first = await eventually(lambda: kube.get(SVC, NS, one))
    assert first["spec"]["template"] == {"name": "llama-fp16"} and first["spec"]["model"] == {"name": "m"}
    run = await eventually(lambda: kube.get(BENCH, NS, one))
    assert run["spec"]["target"] == {"serviceName": one} and run["spec"]["concurrency"] == [1, 8]
    for child in (first, run):
        owner = child["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("AIMBenchmarkSweep", "llama", True)
    running = await eventually(
        lambda: kube.get(SWEEP, NS, "llama")["status"].get("status") == "Running" and kube.get(SWEEP, NS, "llama")
    )
    assert [(t["template"], t["state"]) for t in running["status"]["templates"]] == [
        ("llama-fp16", "Deploying"),
        ("llama-fp8", "Waiting"),
    ]
    await operator.settle()
    assert kube.get(SVC, NS, two) is None  # parallelism 1

    await finish(kube, operator, one, result(1, 60.0, 50.0), result(8, 500.0, 60.0), finished="2026-11-27T20:25:00Z")
    second = await eventually(lambda: kube.get(SVC, NS, two))
    assert second["spec"]["template"] == {"name": "llama-fp8"}
    await eventually(lambda: kube.get(SVC, NS, one) is None)  # its GPUs are free again
    await eventually(lambda: kube.get(BENCH, NS, two))
    await finish(kube, operator, two, result(1, 80.0, 40.0), result(8, 400.0, 45.0), finished="2026-11-27T20:45:00Z")

    def done():
        s = kube.get(SWEEP, NS, "llama")
        assert s["status"].get("status") == "Succeeded", s["status"]
        return s

    s = await eventually(done)
    await eventually(lambda: kube.get(SVC, NS, two) is None)
    assert [(t["template"], t["state"], t["benchmark"]) for t in s["status"]["templates"]] == [
        ("llama-fp16", "Succeeded", one),
        ("llama-fp8", "Succeeded", two),
    ]
    table = {(r["template"], r["concurrency"]): r["outputTokensPerSecond"] for r in s["status"]["comparison"]}
    assert table == {("llama-fp16", 1): 60.0, ("llama-fp16", 8): 500.0, ("llama-fp8", 1): 80.0, ("llama-fp8", 8): 400.0}
    assert condition(s, "RunsReady")["reason"] == "SweepComplete"
    assert kube.get(BENCH, NS, one) is not None  # the runs stay: their results are the templates' too

    # The CLI shows the sweep's table from the object as kubectl would save it.
    import yaml

    from aim_core import cli

    saved = tmp_path / "sweep.yaml"
    saved.write_text(yaml.safe_dump(s))
    assert cli.main(["bench", "sweep", "llama", "-f", str(saved), "-n", NS]) == 0

    # What the sweep measured reaches the templates, and a service asking for measured ranking follows it.
    await eventually(
        lambda: (
            [e["benchmark"] for e in kube.get(TPL, NS, "llama-fp16")["status"].get("benchmarks") or []] == [one, one]
        )
    )
    await create(api, kube, service("usual"), SVC)
    await create(api, kube, service("measured", {"by": "outputTokensPerSecond", "concurrency": 8}), SVC)
    assert (await eventually(lambda: resolved(kube, "usual")))[0] == "llama-fp8"
    chosen, message = await eventually(lambda: resolved(kube, "measured"))
    assert chosen == "llama-fp16" and f"AIMBenchmark {NS}/{one}" in message


async def test_the_bench_command_reads_runs_from_the_cluster(kube, kubeconfig, capsys):
    import asyncio

    from aim_core.cli import main

    seed(kube)
    kube.put_object(
        finished_run(
            "a", "llama-fp8", "fp8", result(1, 80.0, 40.0), result(8, 400.0, 45.0), finished="2026-11-27T20:05:00Z"
        )
    )
    kube.put_object(finished_run("b", "llama-fp16", "fp16", result(8, 500.0, 60.0), finished="2026-11-27T20:25:00Z"))

    assert await asyncio.to_thread(main, ["bench", "show", "a", "-n", NS]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"AIMBenchmark {NS}/a: Succeeded; llama-fp8 (1 x MI300X, fp8, latency), 1 replica")
    assert [line.split()[1] for line in out.splitlines()[3:]] == ["c=1", "c=8"]

    assert await asyncio.to_thread(main, ["bench", "compare", "a", "b", "-n", NS]) == 0
    row = next(line.split() for line in capsys.readouterr().out.splitlines() if "output tokens/s" in line)
    assert row[-3:] == ["400", "500", "+25.0%"]  # only c=8 is in both

    assert await asyncio.to_thread(main, ["bench", "show", "nope", "-n", NS]) == 1
    assert f"AIMBenchmark {NS}/nope not found" in capsys.readouterr().err


async def test_a_users_service_holding_a_childs_name_is_not_adopted_retemplated_or_deleted(kube, api, operator):
    seed(kube)
    for name, precision in (("llama-fp8", "fp8"), ("llama-fp16", "fp16")):
        await create(api, kube, template(name, precision), TPL)
    await eventually(
        lambda: all(kube.get(TPL, NS, n)["status"]["status"] == "Ready" for n in ("llama-fp8", "llama-fp16"))
    )
    # Paused first, so the user's service can take the first child's name (it derives from the sweep's uid).
    sweep = {
        "apiVersion": API,
        "kind": "AIMBenchmarkSweep",
        "metadata": {"name": "llama", "namespace": NS, "annotations": dict(PAUSED)},
        "spec": {
            "model": "m",
            "deployTimeout": "4s",
            "benchmark": {"scenarios": ["D(128,128)"], "concurrency": [1], "maxRequests": 50},
        },
    }
    created = await create(api, kube, sweep, SWEEP)
    one, two = (child_name(SweepView.of(created), i) for i in (0, 1))
    mine = service(one)
    mine["metadata"]["annotations"] = dict(PAUSED)  # the user's own, left alone by the service controller too
    mine["spec"]["template"] = {"name": "llama-fp8"}
    await create(api, kube, mine, SVC)
    before = kube.get(SVC, NS, one)

    response = await api.patch(
        kube.path(SWEEP, NS, "llama"),
        json={"metadata": {"annotations": {"aim.eai.amd.com/reconciliation-paused": None}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text

    def conflict():
        ready = condition(kube.get(SWEEP, NS, "llama"), "Ready")
        assert ready is not None and ready["reason"] == "NameConflict", kube.get(SWEEP, NS, "llama").get("status")
        return ready

    ready = await eventually(conflict)
    assert f"AIMService {NS}/{one} already exists" in ready["message"]
    assert kube.get(BENCH, NS, one) is None  # no run against the user's service

    # Past the deploy timeout the template fails and the next one starts; the user's service stays as it was.
    def moved_on():
        entries = kube.get(SWEEP, NS, "llama")["status"]["templates"]
        assert [e["state"] for e in entries] == ["Failed", "Deploying"], entries
        return entries

    entries = await eventually(moved_on, timeout=30)
    assert "already exists" in entries[0]["message"] and "deployTimeout 4s" in entries[0]["message"]
    await eventually(lambda: kube.get(SVC, NS, two))
    await operator.settle()
    after = kube.get(SVC, NS, one)
    assert after is not None and after["metadata"]["uid"] == before["metadata"]["uid"]
    assert after["spec"] == before["spec"] and after["spec"]["template"] == {"name": "llama-fp8"}
    assert not after["metadata"].get("ownerReferences")
    assert after["metadata"].get("labels") == before["metadata"].get("labels")


async def test_a_cluster_template_counts_only_the_runs_of_trusted_namespaces(kube, api, operator):
    seed(kube)
    cluster = template("llama-shared", "fp8")
    cluster["kind"] = "AIMClusterServiceTemplate"
    del cluster["metadata"]["namespace"]
    kube.put_object(cluster)

    def cluster_run(name: str, ns: str, tps: float, finished: str) -> dict:
        body = finished_run(name, "llama-shared", "fp8", result(8, tps, 40.0), finished=finished)
        body["metadata"]["namespace"] = ns
        body["status"]["target"]["templateScope"] = "Cluster"
        return body

    kube.put_object(cluster_run("platform-1", "aim-system", 400.0, "2026-11-27T20:05:00Z"))  # the operator's own
    kube.put_object(cluster_run("steer", NS, 99999.0, "2026-11-27T21:00:00Z"))  # a tenant's, newer

    def measured() -> tuple[list, str]:
        st = kube.get(CTPL, None, "llama-shared").get("status") or {}
        assert st.get("benchmarks"), st
        return [(e["namespace"], e["benchmark"]) for e in st["benchmarks"]], st.get("benchmarksNote", "")

    entries, note = await eventually(lambda: "ignored" in measured()[1] and measured())  # both runs seen
    assert entries == [("aim-system", "platform-1")]  # unset: only the operator's namespace
    assert f"ignored 1 runs from namespaces the cluster runtime config does not trust ({NS}/steer)" in note
    assert "from AIMBenchmarks aim-system/platform-1" in note

    # The platform team trusts the tenant's namespace: its newer run counts.
    kube.put_object(
        {
            "apiVersion": API,
            "kind": "AIMClusterRuntimeConfig",
            "metadata": {"name": "default"},
            "spec": {"benchmarks": {"trustedNamespaces": [NS]}},
        }
    )
    await eventually(lambda: measured()[0] == [(NS, "steer")])
