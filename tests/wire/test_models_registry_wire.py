"""Models against a real registry: Debian's docker-registry on loopback, the operator's own OCI client.

A logging front sits between the operator and the registry, so the tests count
the HTTP requests a model costs: at most 3 for an image read cold (manifest,
config; a 401 challenge first with auth), none once its status holds the
metadata, also after a restart. Skipped when ``docker-registry`` is missing.
"""

from __future__ import annotations

import asyncio
import json
import time

from aim_core.operator.settings import Settings
from aim_core.plugin.providers import RegistryCredentials
from tests.wire.conftest import Operator, eventually
from tests.wire.discovery import gpu_node

MODELS = "aim.eai.amd.com/v1alpha1/aimmodels"
CLUSTER_MODELS = "aim.eai.amd.com/v1alpha1/aimclustermodels"
TEMPLATES = "aim.eai.amd.com/v1alpha1/aimservicetemplates"
SECRETS = "v1/secrets"
NS = "ml-team"
LABELS = {
    "com.amd.aim.model.canonicalName": "org/dummy",
    "com.amd.aim.title": "Dummy",
    "com.amd.aim.model.recommendedDeployments": json.dumps(
        [
            {"gpuModel": "MI300X", "gpuCount": 1, "metric": "latency", "precision": "fp8"},
            {"gpuModel": "MI300X", "gpuCount": 8, "metric": "throughput", "precision": "fp16"},
        ]
    ),
    "org.opencontainers.image.version": "1.0",
}


def condition(obj, type_):
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c["type"] == type_:
            return c
    return None


async def create(api, kube, resource, body):
    response = await api.post(kube.path(resource, body["metadata"].get("namespace")), json=body)
    assert response.status_code in (200, 201), response.text


def model_body(name, image, secret=None):
    spec = {"image": image}
    if secret:
        spec["imagePullSecrets"] = [{"name": secret}]
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def with_metadata(kube, name):
    def check():
        m = kube.get(MODELS, NS, name)
        assert m["status"]["imageMetadata"]["model"]
        return m

    return check


async def start_operator(kube) -> Operator:
    op = Operator()
    op.start(Settings(operator_namespace="aim-system", workers=2), kube.url)
    deadline = time.monotonic() + 10
    while not (op.ready.is_set() and op.runtime is not None and op.runtime.ready.is_set()):
        assert op.error is None and time.monotonic() < deadline
        await asyncio.sleep(0.02)
    return op


async def stop_operator(op: Operator) -> None:
    op.stop.set()
    while op.thread.is_alive():
        await asyncio.sleep(0.05)
    assert op.error is None


async def test_basic_auth_image_read_in_three_requests_and_never_again(
    kube, api, oci_registry_basic, registry_front, unique_repo
):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    front = registry_front(oci_registry_basic)
    pushed = front.registry.push_image(unique_repo, "1.0", labels=LABELS)
    await create(api, kube, SECRETS, front.registry.pull_secret("regcred", NS))
    before = len(front.requests())
    op = await start_operator(kube)
    try:
        await create(api, kube, MODELS, model_body("dummy", pushed.reference, "regcred"))
        m = await eventually(with_metadata(kube, "dummy"), timeout=15)
        assert m["status"]["imageMetadata"]["model"]["title"] == "Dummy"
        assert m["status"]["imageMetadata"]["oci"] == {"version": "1.0"}
        assert m["status"]["resolvedImage"]["digest"] == pushed.digest
        await eventually(lambda: len(kube.list(TEMPLATES, NS, label_selector="aim.eai.amd.com/model=dummy")) == 2)
        await op.settle()
        cold = front.requests()[before:]
        assert len(cold) <= 3, cold  # the 401 challenge, the manifest, the config blob
        assert [r.answered for r in cold if "/manifests/" in r.path][-1] == 200
        assert [r.answered for r in cold if "/blobs/" in r.path] == [200]
        assert all(r.authorization in ("", "basic") for r in cold)
    finally:
        await stop_operator(op)
    # a restarted operator reads nothing: the status is the cache
    warm_from = len(front.requests())
    op = await start_operator(kube)
    try:
        op.requeue_all()
        await op.settle()
        assert condition(kube.get(MODELS, NS, "dummy"), "ImageMetadataReady")["status"] == "True"
    finally:
        await stop_operator(op)
    assert front.requests()[warm_from:] == []


