"""Service templates end to end: the real operator against the API emulator.

The emulator has no kubelet and no Job controller: the tests play them, setting
a Job's status, creating its pod and serving the pod's log.
"""

from __future__ import annotations

import json

import pytest

from tests.wire.conftest import eventually
from tests.wire.discovery import finish, gpu_node
from tests.wire.discovery import jobs_of as discovery_jobs

TPL = "aim.eai.amd.com/v1alpha1/aimservicetemplates"
CTPL = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"
JOB = "batch/v1/jobs"
NS = "team"
IMAGE = "ghcr.io/silogen/aim-dummy:0.1.8"
DISCOVERY = "app.kubernetes.io/component=discovery"
OUTPUT = json.dumps(
    [
        {
            "filename": "p.yaml",
            "profile": {
                "metadata": {
                    "engine": "vllm",
                    "gpu": "MI300X",
                    "precision": "fp8",
                    "gpu_count": 1,
                    "metric": "latency",
                    "type": "optimized",
                },
                "engine_args": {},
                "env_vars": {},
            },
            "models": [{"name": "org/tiny", "source": "hf://org/tiny", "size_gb": 0.5}],
        }
    ]
)


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


def node(name="gpu-1", device="74a1", count=8):
    return gpu_node(name, device, count)


def template(name, *, model="m", gpu="MI300X", requests=1, **spec):
    body = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"modelName": model, "metric": "latency", "precision": "fp8", **spec},
    }
    if gpu or requests:
        body["spec"]["hardware"] = {"gpu": {k: v for k, v in {"model": gpu, "requests": requests}.items() if v}}
    return body


@pytest.fixture()
def cluster(kube):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    kube.put_object(node())
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMModel",
            "metadata": {
                "name": "m",
                "namespace": NS,
                "annotations": {"aim.eai.amd.com/reconciliation-paused": "true"},
            },
            "spec": {"image": IMAGE},
            "status": {"status": "Ready"},
        }
    )
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMClusterModel",
            "metadata": {"name": "cm", "annotations": {"aim.eai.amd.com/reconciliation-paused": "true"}},
            "spec": {"image": IMAGE},
            "status": {"status": "Ready"},
        }
    )
    return kube


async def create(api, kube, body, resource=TPL):
    ns = body["metadata"].get("namespace")
    response = await api.post(kube.path(resource, ns), json=body)
    assert response.status_code in (200, 201), response.text
    return response.json()


def jobs_of(kube, name, ns=NS):
    return discovery_jobs(kube, name, ns)


