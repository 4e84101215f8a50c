"""The Acme GPU example, installed and loaded through its entry point, gates and pins templates in the core's planner."""

from __future__ import annotations

from aim_core.plugin.manager import describe_plugins, get_plugin_manager, providers
from aim_core.reconcile.health import State
from aim_core.reconcile.status import derive
from aim_core.template.plan import plan_template
from tests.template.builders import NOW, amd_node, make_template, observed

GiB = 1024**3


def root(plan):
    """The template's status.status and Ready reason, as the engine would derive them from the plan."""
    derived = derive(plan.components, [(i.category, i.reason, i.message) for i in plan.issues], now=NOW)
    return derived.status, next(c for c in derived.conditions if c.type == "Ready").reason


def acme_node(name="acme-1", product="x9", count=4, **labels):
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"acme.example/accel.model": product, **labels}},
        "status": {"allocatable": {"acme.example/accel": str(count)}, "capacity": {"acme.example/accel": str(count)}},
    }


def test_the_installed_plugin_is_found_through_its_entry_point(example_plugins):
    pm = get_plugin_manager()
    rows = {row["name"]: row for row in describe_plugins(pm)}

    assert rows["gpu_acme"]["distribution"] == "aim-engine-example-gpu-acme"
    assert rows["gpu_acme"]["version"] == "0.1.0"
    assert rows["gpu_acme"]["hooks"] == ["aim_gpu_vendors"]
    assert "acme" in providers(pm, "aim_gpu_vendors")  # beside amd and nvidia: the protocol is met


def test_without_the_plugin_installed_the_core_knows_no_acme():
    assert "acme" not in providers(get_plugin_manager(), "aim_gpu_vendors")


def test_a_template_for_an_acme_gpu_is_ready_on_an_acme_node_and_pinned_to_it(example_plugins):
    vendors = tuple(providers(get_plugin_manager(), "aim_gpu_vendors").values())
    template = make_template().with_gpu(model="Acme X9", requests=2).inline()

    plan = plan_template(template, observed(template, nodes=[acme_node(), amd_node()], vendors=vendors))

    assert root(plan) == (State.READY, "AllComponentsReady")
    assert plan.status["resolvedHardware"]["gpu"]["resourceName"] == "acme.example/accel"  # not amd.com/gpu
    terms = plan.status["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "acme.example/accel.model", "operator": "In", "values": ["x9"]}]}]


def test_too_few_accelerators_or_none_of_the_model_is_not_available(example_plugins):
    vendors = tuple(providers(get_plugin_manager(), "aim_gpu_vendors").values())
    eight = make_template().with_gpu(model="X9", requests=8).inline()
    x7 = make_template().with_gpu(model="x7", requests=1).inline()

    assert root(plan_template(eight, observed(eight, nodes=[acme_node(count=4)], vendors=vendors))) == (
        State.NOT_AVAILABLE,
        "GPUNotAvailable",
    )
    assert root(plan_template(x7, observed(x7, nodes=[acme_node()], vendors=vendors))) == (
        State.NOT_AVAILABLE,
        "GPUNotAvailable",
    )


def test_minimum_memory_selects_acme_models_with_enough_of_it(example_plugins):
    vendors = tuple(providers(get_plugin_manager(), "aim_gpu_vendors").values())
    template = make_template().with_gpu(model=None, requests=1, minVram="80Gi").inline()
    nodes = [acme_node("big", "x9"), acme_node("small", "x5")]

    plan = plan_template(template, observed(template, nodes=nodes, vendors=vendors))

    assert root(plan)[0] == State.READY
    terms = plan.status["resolvedNodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["x9"]  # 96 GiB; the 32 GiB X5 is left out


def test_the_vendor_reads_labels_as_documented(example_plugins):
    from aim_example_gpu_acme.vendor import AcmeGpuVendor

    vendor = AcmeGpuVendor()
    labelled = acme_node(product="x7", count=0)
    labelled["status"] = {}
    labelled["metadata"]["labels"].update({"acme.example/accel.count": "2", "acme.example/accel.vram": "80G"})

    (device,) = vendor.detect(labelled)
    assert (device.model, device.count, device.vram_bytes, device.product_id) == ("X7", 2, 80 * GiB, "x7")
    assert vendor.detect(amd_node()) == []
    assert [vendor.normalize_model(m) for m in ("x9", "ACME-X9", "acme x7", "MI300X", "H100")] == [
        "X9",
        "X9",
        "X7",
        None,
        None,
    ]
    assert vendor.watches_node_key("acme.example/accel.model") and not vendor.watches_node_key("amd.com/gpu")
    assert list(vendor.preference()) == ["X9", "X7", "X5"]