async def test_token_auth_and_a_multi_arch_index(kube, api, oci_registry_token, unique_repo, operator):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    repo = f"private/{unique_repo}"
    oci_registry_token.push_index(
        repo, "multi", {"linux/arm64": {"com.amd.aim.title": "arm"}, "linux/amd64": {"com.amd.aim.title": "amd"}}
    )
    await create(api, kube, SECRETS, oci_registry_token.pull_secret("regcred", NS))
    await create(api, kube, MODELS, model_body("multi", oci_registry_token.image(repo, "multi"), "regcred"))
    m = await eventually(with_metadata(kube, "multi"), timeout=15)
    assert m["status"]["imageMetadata"]["model"] == {"title": "amd"}
    assert m["status"]["status"] == "Ready"  # no recommended deployments: no templates expected


async def test_registry_errors_name_the_image_and_never_the_credentials(
    kube, api, oci_registry_basic, unique_repo, operator
):
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    pushed = oci_registry_basic.push_image(unique_repo, "1.0", labels=LABELS)
    missing = oci_registry_basic.image(unique_repo, "9.9")
    await create(api, kube, SECRETS, oci_registry_basic.pull_secret("regcred", NS))
    bad = oci_registry_basic.pull_secret("badcred", NS, RegistryCredentials(username="alice", password="n0pe-n0pe"))
    await create(api, kube, SECRETS, bad)
    await create(api, kube, MODELS, model_body("gone", missing, "regcred"))
    await create(api, kube, MODELS, model_body("denied", pushed.reference, "badcred"))

    gone = await eventually(
        lambda: (m := kube.get(MODELS, NS, "gone"))["status"]["status"] == "Degraded" and m, timeout=15
    )
    assert condition(gone, "ImageMetadataReady")["reason"] == "ImageNotFound"
    assert missing in condition(gone, "ImageMetadataReady")["message"]
    denied = await eventually(
        lambda: (m := kube.get(MODELS, NS, "denied"))["status"]["status"] == "Failed" and m, timeout=15
    )
    assert condition(denied, "AuthValid")["status"] == "False"
    assert oci_registry_basic.host in condition(denied, "ImageMetadataReady")["message"]
    assert "n0pe-n0pe" not in json.dumps(denied) + json.dumps(kube.events_for("denied", NS))


async def test_a_custom_model_whose_image_does_not_exist_is_degraded(
    kube, api, oci_registry_token, unique_repo, operator
):
    # upstream's aimmodel/custom-models/nonexistent-image (Q8, issue 18): a public registry answers an anonymous
    # request for a repository it does not know with 401 insufficient_scope, as for a private one.
    kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}})
    body = model_body("custom-missing", oci_registry_token.image(f"private/{unique_repo}", "0.0.1"))
    body["spec"].update(
        modelSources=[{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}],
        custom={"hardware": {"gpu": {"requests": 1, "model": "MI300X"}}},
    )
    await create(api, kube, MODELS, body)

    m = await eventually(
        lambda: (m := kube.get(MODELS, NS, "custom-missing"))["status"]["status"] == "Degraded" and m, timeout=15
    )
    ready = condition(m, "ImageMetadataReady")
    assert ready["status"] == "False" and "may not exist" in ready["message"], ready
    assert condition(m, "AuthValid") is None or condition(m, "AuthValid")["status"] != "False"

    # Its template (inline sources, as a custom model's) is Degraded through the model, not Failed, and the
    # model does not count that against itself: no circle ending both Failed.
    kube.put_object(gpu_node("gpu-1", "74a1", 8))
    template = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {"name": "custom-missing-tpl", "namespace": NS},
        "spec": {
            "modelName": "custom-missing",
            "hardware": {"gpu": {"requests": 1, "model": "MI300X"}},
            "modelSources": [{"modelId": "org/tiny", "sourceUri": "hf://org/tiny", "size": "512Mi"}],
        },
    }
    await create(api, kube, TEMPLATES, template)

    def template_degraded():
        t = kube.get(TEMPLATES, NS, "custom-missing-tpl")
        assert t["status"]["status"] == "Degraded", t.get("status")
        assert condition(t, "ModelReady")["reason"] == "ModelFailed"
        return t

    await eventually(template_degraded, timeout=15)
    await operator.settle()
    await asyncio.sleep(1)  # a further round of model and template reconciles, were there a circle
    await operator.settle()
    m = kube.get(MODELS, NS, "custom-missing")
    assert m["status"]["status"] == "Degraded", m["status"]
    templates = condition(m, "ServiceTemplatesReady")
    assert templates["reason"] == "TemplatesProgressing" and "wait for this model" in templates["message"], templates
    assert kube.get(TEMPLATES, NS, "custom-missing-tpl")["status"]["status"] == "Degraded"