async def test_inline_sources_are_ready_without_a_job(kube, api, cluster, operator):
    await create(api, kube, template("inline", modelSources=[{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}]))

    def ready():
        t = kube.get(TPL, NS, "inline")
        assert t["status"]["status"] == "Ready", t["status"]
        return t

    t = await eventually(ready)
    assert condition(t, "Discovered")["reason"] == "InlineModelSources"
    assert t["status"]["hardwareSummary"] == "1 x MI300X"
    assert t["status"]["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    await operator.settle()
    assert kube.list(JOB) == []


async def test_discovery_job_reaches_the_server_and_its_output_fills_the_status(kube, api, cluster, operator):
    await create(api, kube, template("disc"))
    job = (await eventually(lambda: jobs_of(kube, "disc")))[0]
    assert job["metadata"]["ownerReferences"][0]["kind"] == "AIMServiceTemplate"
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == IMAGE
    assert job["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    t = await eventually(
        lambda: condition(kube.get(TPL, NS, "disc"), "DiscoveryJobReady") and kube.get(TPL, NS, "disc")
    )
    assert t["status"]["status"] in ("Progressing", "Pending")
    assert t["status"]["discoveryJob"]["name"] == job["metadata"]["name"]

    finish(kube, job, log="loading...\n" + OUTPUT + "\n")

    def ready():
        t = kube.get(TPL, NS, "disc")
        assert t["status"]["status"] == "Ready", t["status"]
        return t

    t = await eventually(ready)
    assert t["status"]["modelSources"] == [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny", "size": "512Mi"}]
    assert t["status"]["profile"]["metadata"]["type"] == "optimized"
    assert condition(t, "Discovered")["reason"] == "DiscoveryComplete"
    assert condition(t, "DiscoveryJobReady") is None  # only while discovery is under way
    # The Job expires (TTL): the template stays Ready and starts no new Job.
    await api.delete(kube.path(JOB, NS, job["metadata"]["name"]))
    await operator.settle()
    assert kube.get(TPL, NS, "disc")["status"]["status"] == "Ready" and jobs_of(kube, "disc") == []


async def test_cluster_templates_discover_in_the_operator_namespace(kube, api, cluster, operator):
    body = template("ctpl", model="cm")
    body["kind"] = "AIMClusterServiceTemplate"
    del body["metadata"]["namespace"]
    await create(api, kube, body, CTPL)
    job = (await eventually(lambda: jobs_of(kube, "ctpl", "aim-system")))[0]
    finish(kube, job, log=OUTPUT)
    await eventually(lambda: kube.get(CTPL, None, "ctpl")["status"]["status"] == "Ready")
    lease = kube.get("coordination.k8s.io/v1/leases", "aim-system", "aim-discovery-lock")
    assert lease["spec"]["leaseDurationSeconds"] == 30


@pytest.mark.parametrize(
    "log, reason",
    [
        ("", "DiscoveryOutputEmpty"),
        ("ERROR: cannot load profile registry\n", "DiscoveryOutputMalformed"),
        (OUTPUT[:60], "DiscoveryOutputIncomplete"),
    ],
)
async def test_unusable_discovery_output_fails_with_a_specific_reason(kube, api, cluster, operator, log, reason):
    await create(api, kube, template("bad"))
    job = (await eventually(lambda: jobs_of(kube, "bad")))[0]
    finish(kube, job, log=log)

    def failed():
        t = kube.get(TPL, NS, "bad")
        assert t["status"]["status"] == "Failed", t["status"]
        return t

    t = await eventually(failed)
    assert condition(t, "Ready")["reason"] == reason
    assert condition(t, "DiscoveryJobReady")["reason"] == reason
    assert t["status"]["discovery"]["attempts"] == 1
    assert t["status"]["discovery"]["lastFailureReason"].startswith(reason)
    assert "Waiting" in condition(t, "Discovered")["message"]


async def test_a_failed_job_trips_the_breaker_and_no_new_job_starts_before_the_backoff(kube, api, cluster, operator):
    await create(api, kube, template("flaky"))
    job = (await eventually(lambda: jobs_of(kube, "flaky")))[0]
    kube.set_log(NS, f"{job['metadata']['name']}-x7k2p", "Repository Not Found for url: https://huggingface.co/org/x")
    finish(kube, job, ok=False)

    def failed():
        t = kube.get(TPL, NS, "flaky")
        assert t["status"]["status"] == "Failed", t["status"]
        return t

    t = await eventually(failed)
    assert condition(t, "DiscoveryJobReady")["reason"] == "JobBackoffLimitExceeded"
    assert condition(t, "DiscoveryPodsReady")["reason"] == "SourceNotFound"  # explained from the pod's log
    assert t["status"]["discovery"]["attempts"] == 1
    assert condition(t, "Discovered")["message"].startswith("Waiting 1m")
    # The failed Job expires: still no new Job while the backoff lasts. A real API server deletes a Job
    # through the garbage collector (orphan finalizer): wait until it is gone, then for the operator.
    await api.delete(kube.path(JOB, NS, job["metadata"]["name"]))
    await eventually(lambda: jobs_of(kube, "flaky") == [])
    await operator.settle()
    assert jobs_of(kube, "flaky") == []
    t = kube.get(TPL, NS, "flaky")
    assert t["status"]["status"] == "Failed" and t["status"]["discovery"]["attempts"] == 1
    # A spec change resets the breaker: a new Job starts at once.
    response = await api.patch(
        kube.path(TPL, NS, "flaky"),
        json={"spec": {"profileId": "vllm-mi300x-fp8"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    (new,) = await eventually(lambda: jobs_of(kube, "flaky"))
    assert new["metadata"]["name"] != job["metadata"]["name"]
    t = await eventually(
        lambda: kube.get(TPL, NS, "flaky")["status"]["discovery"]["attempts"] == 0 and kube.get(TPL, NS, "flaky")
    )


async def test_at_most_ten_discovery_jobs_run_at_once(kube, api, cluster, operator):
    for i in range(25):
        await create(api, kube, template(f"many-{i:02d}"))

    def ten():
        jobs = kube.list(JOB, NS, label_selector=DISCOVERY)
        assert len(jobs) == 10, len(jobs)
        return jobs

    jobs = await eventually(ten)
    await operator.settle()
    assert len(kube.list(JOB, NS, label_selector=DISCOVERY)) == 10

    def fifteen_waiting():  # each reports that it waits (on a loaded machine some status writes come late)
        waiting = [t for t in kube.list(TPL, NS) if not jobs_of(kube, t["metadata"]["name"])]
        assert len(waiting) == 15
        assert all((condition(t, "DiscoveryJobReady") or {}).get("reason") == "JobNotCreated" for t in waiting)
        assert all(t["status"]["status"] == "Pending" for t in waiting)
        return True

    await eventually(fifteen_waiting)
    # Three finish: three more start, never more than ten active.
    for job in jobs[:3]:
        finish(kube, job, log=OUTPUT)
    await eventually(lambda: len(kube.list(JOB, NS, label_selector=DISCOVERY)) == 13)
    active = [j for j in kube.list(JOB, NS, label_selector=DISCOVERY) if not (j.get("status") or {}).get("conditions")]
    assert len(active) == 10
    await eventually(lambda: len([t for t in kube.list(TPL, NS) if t["status"].get("status") == "Ready"]) == 3)


async def test_node_labels_appearing_and_disappearing_flip_availability(kube, api, cluster, operator):
    await create(
        api, kube, template("h100", gpu="MI325X", modelSources=[{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}])
    )

    def state(want, reason=None):
        def check():
            t = kube.get(TPL, NS, "h100")
            assert t["status"]["status"] == want, t["status"]
            if reason:
                assert condition(t, "GPUReady")["reason"] == reason
            return t

        return check

    await eventually(state("NotAvailable", "GPUNotAvailable"))
    kube.put_object(node("gpu-2", device="74a5"))  # an MI325X node joins
    await eventually(state("Ready", "GPUAvailable"))
    gone = kube.get("v1/nodes", None, "gpu-2")
    gone["metadata"]["labels"].pop("amd.com/gpu.device-id")  # its GPU labels go away
    kube.put_object(gone)
    await eventually(state("NotAvailable", "GPUNotAvailable"))


async def test_min_vram_beyond_every_node_is_not_available_while_others_are_ready(kube, api, cluster, operator):
    sources = [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}]
    big = template("big", gpu=None, modelSources=sources)
    big["spec"]["hardware"]["gpu"]["minVram"] = "512Gi"
    small = template("small", gpu=None, modelSources=sources)
    small["spec"]["hardware"]["gpu"]["minVram"] = "128Gi"
    await create(api, kube, big)
    await create(api, kube, small)
    await eventually(lambda: kube.get(TPL, NS, "big")["status"]["status"] == "NotAvailable")
    assert condition(kube.get(TPL, NS, "big"), "GPUReady")["reason"] == "VRAMNotAvailable"
    await eventually(lambda: kube.get(TPL, NS, "small")["status"]["status"] == "Ready")


async def test_a_steady_template_reconcile_writes_nothing_and_reads_no_nodes(kube, api, cluster, operator):
    sources = [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}]
    await create(api, kube, template("steady", modelSources=sources))
    await create(api, kube, template("elsewhere", gpu="MI355X", requests=3, modelSources=sources))
    await eventually(lambda: kube.get(TPL, NS, "steady")["status"]["status"] == "Ready")
    await eventually(lambda: kube.get(TPL, NS, "elsewhere")["status"]["status"] == "NotAvailable")
    await operator.settle()
    mark = kube.mark()
    processed = operator.runtime.engine.queue.processed
    operator.requeue_all()
    await eventually(lambda: operator.runtime.engine.queue.processed > processed)
    await operator.settle()
    assert kube.writes(since=mark) == 0, kube.calls[mark:]
    assert kube.count("list", "get", resource="nodes", since=mark) == 0


async def test_a_failed_job_seen_before_its_pod_is_still_explained_by_the_pods_log(kube, api, cluster, operator):
    await create(api, kube, template("late-pod"))
    job = (await eventually(lambda: jobs_of(kube, "late-pod")))[0]
    name = job["metadata"]["name"]
    kube.put_object(
        {
            **kube.get(JOB, NS, name),
            "status": {
                "failed": 1,
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                    }
                ],
            },
        }
    )

    def counted():
        t = kube.get(TPL, NS, "late-pod")
        assert t["status"]["status"] == "Failed" and t["status"]["discovery"]["attempts"] == 1, t["status"]
        return t

    await eventually(counted)
    # Only now does the pod show up (watch streams of Jobs and pods are not ordered with each other).
    pod = f"{name}-x7k2p"
    kube.set_log(NS, pod, "Repository Not Found for url: https://huggingface.co/org/x")
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod,
                "namespace": NS,
                "labels": {**job["spec"]["template"]["metadata"]["labels"], "job-name": name},
            },
            "status": {
                "phase": "Failed",
                "containerStatuses": [
                    {"name": "discovery", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
                ],
            },
        }
    )

    def explained():
        t = kube.get(TPL, NS, "late-pod")
        assert (condition(t, "DiscoveryPodsReady") or {}).get("reason") == "SourceNotFound", t["status"]
        return t

    t = await eventually(explained)
    assert t["status"]["discovery"]["attempts"] == 1  # the failure is counted once


