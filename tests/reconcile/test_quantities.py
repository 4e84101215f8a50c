"""Quantities the operator writes are in the form Kubernetes prints them (Go's resource.Quantity), issue 18."""

from __future__ import annotations

import pytest

from aim_core.model.templates import custom_templates
from aim_core.reconcile.quantities import canonical
from aim_core.service.runtime import container_resources
from aim_core.template.hardware import GpuCheck, resolved_hardware


@pytest.mark.parametrize(
    "given, printed",
    [
        ("2000m", "2"),
        (2, "2"),
        (1, "1"),
        ("1.5", "1500m"),
        (0.5, "500m"),
        (1000, "1k"),
        ("1000M", "1G"),
        ("100m", "100m"),
        ("1100m", "1100m"),
        ("1536", "1536"),
        ("12e2", "1200"),
        ("1e3", "1e3"),
        ("1e-3", "1e-3"),
        ("64Gi", "64Gi"),
        ("1.5Gi", "1536Mi"),
        ("1024Ki", "1Mi"),
        ("0.5Ki", "512"),
        ("1024Gi", "1Ti"),
        ("192G", "192G"),
        ("0.0000000001", "1n"),
        ("-2000m", "-2"),
        ("0", "0"),
        ("+4", "4"),
    ],
)
def test_quantities_are_printed_as_kubernetes_prints_them(given, printed):
    assert canonical(given) == printed


@pytest.mark.parametrize("other", ["abc", "", None, True, "1.5.2", {"a": 1}])
def test_what_is_not_a_quantity_is_left_alone(other):
    assert canonical(other) == other


def test_a_cpu_only_custom_model_gets_templates_with_canonical_quantities():
    # upstream's aimmodel/custom-models/cpu-only: requests 1, limits 2 read back as "1" and "2", never "2000m"
    model = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMModel",
        "metadata": {"name": "cpu-model", "namespace": "team", "uid": "u1"},
        "spec": {
            "image": "ghcr.io/org/img:1",
            "custom": {"hardware": {"cpu": {"requests": 1, "limits": "2000m"}}},
            "modelSources": [{"modelId": "org/m", "sourceUri": "hf://org/m", "size": "1.5Gi"}],
        },
    }
    (tpl,) = custom_templates(model)
    assert tpl["spec"]["hardware"]["cpu"] == {"requests": "1", "limits": "2"}
    assert tpl["spec"]["resources"] == {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}
    assert tpl["spec"]["modelSources"][0]["size"] == "1536Mi"
    resolved = resolved_hardware(
        tpl["spec"] | {"hardware": {"cpu": {"requests": 1, "limits": "2000m"}, "gpu": {"minVram": "65536Mi"}}},
        None,
        GpuCheck(None),
    )
    assert resolved["cpu"] == {"requests": "1", "limits": "2"} and resolved["gpu"]["minVram"] == "64Gi"


def test_serving_resources_are_canonical():
    template = {
        "spec": {"hardware": {"gpu": {"requests": 32, "model": "MI300X"}}, "resources": {"limits": {"cpu": "4000m"}}},
        "status": {"resolvedHardware": {"gpu": {"requests": 32, "model": "MI300X"}}},
    }
    service = {"spec": {"resources": {"requests": {"memory": "2048Gi"}}}}
    resources = container_resources(service, template, "amd.com/gpu")
    assert resources["requests"]["memory"] == "2Ti" and resources["limits"]["memory"] == "1536Gi"
    assert resources["requests"]["cpu"] == "128" and resources["limits"]["cpu"] == "4"
