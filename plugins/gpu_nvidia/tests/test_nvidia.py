"""The NVIDIA GPU vendor over Node objects labelled by NVIDIA GPU Feature Discovery."""

from typing import Any

import pytest
from aim_plugin_gpu_nvidia.vendor import NvidiaGpuVendor

from aim_core import GpuDevice, GpuVendor
from aim_core.plugin.manager import get_plugin_manager, providers

GIB = 1024**3
nvidia = NvidiaGpuVendor()


def node(labels: dict[str, str], capacity: dict[str, str] | None = None, allocatable: dict[str, str] | None = None):
    """A Node as the API server returns it, with only the fields GPU detection reads."""
    status: dict[str, Any] = {}
    if capacity is not None:
        status["capacity"] = {"cpu": "224", "memory": "2063Gi", **capacity}
    if allocatable is not None:
        status["allocatable"] = {"cpu": "223", "memory": "2050Gi", **allocatable}
    metadata = {"name": "gpu-0", "labels": {"kubernetes.io/os": "linux", **labels}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "status": status}


def gfd(product: str, memory_mib: int | None, count: int | None = 8, **extra: str) -> dict[str, str]:
    """The labels GPU Feature Discovery puts on a node."""
    labels = {
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/gfd.timestamp": "1718000000",
        "nvidia.com/gpu.compute.major": "9",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/mig.capable": "false",
        "nvidia.com/gpu.product": product,
        **extra,
    }
    if memory_mib is not None:
        labels["nvidia.com/gpu.memory"] = str(memory_mib)
    if count is not None:
        labels["nvidia.com/gpu.count"] = str(count)
    return labels


def gpu(model, count, vram_bytes, product):
    return GpuDevice("nvidia", model, count, "nvidia.com/gpu", vram_bytes, product)


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        # memory is GFD's MiB rounded up to whole GiB: an "80GB" H100 reports 81559 MiB
        (gfd("NVIDIA-H100-80GB-HBM3", 81559), gpu("H100", 8, 80 * GIB, "NVIDIA-H100-80GB-HBM3")),
        (gfd("NVIDIA-H200", 143771), gpu("H200", 8, 141 * GIB, "NVIDIA-H200")),
        (gfd("NVIDIA-A100-SXM4-80GB", 81920, 4), gpu("A100", 4, 80 * GIB, "NVIDIA-A100-SXM4-80GB")),
        (gfd("Tesla-V100-SXM2-16GB", 16160), gpu("V100", 8, 16 * GIB, "Tesla-V100-SXM2-16GB")),
        (gfd("NVIDIA-L40S", 46068, 2), gpu("L40S", 2, 45 * GIB, "NVIDIA-L40S")),
        (gfd("NVIDIA-B200", 183359), gpu("B200", 8, 180 * GIB, "NVIDIA-B200")),
        (gfd("NVIDIA-GB200", 189471, 4), gpu("GB200", 4, 186 * GIB, "NVIDIA-GB200")),
        (gfd("NVIDIA-A10G", 23028, 1), gpu("A10G", 1, 23 * GIB, "NVIDIA-A10G")),
        (gfd("NVIDIA-L4", 23034, 1), gpu("L4", 1, 23 * GIB, "NVIDIA-L4")),
        (gfd("Tesla-T4", 15360, 1), gpu("T4", 1, 15 * GIB, "Tesla-T4")),
        (gfd("NVIDIA-GeForce-RTX-4090", 24564, 1), gpu("RTX4090", 1, 24 * GIB, "NVIDIA-GeForce-RTX-4090")),
        (gfd("NVIDIA-RTX-A6000", 49140, 2), gpu("A6000", 2, 48 * GIB, "NVIDIA-RTX-A6000")),
        # time-slicing renames the product; affinity must still match the label as written
        (gfd("NVIDIA-A100-SXM4-40GB-SHARED", 40960, 1), gpu("A100", 1, 40 * GIB, "NVIDIA-A100-SXM4-40GB-SHARED")),
        # an unrecognised part keeps its product name
        (gfd("NVIDIA-DGX-Spark", 119808, 1), gpu("NVIDIA-DGX-SPARK", 1, 117 * GIB, "NVIDIA-DGX-Spark")),
    ],
    ids=lambda value: value.product_id if isinstance(value, GpuDevice) else None,
)
def test_detect_gfd_labels(labels, expected):
    assert nvidia.detect(node(labels)) == [expected]


H100 = "NVIDIA-H100-80GB-HBM3"


@pytest.mark.parametrize(
    ("labels", "capacity", "allocatable", "count", "vram"),
    [
        pytest.param(gfd(H100, 81559), {"nvidia.com/gpu": "4"}, None, 8, 80 * GIB, id="label-count"),
        pytest.param(
            gfd(H100, 81559, None), {"nvidia.com/gpu": "8"}, {"nvidia.com/gpu": "7"}, 7, 80 * GIB, id="allocatable"
        ),
        pytest.param(gfd(H100, None, None), {"nvidia.com/gpu": "8"}, None, 8, 80 * GIB, id="capacity-name-memory"),
        pytest.param(gfd("NVIDIA-H100-PCIe", None, None), None, None, 1, None, id="nothing-known-one-device"),
    ],
)
def test_count_and_memory_fallbacks(labels, capacity, allocatable, count, vram):
    [device] = nvidia.detect(node(labels, capacity, allocatable))
    assert (device.count, device.vram_bytes) == (count, vram)