async def test_a_cache_moves_on_when_its_template_is_made_ready_by_hand(kube, api, cluster, operator):
    # upstream's aimtemplatecache/waits-for-service-template-readiness (issue 18): a template that is not
    # Ready, a cache waiting for it, then the template's status written Ready by hand.
    # the operator's namespace holds the discovery lock (a real server has none until it is made)
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aim-system"}})
    await create(api, kube, template("late"))  # its discovery Job never ends (no Job controller here)
    await eventually(lambda: kube.get(TPL, NS, "late")["status"]["status"])
    await create(
        api,
        kube,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMTemplateCache",
            "metadata": {"name": "waits", "namespace": NS},
            "spec": {"templateName": "late", "templateScope": "Namespace"},
        },
        resource="aim.eai.amd.com/v1alpha1/aimtemplatecaches",
    )
    tc = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
    await eventually(lambda: kube.get(tc, NS, "waits")["status"]["status"] == "Pending")
    await operator.settle()

    late = kube.get(TPL, NS, "late")
    status = {
        "status": "Ready",
        "modelSources": [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}],
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "AllComponentsReady",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    response = await api.put(kube.path(TPL, NS, "late") + "/status", json={**late, "status": status})
    assert response.status_code == 200, response.text

    def progressing():
        cache = kube.get(tc, NS, "waits")
        assert cache["status"]["status"] == "Progressing", cache["status"]
        return cache

    await eventually(progressing, timeout=10)
    # The Job controller moves on meanwhile (on a real server it reports the Job's pod): the template's
    # next reconcile must not overwrite the status written by hand.
    job = jobs_of(kube, "late")[0]
    kube.put_object({**job, "status": {"active": 1, "startTime": "2026-01-01T00:00:00Z"}})
    await operator.settle()
    assert kube.list("aim.eai.amd.com/v1alpha1/aimartifacts", NS)  # the artifact is being created
    await operator.settle()
    assert kube.get(TPL, NS, "late")["status"]["status"] == "Ready"  # the hand-written status stays
    assert kube.get(tc, NS, "waits")["status"]["status"] == "Progressing"


