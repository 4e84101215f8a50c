"""Issue 6, end to end: an AIMService naming only an image in a real registry (Debian's docker-registry on
loopback) ends in an InferenceService, with no hand-written model or template.

The operator reads the image's labels through the registry hook, makes the model and its templates,
runs their discovery Jobs (the test plays the kubelet, as in tests/wire/discovery.py), selects a Ready
template for the GPU node the cluster has, caches the template's weights in an artifact (the test
plays the PVC binding and the download Job) and deploys.
"""

from __future__ import annotations

from aim_core.reconcile import naming
from tests.wire import discovery
from tests.wire.conftest import eventually
from tests.wire.test_registry_wire import LABELS, MODELS, NS, SERVICES, TEMPLATES, condition, create, namespaces

TEMPLATE_CACHES = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
ISVC = "serving.kserve.io/v1beta1/inferenceservices"
ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
JOBS = "batch/v1/jobs"
PVCS = "v1/persistentvolumeclaims"
MERGE = {"Content-Type": "application/merge-patch+json"}


async def complete_job(api, kube, job):
    """Play the Job controller and the kubelet: one pod that succeeded, then the Job Complete."""
    name, template = job["metadata"]["name"], job["spec"]["template"]
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name[:50]}-x1",
                "namespace": NS,
                "labels": {**template["metadata"]["labels"], "job-name": name},
            },
            "spec": template["spec"],
            "status": {"phase": "Succeeded"},
        }
    )
    response = await api.patch(
        kube.path(JOBS, NS, name, "status"),
        headers=MERGE,
        json={"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
    )
    assert response.status_code == 200, response.text


async def test_a_service_on_a_registry_image_runs_all_the_way_to_an_inference_service(
    kube, api, operator, oci_registry, unique_repo
):
    namespaces(kube, NS)
    kube.put_object(discovery.gpu_node(count=8))  # MI300X: both recommended deployments fit
    pushed = oci_registry.push_image(unique_repo, "2.0", labels=LABELS)
    await create(
        api,
        kube,
        SERVICES,
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMService",
            "metadata": {"name": "by-image", "namespace": NS},
            "spec": {"model": {"image": pushed.reference}},
        },
    )

    model = await eventually(
        lambda: [
            m
            for m in kube.list(MODELS, NS)
            if m["spec"]["image"] == pushed.reference and (m.get("status") or {}).get("imageMetadata")
        ][0],
        timeout=30,
    )
    name = model["metadata"]["name"]

    def two_templates():
        found = kube.list(TEMPLATES, NS, label_selector=f"aim.eai.amd.com/model={name}")
        assert len(found) == 2
        return found

    for tpl in await eventually(two_templates, timeout=30):
        tname = tpl["metadata"]["name"]
        (job,) = await eventually(lambda: discovery.jobs_of(kube, tname, NS), timeout=30)
        gpu = tpl["spec"]["hardware"]["gpu"]
        discovery.finish(
            kube,
            job,
            log=discovery.output(
                model_id="org/registry-wire",
                count=gpu["requests"],
                metric=tpl["spec"]["metric"],
                precision=tpl["spec"]["precision"],
            ),
        )

    # A Ready template is chosen for the cluster's GPUs; the service goes on to its template cache.
    def chose_a_template():
        svc = kube.get(SERVICES, NS, "by-image")
        assert condition(svc, "TemplateReady")["status"] == "True"
        assert svc["status"]["resolvedModel"]["name"] == name
        assert svc["status"]["resolvedTemplate"]["name"] in {t["metadata"]["name"] for t in two_templates()}
        assert kube.list(TEMPLATE_CACHES, NS)
        return svc

    await eventually(chose_a_template, timeout=30)

    # Play the kubelet for the artifact the cache made: its PVC binds, its download Job completes.
    def artifact():
        found = kube.list(ART, NS)
        assert len(found) == 1, found
        return found[0]

    art = await eventually(artifact, timeout=30)
    uid, aname = art["metadata"]["uid"], art["metadata"]["name"]
    download = await eventually(lambda: kube.get(JOBS, NS, naming.download_job_name(aname, uid)), timeout=30)
    claim = naming.artifact_pvc_name(aname, uid)
    await api.patch(kube.path(PVCS, NS, claim, "status"), json={"status": {"phase": "Bound"}}, headers=MERGE)
    await complete_job(api, kube, download)

    def deployed():
        found = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=by-image")
        assert len(found) == 1
        return found[0]

    isvc = await eventually(deployed, timeout=30)
    assert pushed.reference in str(isvc["spec"]["predictor"])
