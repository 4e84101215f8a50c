"""`aim-engine templates clone` reads the cluster's AIMClusterServiceTemplates through the API."""

from __future__ import annotations

import asyncio

import yaml

from aim_core.cli import main
from tests.wire.test_services_wire import cluster  # noqa: F401 - fixture

TEMPLATES = "aim.eai.amd.com/v1alpha1/aimclusterservicetemplates"


async def test_clone_reads_the_cluster_and_prints_applyable_yaml(kube, api, cluster, kubeconfig, capsys):  # noqa: F811
    assert await asyncio.to_thread(main, ["templates", "clone", "--from-gpu", "MI300X", "--to-gpu", "MI308X"]) == 0
    clones = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert clones and all(c["spec"]["hardware"]["gpu"]["model"] == "MI308X" for c in clones)
    response = await api.post(kube.path(TEMPLATES, None), json=clones[0])  # the API accepts it as printed
    assert response.status_code in (200, 201), response.text
    assert kube.get(TEMPLATES, None, clones[0]["metadata"]["name"])["spec"]["env"][-1]["name"] == "AIM_GPU_MODEL"
