"""The core GPU inventory over the installed AMD and NVIDIA vendors and over throwaway ones."""

from collections.abc import Mapping
from typing import Any

import pytest

from aim_core import GpuDevice
from aim_core.plugin.manager import get_plugin_manager, providers
from aim_core.reconcile.gpu import GpuInventory, node_gpu_facts

GIB = 1024**3


@pytest.fixture(scope="module")
def vendors():
    pm = get_plugin_manager(only=("gpu_amd", "gpu_nvidia"), disabled=())
    return list(providers(pm, "aim_gpu_vendors").values())


def node(name: str, labels: Mapping[str, str] = (), capacity: Mapping[str, str] = ()) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **dict(labels)}},
        "status": {"capacity": {"cpu": "64", **dict(capacity)}, "allocatable": {"cpu": "63", **dict(capacity)}},
    }


def amd_node(name, device_id, gpus=8, **labels):
    return node(name, {"amd.com/gpu.device-id": device_id, **labels}, {"amd.com/gpu": str(gpus)})


def nvidia_node(name, product, memory_mib, gpus=8):
    labels = {
        "nvidia.com/gpu.product": product,
        "nvidia.com/gpu.memory": str(memory_mib),
        "nvidia.com/gpu.count": str(gpus),
    }
    return node(name, labels, {"nvidia.com/gpu": str(gpus)})


MIXED = [
    amd_node("mi300x-a", "74a1", **{"amd.com/gpu.vram": "192G"}),
    amd_node("mi300x-b", "74b5"),
    amd_node("mi210", "740f", gpus=4),
    nvidia_node("h100", "NVIDIA-H100-80GB-HBM3", 81559),
    nvidia_node("a100", "NVIDIA-A100-SXM4-40GB", 40960, gpus=4),
    node("cpu-only"),
]


@pytest.fixture
def mixed(vendors):
    return GpuInventory.from_nodes(MIXED, vendors)


def test_mixed_cluster_lists_models_counts_and_memory(mixed):
    assert mixed.has_gpus
    assert mixed.models == ("A100", "H100", "MI210", "MI300X")
    assert mixed.counts == {"A100": 4, "H100": 8, "MI210": 4, "MI300X": 16}
    assert mixed.vram == {"A100": 40 * GIB, "H100": 80 * GIB, "MI210": 64 * GIB, "MI300X": 192 * GIB}


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("MI300X", "MI300X"),
        ("mi300x", "MI300X"),
        ("AMD Instinct MI300X", "MI300X"),
        ("h100", "H100"),
        ("NVIDIA-H100-80GB-HBM3", "H100"),
        ("nvidia a100", "A100"),
        ("MI325X", None),
        ("B200", None),
        ("", None),
        ("anything", None),
    ],
)
def test_has_model_is_case_and_format_insensitive(mixed, written, canonical):
    assert mixed.canonical_model(written) == canonical
    assert mixed.has_model(written) is (canonical is not None)


def test_resource_name_follows_the_vendor(mixed):
    assert mixed.resource_name("mi210") == "amd.com/gpu"
    assert mixed.resource_name("H100") == "nvidia.com/gpu"
    assert mixed.resource_name("B200") is None


def test_empty_cluster(vendors):
    inventory = GpuInventory.from_nodes([node("cpu-a"), node("cpu-b")], vendors)
    assert not inventory.has_gpus
    assert inventory.models == ()
    assert not inventory.has_model("MI300X")
    assert inventory.models_with_vram_at_least(1) == ()
    assert inventory.node_affinity(min_vram=1) is None
    assert inventory.node_affinity() is None
    # A model still pins to its device IDs, present or not, as upstream does.
    assert _expressions(inventory.node_affinity("MI210")) == [[("amd.com/gpu.device-id", ["740f", "7410"])]]
    # NVIDIA can only pin to product labels it has seen.
    assert inventory.node_affinity("H100") is None


def test_unknown_device_ids_and_driver_families(vendors):
    nodes = [
        amd_node("new-part", "7FFF", **{"amd.com/gpu.vram": "96G"}),
        node("family-only", {"beta.amd.com/gpu.family.AI": "8"}),
    ]
    inventory = GpuInventory.from_nodes(nodes, vendors)
    assert inventory.models == ("AI", "AMD-7FFF")
    assert inventory.has_model("amd-7fff")
    assert inventory.has_model("ai")  # matched as written: it is what the node says
    assert inventory.vram == {"AI": None, "AMD-7FFF": 96 * GIB}
    assert inventory.models_with_vram_at_least(1) == ("AMD-7FFF",)
    assert _expressions(inventory.node_affinity("AMD-7FFF")) == [[("amd.com/gpu.device-id", ["7fff"])]]
    assert inventory.node_affinity("AI") is None  # no device ID to pin to
    assert inventory.preference_rank("AMD-7FFF") == len(inventory.preference_order())


@pytest.mark.parametrize(
    ("min_gib", "models", "terms"),
    [
        pytest.param(
            40,
            ("A100", "H100", "MI210", "MI300X"),
            [
                [("amd.com/gpu.device-id", ["740f", "7410", "74a1", "74a9", "74b5", "74bd"])],
                [("nvidia.com/gpu.product", ["NVIDIA-A100-SXM4-40GB", "NVIDIA-H100-80GB-HBM3"])],
            ],
            id="both-vendors-ored",
        ),
        pytest.param(
            80,
            ("H100", "MI300X"),
            [
                [("amd.com/gpu.device-id", ["74a1", "74a9", "74b5", "74bd"])],
                [("nvidia.com/gpu.product", ["NVIDIA-H100-80GB-HBM3"])],
            ],
            id="an-80GB-H100-counts-as-80Gi",
        ),
        pytest.param(100, ("MI300X",), [[("amd.com/gpu.device-id", ["74a1", "74a9", "74b5", "74bd"])]], id="amd-only"),
        pytest.param(193, (), None, id="nothing-big-enough"),
    ],
)
def test_vram_gating_and_affinity(mixed, min_gib, models, terms):
    assert mixed.models_with_vram_at_least(min_gib * GIB) == models
    assert _expressions(mixed.node_affinity(min_vram=min_gib * GIB)) == terms


