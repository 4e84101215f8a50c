"""The AMD GPU vendor over Node objects labelled the way AMD's node labellers label them."""

from typing import Any

import pytest
from aim_plugin_gpu_amd.names import parse_vram
from aim_plugin_gpu_amd.vendor import AmdGpuVendor

from aim_core import GpuDevice, GpuVendor
from aim_core.plugin.manager import get_plugin_manager, providers

GIB = 1024**3
amd = AmdGpuVendor()


def node(labels: dict[str, str], capacity: dict[str, str] | None = None, allocatable: dict[str, str] | None = None):
    """A Node as the API server returns it, with only the fields GPU detection reads."""
    status: dict[str, Any] = {}
    if capacity is not None:
        status["capacity"] = {"cpu": "96", "memory": "1056Gi", **capacity}
    if allocatable is not None:
        status["allocatable"] = {"cpu": "95", "memory": "1050Gi", **allocatable}
    base = {"kubernetes.io/os": "linux", "kubernetes.io/hostname": "gpu-0"}
    metadata = {"name": "gpu-0", "labels": {**base, **labels}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata, "status": status}


# The AMD GPU operator's node labeller: plain labels, one value per node.
OPERATOR_MI300X = {
    "amd.com/gpu.cu-count": "304",
    "amd.com/gpu.device-id": "74a1",
    "amd.com/gpu.driver-version": "6.10.5",
    "amd.com/gpu.family": "AI",
    "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM",
    "amd.com/gpu.vram": "192G",
    "feature.node.kubernetes.io/amd-gpu": "true",
}
# The older device-plugin labeller: count-encoded beta labels.
BETA_MI250X = {
    "beta.amd.com/gpu.cu-count.104": "8",
    "beta.amd.com/gpu.device-id.7408": "8",
    "beta.amd.com/gpu.family.AI": "8",
    "beta.amd.com/gpu.vram.64G": "8",
}


def mi(model, count, vram_gib, product_id):
    vram = None if vram_gib is None else vram_gib * GIB
    return GpuDevice("amd", model, count, "amd.com/gpu", vram, product_id)


@pytest.mark.parametrize(
    ("labels", "capacity", "allocatable", "expected"),
    [
        pytest.param(OPERATOR_MI300X, {"amd.com/gpu": "8"}, None, [mi("MI300X", 8, 192, "74a1")], id="operator-labels"),
        # the vram label wins over the static table (MI250X is 128G there); counts come from the labels
        pytest.param(BETA_MI250X, None, None, [mi("MI250X", 8, 64, "7408")], id="beta-count-encoded"),
        pytest.param(
            {"amd.com/gpu.device-id": "0x74A5"},
            {"amd.com/gpu": "8"},
            {"amd.com/gpu": "6"},
            [mi("MI325X", 6, 256, "74a5")],
            id="0x-upper-id-static-vram-allocatable-count",
        ),
        pytest.param(
            {"amd.com/gpu.device-id": "7fff", "amd.com/gpu.vram": "48G"},
            None,
            None,
            [mi("AMD-7FFF", 1, 48, "7fff")],
            id="unknown-id-one-device-without-resource",
        ),
        pytest.param(
            {"amd.com/gpu.device-id": "7fff"}, None, None, [mi("AMD-7FFF", 1, None, "7fff")], id="unknown-no-vram"
        ),
        pytest.param(
            {"amd.com/gpu.device-id": "74a5", "beta.amd.com/gpu.device-id": "74a1", "amd.com/gpu.device-id.740f": "4"},
            None,
            None,
            [mi("MI325X", 1, 256, "74a5")],
            id="plain-label-beats-beta-and-count-encoded",
        ),
        pytest.param(
            {"beta.amd.com/gpu.device-id": "740c", "amd.com/gpu.family": "MI300X"},
            None,
            None,
            [mi("MI250X", 1, 128, "740c")],
            id="any-device-id-beats-family",
        ),
        pytest.param(
            {"amd.com/gpu.family": "Instinct MI300X"}, None, None, [mi("MI300X", 1, 192, None)], id="family-names-model"
        ),
        pytest.param({"amd.com/gpu.family": "ai"}, None, None, [mi("AI", 1, None, None)], id="family-driver-name-kept"),
        pytest.param(
            {"beta.amd.com/gpu.family.AI": "4"}, None, None, [mi("AI", 4, None, None)], id="count-encoded-family"
        ),
        pytest.param(
            {"amd.com/gpu.device-id.74a1": "0", "amd.com/gpu.device-id.74a5": "", "amd.com/gpu.family.AI": "2"},
            None,
            None,
            [mi("AI", 2, None, None)],
            id="zero-and-empty-counts-ignored",
        ),
        pytest.param(
            {"amd.com/gpu.device-id.74a5": "4", "amd.com/gpu.device-id.740f": "2", "amd.com/gpu.vram": "256G"},
            {"amd.com/gpu": "6"},
            None,
            # two models on one node: each keeps its own count; a node-wide vram label is ambiguous
            [mi("MI210", 2, 64, "740f"), mi("MI325X", 4, 256, "74a5")],
            id="two-models-one-node",
        ),
        pytest.param(
            {"amd.com/gpu.device-id": "74a1", "amd.com/gpu.vram": "1T"},
            None,
            None,
            [mi("MI300X", 1, 1024, "74a1")],
            id="tib",
        ),
        pytest.param(
            {"amd.com/gpu.device-id": "74a1", "amd.com/gpu.vram": "lots"},
            None,
            None,
            [mi("MI300X", 1, 192, "74a1")],
            id="bad-vram-falls-back-to-table",
        ),
    ],
)
def test_detect(labels, capacity, allocatable, expected):
    assert amd.detect(node(labels, capacity, allocatable)) == expected


