"""GPU node findings (pure) over the installed vendors, a third-party vendor included."""

from __future__ import annotations

from aim_core.doctor.gpus import gpu_findings
from aim_core.plugin.manager import get_plugin_manager, providers
from tests.service.builders import amd_node, cpu_node
from tests.template.acme import AcmeVendor, acme_node


def shipped_vendors():
    return list(providers(get_plugin_manager(only=["gpu_amd", "gpu_nvidia"], disabled=()), "aim_gpu_vendors").values())


def test_a_third_party_vendor_is_counted_like_the_shipped_ones():
    findings = gpu_findings(
        [amd_node("a1"), amd_node("a2", gpus=4), acme_node("x9", 4), cpu_node()], [*shipped_vendors(), AcmeVendor()]
    )
    messages = [f.message for f in findings]
    assert [f.level for f in findings] == ["ok", "ok"]
    assert any(m.startswith("acme GPUs: ") and "4 GPUs on 1 node" in m for m in messages), messages
    assert "amd GPUs: MI300X: 12 GPUs on 2 nodes" in messages


def test_a_node_with_the_resource_but_no_labels_is_named_with_its_vendor():
    bare = {"metadata": {"name": "acme-2", "labels": {}}, "status": {"allocatable": {"acme.example/accel": "8"}}}
    [ok, warn] = gpu_findings([acme_node(), bare], [AcmeVendor()])
    assert ok.level == "ok" and warn.level == "warn"
    assert "acme-2 (acme.example/accel: 8)" in warn.message and warn.fix


def test_no_vendor_plugin_fails_and_no_gpus_warns():
    [none] = gpu_findings([amd_node("a1")], [])
    assert none.level == "fail" and "no GPU vendor plugin is installed" in none.message
    [empty] = gpu_findings([cpu_node()], [AcmeVendor()])
    assert empty.level == "warn" and "(acme) recognise" in empty.message