def test_model_affinity_is_one_required_term(mixed):
    assert mixed.node_affinity("amd instinct mi300x") == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "amd.com/gpu.device-id", "operator": "In", "values": ["74a1", "74a9", "74b5", "74bd"]}
                    ]
                }
            ]
        }
    }
    assert _expressions(mixed.node_affinity("h100", min_vram=1)) == [
        [("nvidia.com/gpu.product", ["NVIDIA-H100-80GB-HBM3"])]
    ]


def test_preference_across_vendors(mixed, vendors):
    order = mixed.preference_order()
    assert order.index("MI325X") < order.index("MI300X") < order.index("MI250X") < order.index("MI210")
    assert order.index("MI210") < order.index("B200") < order.index("H100") < order.index("A100")
    rank = mixed.preference_rank
    assert rank("mi325x") < rank("AMD Instinct MI300X") < rank("MI210") < rank("nvidia h100") < rank("A100")
    last = len(order)
    assert rank("MI308X") == rank("RTX4090") == rank("no such gpu") == rank(None) == rank("") == last
    # The order comes from vendor names, not from plugin registration order.
    assert GpuInventory.from_nodes(MIXED, list(reversed(vendors))) == mixed


def test_default_amd_preference_is_upstreams_and_newer_models_tie_last(mixed):
    rank = mixed.preference_rank
    assert rank("MI325X") < rank("MI300X") < rank("MI250X") < rank("MI210")
    assert rank("MI355X") == rank("MI350X") == rank("MI308X") == len(mixed.preference_order())


def test_an_operator_preference_replaces_the_vendors_order(vendors):
    inventory = GpuInventory.from_nodes(
        MIXED, vendors, preference=("mi355x", "AMD Instinct MI350X", "MI325X", "MI300X", "h100", "tpu")
    )
    assert inventory.preference_order() == ("MI355X", "MI350X", "MI325X", "MI300X", "H100", "TPU")
    rank = inventory.preference_rank
    assert rank("MI355X") < rank("MI350X") < rank("MI325X") < rank("mi300x") < rank("nvidia h100")
    # What the operator left out ranks last, all equal, like upstream's "others".
    assert rank("MI250X") == rank("MI210") == rank("A100") == len(inventory.preference_order())
    assert inventory.unknown_preferences() == ("tpu",)


def test_watches_node_key(mixed):
    assert mixed.watches_node_key("amd.com/gpu.device-id")
    assert mixed.watches_node_key("beta.amd.com/gpu.family.AI")
    assert mixed.watches_node_key("nvidia.com/gpu.product")
    assert not mixed.watches_node_key("kubernetes.io/hostname")
    assert not GpuInventory().watches_node_key("amd.com/gpu")


def test_node_gpu_facts_change_only_with_gpu_labels_and_resources(vendors):
    before = amd_node("n", "74a1")
    facts = node_gpu_facts(before, vendors)
    assert facts == {
        "label:amd.com/gpu.device-id": "74a1",
        "capacity:amd.com/gpu": "8",
        "allocatable:amd.com/gpu": "8",
    }
    relabelled = amd_node("n", "74a1", **{"team": "ml"})
    assert node_gpu_facts(relabelled, vendors) == facts
    assert node_gpu_facts(amd_node("n", "74a5"), vendors) != facts
    assert node_gpu_facts(amd_node("n", "74a1", gpus=4), vendors) != facts


class FakeVendor:
    """A vendor that reads ``<name>.example/gpu=<model>`` and claims the models of its list."""

    def __init__(self, name: str, models: tuple[str, ...]):
        self.name = name
        self.models = models

    def detect(self, node):
        model = (node["metadata"].get("labels") or {}).get(f"{self.name}.example/gpu")
        return [GpuDevice(self.name, model, 1, f"{self.name}.example/gpu", None, model)] if model else []

    def normalize_model(self, model):
        return model.strip().upper() if model.strip().upper() in self.models else None

    def preference(self):
        return self.models

    def node_affinity_terms(self, model, min_vram_bytes, inventory):
        # Like AMD's device-ID table: a model it knows pins even when no node has it.
        return [{"key": f"{self.name}.example/gpu", "operator": "In", "values": [model]}] if model else None

    def watches_node_key(self, key):
        return key.startswith(f"{self.name}.example/")


def test_a_model_two_vendors_claim_goes_to_the_one_that_has_it():
    alpha, zeta = FakeVendor("alpha", ("X1", "A2")), FakeVendor("zeta", ("Z9", "X1"))
    inventory = GpuInventory.from_nodes([node("z", {"zeta.example/gpu": "X1"})], [zeta, alpha])
    assert [v.name for v in inventory.vendors] == ["alpha", "zeta"]
    assert inventory.preference_order() == ("X1", "A2", "Z9")
    assert inventory.has_model("x1")
    assert _expressions(inventory.node_affinity("x1")) == [[("zeta.example/gpu", ["X1"])]]


def _expressions(affinity):
    """``[[(key, values), ...] per nodeSelectorTerm]`` of a NodeAffinity, checking the operator is In."""
    if affinity is None:
        return None
    terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all(e["operator"] == "In" for t in terms for e in t["matchExpressions"])
    return [[(e["key"], e["values"]) for e in t["matchExpressions"]] for t in terms]
