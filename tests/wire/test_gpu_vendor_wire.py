"""A third-party GPU vendor plugin, registered by the test, gates templates like the built-in ones."""

from __future__ import annotations

import pytest

from aim_core.plugin.manager import get_plugin_manager
from tests.template.acme import acme_node, acme_plugin
from tests.wire.conftest import eventually
from tests.wire.test_templates_wire import NS, TPL, cluster, condition, create, template  # noqa: F401


@pytest.fixture()
def operator_plugins():
    pm = get_plugin_manager()
    pm.register(acme_plugin(), name="test-acme-gpus")
    return pm


async def test_a_template_for_a_third_party_gpu_follows_its_nodes(kube, api, cluster, operator):  # noqa: F811
    body = template("accel", gpu="x9", requests=2, modelSources=[{"modelId": "org/tiny", "sourceUri": "hf://org/tiny"}])
    await create(api, kube, body)

    def state(want):
        def check():
            t = kube.get(TPL, NS, "accel")
            assert t["status"]["status"] == want, t["status"]
            return t

        return check

    t = await eventually(state("NotAvailable"))
    assert "x9 is not present on any node" in condition(t, "GPUReady")["message"]
    kube.put_object(acme_node())
    t = await eventually(state("Ready"))
    assert t["status"]["resolvedHardware"]["gpu"]["resourceName"] == "acme.example/accel"
    terms = t["status"]["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["key"] == "acme.example/accel.model"
    gone = kube.get("v1/nodes", None, "acme-1")
    del gone["metadata"]["labels"]["acme.example/accel.model"]
    kube.put_object(gone)
    await eventually(state("NotAvailable"))
