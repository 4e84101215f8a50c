"""`aim-engine run -n team`: only the listed namespaces are reconciled."""

from __future__ import annotations

import asyncio

import pytest

from aim_core.operator.settings import Settings
from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


@pytest.fixture()
def operator_settings() -> Settings:
    return Settings(namespaces=("team",), operator_namespace="aim-system", workers=2)


@pytest.fixture()
def namespaces(kube):
    for ns in ("team", "elsewhere", "aim-system"):
        kube.put_object(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}, "status": {"phase": "Active"}}
        )


async def test_objects_outside_the_watched_namespaces_are_left_alone(kube, api, namespaces, operator):
    for ns in ("team", "elsewhere"):
        response = await api.post(
            kube.path(RC, ns),
            json={
                "apiVersion": "aim.eai.amd.com/v1alpha1",
                "kind": "AIMRuntimeConfig",
                "metadata": {"name": "default", "namespace": ns},
                "spec": {"env": [{"name": "A", "value": "1"}]},
            },
        )
        assert response.status_code == 201, response.text

    await eventually(lambda: kube.get(RC, "team", "default")["status"]["conditions"])
    await asyncio.sleep(0.3)
    await operator.settle()
    assert "status" not in kube.get(RC, "elsewhere", "default")