@pytest.mark.parametrize("model_id", ["org/..", "org/."])  # the CRD's pattern lets both through
async def test_a_model_id_that_climbs_out_of_the_cache_is_invalid_spec(kube, api, cluster, operator, model_id):
    # modelSources[].modelId becomes the mount path under /workspace/cache and AIM_MODEL_ID (issue 18)
    body = template("climbs", modelSources=[{"modelId": model_id, "sourceUri": "hf://org/tiny"}])
    response = await api.post(kube.path(TPL, NS), json=body)
    assert response.status_code == 201, response.text

    def refused():
        t = kube.get(TPL, NS, "climbs")
        cond = condition(t, "ConfigValid")
        assert cond and (cond["status"], cond["reason"]) == ("False", "InvalidSpec"), t.get("status")
        return t

    t = await eventually(refused)
    assert t["status"]["status"] == "Failed" and model_id in condition(t, "ConfigValid")["message"]
    assert not t["status"].get("modelSources")
    await operator.settle()
    assert kube.list(JOB) == []


async def test_a_cluster_template_cannot_lend_its_discovery_the_operator_s_account(kube, api, cluster, operator):
    # Confused deputy (issue 18): cluster-scoped discovery runs in the operator's namespace, so an account named
    # in the spec (here the operator's own, bound to its ClusterRole) is never used there, and no token is mounted.
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "aim-system"}})
    body = template("deputy", model="cm", serviceAccountName="aim-engine-controller-manager")
    body["kind"] = "AIMClusterServiceTemplate"
    del body["metadata"]["namespace"]
    await create(api, kube, body, CTPL)
    job = (await eventually(lambda: jobs_of(kube, "deputy", "aim-system")))[0]
    pod = job["spec"]["template"]["spec"]
    assert pod.get("serviceAccountName", "default") == "default", pod.get("serviceAccountName")
    assert pod["automountServiceAccountToken"] is False
    finish(kube, job, log=OUTPUT)
    await eventually(lambda: kube.get(CTPL, None, "deputy")["status"]["status"] == "Ready")  # discovery still works