@pytest.mark.parametrize(
    ("labels", "capacity"),
    [
        pytest.param({}, None, id="cpu-node"),
        pytest.param(
            {"amd.com/gpu.device-id": "74a1", "amd.com/gpu.vram": "192G"}, {"amd.com/gpu": "8"}, id="amd-node"
        ),
        pytest.param({"nvidia.com/gpu.present": "true"}, {"nvidia.com/gpu": "8"}, id="resource-without-gfd"),
        pytest.param({"nvidia.com/gpu.product": " "}, None, id="blank-product"),
    ],
)
def test_detect_finds_nothing(labels, capacity):
    assert nvidia.detect(node(labels, capacity)) == []


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("H100", "H100"),
        ("h100", "H100"),
        ("NVIDIA H100 PCIe", "H100"),
        ("nvidia_h100_80gb_hbm3", "H100"),
        ("A100 80GB", "A100"),
        ("Tesla V100", "V100"),
        ("v100", "V100"),
        ("l40s", "L40S"),
        ("gb200", "GB200"),
        ("GeForce RTX 4090", "RTX4090"),
        ("rtx4090", "RTX4090"),
        ("NVIDIA-RTX-6000-Ada-Generation", "RTX6000ADA"),
        ("NVIDIA DGX Spark", "NVIDIA-DGX-SPARK"),
        ("MI300X", None),
        ("AMD Instinct MI300X", None),
        ("V620", None),  # AMD's
        ("W7900", None),
        ("", None),
    ],
)
def test_normalize_model(written, expected):
    assert nvidia.normalize_model(written) == expected


def test_preference_puts_newer_and_bigger_first():
    order = list(nvidia.preference())
    assert order.index("B200") < order.index("H200") < order.index("H100") < order.index("A100") < order.index("L40S")
    assert order.index("L40S") < order.index("T4")


CLUSTER = [
    d
    for labels in (
        gfd("NVIDIA-H100-80GB-HBM3", 81559),
        gfd("NVIDIA-H100-PCIe", 81559, 2),
        gfd("NVIDIA-A100-SXM4-40GB", 40960),
        gfd("NVIDIA-A100-SXM4-80GB-SHARED", 81920),
        gfd("NVIDIA-L4", 23034, 1),
    )
    for d in nvidia.detect(node(labels))
]


def product_in(*products):
    return [{"key": "nvidia.com/gpu.product", "operator": "In", "values": list(products)}]


@pytest.mark.parametrize(
    ("model", "min_vram", "expected"),
    [
        pytest.param("h100", None, product_in(H100, "NVIDIA-H100-PCIe"), id="model-every-product"),
        pytest.param(
            "A100", None, product_in("NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-80GB-SHARED"), id="model-shared-label"
        ),
        pytest.param("H200", None, None, id="model-absent"),
        pytest.param(
            None,
            80 * GIB,
            product_in("NVIDIA-A100-SXM4-80GB-SHARED", H100, "NVIDIA-H100-PCIe"),
            id="vram-per-device-not-per-model",
        ),
        pytest.param(None, 200 * GIB, None, id="vram-too-much"),
        pytest.param(None, None, None, id="neither"),
    ],
)
def test_node_affinity_terms(model, min_vram, expected):
    assert nvidia.node_affinity_terms(model, min_vram, CLUSTER) == expected


def test_node_affinity_ignores_other_vendors_devices():
    foreign = [GpuDevice("amd", "MI300X", 8, "amd.com/gpu", 192 * GIB, "74a1")]
    assert nvidia.node_affinity_terms(None, 1, foreign) is None


@pytest.mark.parametrize(
    ("key", "watched"),
    [
        ("nvidia.com/gpu.product", True),
        ("nvidia.com/gpu", True),
        ("nvidia.com/mig.strategy", True),
        ("amd.com/gpu.device-id", False),
        ("feature.node.kubernetes.io/pci-10de.present", False),
    ],
)
def test_watches_node_key(key, watched):
    assert nvidia.watches_node_key(key) is watched


def test_the_plugin_manager_offers_the_nvidia_vendor_through_the_hook():
    pm = get_plugin_manager(only=("gpu_nvidia",), disabled=())
    vendors = providers(pm, "aim_gpu_vendors")
    assert list(vendors) == ["nvidia"]
    assert isinstance(vendors["nvidia"], GpuVendor)
    assert [d.model for d in vendors["nvidia"].detect(node(gfd("NVIDIA-H100-80GB-HBM3", 81559)))] == ["H100"]