@pytest.mark.parametrize(
    "labels",
    [
        pytest.param({}, id="cpu-node"),
        pytest.param(
            {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}, id="nvidia-node"
        ),
        pytest.param({"amd.com/gpu.device-id": "  ", "amd.com/gpu.family.AI": "0"}, id="blank-values"),
        pytest.param({"amd.com/gpu.vram": "192G", "amd.com/gpu.driver-version": "6.10.5"}, id="no-model-labels"),
    ],
)
def test_detect_finds_nothing(labels):
    assert amd.detect(node(labels, {"amd.com/gpu": "8"})) == []


def test_labels_alone_count_even_without_the_resource():
    node_without_status = {"metadata": {"name": "n", "labels": {"amd.com/gpu.device-id": "74a1"}}}
    assert [d.model for d in amd.detect(node_without_status)] == ["MI300X"]


def test_a_bare_vram_number_is_bytes_as_upstream_code_reads_it():
    # The admin doc's example is MiB (196608); upstream code, and we, read it as bytes.
    [device] = amd.detect(node({"amd.com/gpu.device-id": "74a1", "amd.com/gpu.vram": "196608"}))
    assert device.vram_bytes == 196608


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("192G", 192 * GIB),
        ("64Gi", 64 * GIB),
        ("1T", 1024 * GIB),
        ("1.5t", 1536 * GIB),
        ("1024", 1024),
        ("", None),
        ("192GB", None),
        ("G", None),
    ],
)
def test_parse_vram(text, expected):
    assert parse_vram(text) == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("MI300X", "MI300X"),
        ("mi300x", "MI300X"),
        ("  AMD Instinct MI300X ", "MI300X"),
        ("AMD_Instinct_MI300X_OAM", "MI300X"),
        ("amd-instinct-mi325x", "MI325X"),
        ("MI 250X", "MI250X"),
        ("Radeon RX 7900 XTX", "RX7900"),
        ("AMD Radeon PRO W7900", "W7900"),
        ("v620", "V620"),
        ("AMD-7fff", "AMD-7FFF"),
        ("amd-74a1", "MI300X"),  # a known device ID written as an unknown one
        ("H100", None),
        ("V100", None),  # NVIDIA's, though AMD sells V620
        ("NVIDIA-A100-SXM4-80GB", None),
        ("", None),
        ("gpu", None),
    ],
)
def test_normalize_model(written, expected):
    assert amd.normalize_model(written) == expected


def test_preference_is_upstreams_order_and_nothing_else():
    # 2.11: MI325X > MI300X > MI250X > MI210, every other model last (newer parts too).
    assert list(amd.preference()) == ["MI325X", "MI300X", "MI250X", "MI210"]


def inventory(*nodes):
    return [d for n in nodes for d in amd.detect(node(n))]


CLUSTER = inventory(
    OPERATOR_MI300X,
    {"amd.com/gpu.device-id": "740f"},  # MI210, 64G static
    {"amd.com/gpu.device-id": "7fff", "amd.com/gpu.vram": "96G"},
)


def device_id_in(*ids):
    return [{"key": "amd.com/gpu.device-id", "operator": "In", "values": list(ids)}]


@pytest.mark.parametrize(
    ("model", "min_vram", "expected"),
    [
        pytest.param("MI300X", None, device_id_in("74a1", "74a9", "74b5", "74bd"), id="model-all-ids-sorted"),
        pytest.param("amd instinct mi325x", None, device_id_in("74a5", "74b9"), id="model-absent-still-pins"),
        pytest.param("AMD-7FFF", None, device_id_in("7fff"), id="unknown-model-own-id"),
        pytest.param("MI300X", 1, device_id_in("74a1", "74a9", "74b5", "74bd"), id="model-wins-over-vram"),
        pytest.param(None, 96 * GIB, device_id_in("74a1", "74a9", "74b5", "74bd", "7fff"), id="vram-present-models"),
        pytest.param(None, 193 * GIB, None, id="vram-too-much"),
        pytest.param(None, None, None, id="neither"),
        pytest.param("  ", None, None, id="blank-model"),
        pytest.param("H100", None, None, id="not-amd-no-ids"),
    ],
)
def test_node_affinity_terms(model, min_vram, expected):
    assert amd.node_affinity_terms(model, min_vram, CLUSTER) == expected


def test_node_affinity_ignores_other_vendors_devices():
    foreign = [GpuDevice("nvidia", "H100", 8, "nvidia.com/gpu", 80 * GIB, "NVIDIA-H100-80GB-HBM3")]
    assert amd.node_affinity_terms(None, 1, foreign) is None


@pytest.mark.parametrize(
    ("key", "watched"),
    [
        ("amd.com/gpu.device-id", True),
        ("beta.amd.com/gpu.device-id.74a1", True),
        ("amd.com/gpu", True),
        ("nvidia.com/gpu.product", False),
        ("feature.node.kubernetes.io/amd-gpu", False),
        ("kubernetes.io/hostname", False),
    ],
)
def test_watches_node_key(key, watched):
    assert amd.watches_node_key(key) is watched


def test_the_plugin_manager_offers_the_amd_vendor_through_the_hook():
    pm = get_plugin_manager(only=("gpu_amd",), disabled=())
    vendors = providers(pm, "aim_gpu_vendors")
    assert list(vendors) == ["amd"]
    assert isinstance(vendors["amd"], GpuVendor)
    assert [d.model for d in vendors["amd"].detect(node(OPERATOR_MI300X))] == ["MI300X"]
