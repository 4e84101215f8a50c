"""Once settled, the operator writes nothing: for every kind of object its builders make.

The emulator stores objects as a real API server does (no empty metadata maps,
schema pruning and defaults, no new version for a no-op write), so a child
whose planned form differs from its stored form would be applied on every
reconcile here as on a real cluster (issue 13: the HTTPRoute hot loop).
"""

from __future__ import annotations

import copy

from aim_core.reconcile.resources import MODELS
from tests.wire.conftest import eventually
from tests.wire.test_services_wire import ISVC, NS, ROUTE, SVC, cluster, create  # noqa: F401 - fixture

TC = "aim.eai.amd.com/v1alpha1/aimtemplatecaches"
ART = "aim.eai.amd.com/v1alpha1/aimartifacts"
MODEL = "aim.eai.amd.com/v1alpha1/aimmodels"
TEMPLATE = "aim.eai.amd.com/v1alpha1/aimservicetemplates"
MERGE = {"Content-Type": "application/merge-patch+json"}


async def quiet_pass(operator, kube) -> list:
    """Reconcile everything once more after the operator settled; return the writes it made."""
    await operator.settle()
    mark = kube.mark()
    processed = operator.runtime.engine.queue.processed
    operator.requeue_all()
    await eventually(lambda: operator.runtime.engine.queue.processed > processed)
    await operator.settle()
    return [c for c in kube.calls[mark:] if c.user_agent.startswith("aim-engine") and c.verb not in ("get", "list")]


async def test_a_routed_service_without_annotations_settles_with_zero_writes(kube, api, cluster, operator):
    svc = cluster["qwen-chat"]
    assert not svc["metadata"].get("annotations") and not (svc["spec"].get("routing") or {}).get("annotations")
    await create(api, kube, svc)
    route = await eventually(
        lambda: kube.list(ROUTE, NS, label_selector="aim.eai.amd.com/service=qwen-chat")[0], timeout=30
    )
    assert "annotations" not in route["metadata"]  # the server does not keep an empty map
    await eventually(lambda: kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-chat"))
    assert await quiet_pass(operator, kube) == []

    # A no-op edit of the service (an annotation nothing reads) reconciles it and writes nothing.
    await operator.settle()
    processed = operator.runtime.engine.queue.processed
    response = await api.patch(
        kube.path(SVC, NS, "qwen-chat"), headers=MERGE, json={"metadata": {"annotations": {"example.com/touched": "1"}}}
    )
    assert response.status_code == 200, response.text
    mark = kube.mark()
    await eventually(lambda: operator.runtime.engine.queue.processed > processed)
    await operator.settle()
    assert kube.writes(since=mark, agent="aim-engine") == 0, kube.calls[mark:]


async def test_every_builders_output_settles_with_zero_writes(kube, api, cluster, operator):
    """InferenceServices (plain, KEDA-scaled), HTTPRoutes (plain, path template and timeout), a dedicated
    template cache and its artifacts, a model made from an image, a template derived by overrides."""
    for name in ("qwen-chat", "qwen-batch", "llama-chat", "llama-long-context"):
        await create(api, kube, cluster[name])
    # The same on the qwen template, whose cache is Ready, so that their InferenceServices are built.
    for name, like in (("qwen-keda", "llama-chat"), ("qwen-long", "llama-long-context")):
        body = copy.deepcopy(cluster["qwen-chat"])
        body["metadata"]["name"] = name
        body["spec"].update({k: v for k, v in cluster[like]["spec"].items() if k not in ("model", "template")})
        await create(api, kube, body)
    by_image = copy.deepcopy(cluster["qwen-by-image"])
    by_image["metadata"]["name"] = "custom-image"
    by_image["spec"]["model"]["image"] = "registry.example.com/team/custom-model:1.0"
    await create(api, kube, by_image)
    derived = copy.deepcopy(cluster["qwen-chat"])
    derived["metadata"]["name"] = "qwen-throughput"
    derived["spec"]["template"] = {"name": "amdenterpriseai-aim-qwen-qwen3-32b-0-8-5-1x-mi300x-lat-fp8-31dd"}
    derived["spec"]["overrides"] = {"metric": "throughput"}
    await create(api, kube, derived)

    def built():
        kinds = {}
        for resource, name in (
            (ISVC, "qwen-chat"),
            (ISVC, "qwen-keda"),
            (ISVC, "qwen-long"),
            (ROUTE, "qwen-chat"),
            (ROUTE, "qwen-long"),
            (ROUTE, "llama-long-context"),
            (TC, "qwen-batch"),
            (TC, "llama-chat"),
        ):
            found = kube.list(resource, NS, label_selector=f"aim.eai.amd.com/service={name}")
            assert found, (resource, name)
            kinds[resource] = found
        assert kube.list(ART, NS), "the dedicated cache made no artifacts"
        assert kube.list(MODEL, NS, label_selector="aim.eai.amd.com/origin=auto-generated") or [
            m for m in kube.list(MODEL, NS) if m["spec"].get("image", "").startswith("registry.example.com")
        ]
        assert [
            t
            for t in kube.list(TEMPLATE, NS)
            if t["metadata"].get("labels", {}).get("aim.eai.amd.com/origin") == "derived"
        ]
        return kinds

    await eventually(built, timeout=60)  # a deadline, not a speed target: the machine may be loaded
    # The model made from the image cannot reach its (made-up) registry and keeps retrying, which is
    # its own controller's business: pause it, so that only what the service controller built is left.
    paused = []
    for model in kube.list(MODEL, NS):
        if model["spec"].get("image", "").startswith("registry.example.com"):
            response = await api.patch(
                kube.path(MODEL, NS, model["metadata"]["name"]),
                headers=MERGE,
                json={"metadata": {"annotations": {"aim.eai.amd.com/reconciliation-paused": "true"}}},
            )
            assert response.status_code == 200, response.text
            paused.append(model["metadata"]["name"])
    assert paused, "the service made no model from its image"
    # The operator must have seen the pause before the quiet pass starts: a retry firing in
    # between would still write the model's status, as it should for an unpaused model.
    store = operator.runtime.engine.store
    await eventually(
        lambda: all(
            store.get(MODELS, NS, name)["metadata"].get("annotations", {}).get("aim.eai.amd.com/reconciliation-paused")
            == "true"
            for name in paused
        )
    )
    keda = kube.list(ISVC, NS, label_selector="aim.eai.amd.com/service=qwen-keda")[0]
    assert keda["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "keda"
    assert await quiet_pass(operator, kube) == []
    assert await quiet_pass(operator, kube) == []
