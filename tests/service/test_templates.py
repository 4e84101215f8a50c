"""Template resolution for AIMService (F43-F45, F54, F56, F57, Q3-Q5): choices, reasons, messages, derived copies."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from aim_core import GpuDevice
from aim_core.plugin.manager import get_plugin_manager, providers
from aim_core.reconcile.gpu import GpuInventory
from aim_core.reconcile.health import Category, State
from aim_core.reconcile.naming import derived_template_name
from aim_core.reconcile.plan import Plan
from aim_core.reconcile.resources import TEMPLATES
from aim_core.service.overrides import Overrides, derived_template, with_overrides
from aim_core.service.selection import (
    Filter,
    Verdict,
    choose_template,
    resolve_explicit,
    select_template,
)
from aim_core.service.templates import (
    Scope,
    ScopedTemplate,
    resolved_reference,
    sticky,
    template_health,
)

NS = "ml-team"

# ---------------------------------------------------------------- builders


class TemplateBuilder(dict):
    """A template as read from the API; every method returns the builder."""

    def status(self, state: str, message: str = "") -> TemplateBuilder:
        self.setdefault("status", {})["status"] = state
        if message:
            self["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "X", "message": message}]
        return self

    def ready(self) -> TemplateBuilder:
        return self.status("Ready")

    def profile(self, **metadata: Any) -> TemplateBuilder:
        self.setdefault("status", {}).setdefault("profile", {}).setdefault("metadata", {}).update(metadata)
        return self

    def optimized(self) -> TemplateBuilder:
        return self.profile(type="optimized")

    def preview(self) -> TemplateBuilder:
        return self.profile(type="preview")

    def unoptimized(self) -> TemplateBuilder:
        return self.profile(type="unoptimized")

    def gpu(self, model: str | None, count: int | None = 1) -> TemplateBuilder:
        gpu = {k: v for k, v in (("model", model), ("requests", count)) if v is not None}
        self["spec"]["hardware"] = {"gpu": gpu}
        return self

    def metric(self, value: str) -> TemplateBuilder:
        self["spec"]["metric"] = value
        return self

    def precision(self, value: str) -> TemplateBuilder:
        self["spec"]["precision"] = value
        return self

    def with_spec(self, **fields: Any) -> TemplateBuilder:
        self["spec"].update(fields)
        return self

    def derived(self) -> TemplateBuilder:
        self["metadata"].setdefault("labels", {})["aim.eai.amd.com/origin"] = "derived"
        return self


def template(name: str, model: str = "m", *, cluster: bool = False) -> TemplateBuilder:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
    if not cluster:
        meta["namespace"] = NS
    kind = "AIMClusterServiceTemplate" if cluster else "AIMServiceTemplate"
    return TemplateBuilder(apiVersion="aim.eai.amd.com/v1alpha1", kind=kind, metadata=meta, spec={"modelName": model})


def good(name: str, gpu: str = "MI300X", *, cluster: bool = False) -> TemplateBuilder:
    """A Ready, optimized, MI300X×1, latency, fp16 template: the baseline rows vary one thing of."""
    return template(name, cluster=cluster).ready().optimized().gpu(gpu, 1).metric("latency").precision("fp16")


class ServiceBuilder(dict):
    def named(self, template_name: str) -> ServiceBuilder:
        self["spec"].setdefault("template", {})["name"] = template_name
        return self

    def allow_unoptimized(self) -> ServiceBuilder:
        self["spec"].setdefault("template", {})["allowUnoptimized"] = True
        return self

    def overrides(self, **fields: Any) -> ServiceBuilder:
        self["spec"]["overrides"] = fields
        return self

    def with_spec(self, **fields: Any) -> ServiceBuilder:
        self["spec"].update(fields)
        return self

    def resolved(self, ref: dict[str, Any]) -> ServiceBuilder:
        self["status"] = {"resolvedTemplate": ref}
        return self


def service(name: str = "svc") -> ServiceBuilder:
    return ServiceBuilder(
        apiVersion="aim.eai.amd.com/v1alpha1",
        kind="AIMService",
        metadata={"name": name, "namespace": NS, "uid": "svc-uid"},
        spec={"model": {"name": "m"}},
    )


def gpu_override(model: str | None = None, count: int | None = None) -> dict[str, Any]:
    return {"gpu": {k: v for k, v in (("model", model), ("requests", count)) if v is not None}}


# ---------------------------------------------------------------- cluster GPUs from the real vendors

AMD_IDS = {
    "MI355X": "75a3",
    "MI325X": "74a5",
    "MI300X": "74a1",
    "MI250X": "7408",
    "MI210": "740f",
    "MI308X": "74a2",
    "MI100": "738c",
}
NVIDIA_PRODUCTS = {
    "B200": "NVIDIA-B200",
    "H100": "NVIDIA-H100-80GB-HBM3",
    "A100": "NVIDIA-A100-SXM4-40GB",
    "L4": "NVIDIA-L4",
}


@functools.cache
def vendors() -> tuple[Any, ...]:
    pm = get_plugin_manager(only=("gpu_amd", "gpu_nvidia"), disabled=())
    return tuple(providers(pm, "aim_gpu_vendors").values())


def node(model: str) -> dict[str, Any]:
    if model in AMD_IDS:
        labels, capacity = {"amd.com/gpu.device-id": AMD_IDS[model]}, {"amd.com/gpu": "8"}
    else:
        labels = {"nvidia.com/gpu.product": NVIDIA_PRODUCTS[model], "nvidia.com/gpu.count": "8"}
        capacity = {"nvidia.com/gpu": "8"}
    return {
        "metadata": {"name": f"node-{model.lower()}", "labels": labels},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def gpus(*models: str) -> GpuInventory:
    return GpuInventory.from_nodes([node(m) for m in models], vendors())


def select(
    *templates: dict[str, Any],
    cluster_gpus: tuple[str, ...] = ("MI300X",),
    allow_unoptimized: bool = False,
    overrides: dict[str, Any] | None = None,
    model: str = "m",
):
    namespaced = [t for t in templates if t["kind"] == "AIMServiceTemplate"]
    cluster = [t for t in templates if t["kind"] == "AIMClusterServiceTemplate"]
    return select_template(
        model,
        namespaced,
        cluster,
        gpus(*cluster_gpus),
        allow_unoptimized=allow_unoptimized,
        overrides=overrides,
        namespace=NS,
    )


def by_name(*templates: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["metadata"]["name"]: t for t in templates}


def fates(selection) -> dict[str, tuple[Verdict, Filter | None]]:
    return {c.name: (c.verdict, c.filter) for c in selection.candidates}


def test_the_real_vendors_are_installed():
    assert {v.name for v in vendors()} == {"amd", "nvidia"}


# ---------------------------------------------------------------- auto-selection: filters (F44 steps 0-5)


@pytest.mark.parametrize(
    ("row", "templates", "kwargs", "chosen", "rejected"),
    [
        (
            "not Ready",
            [good("a"), good("b").status("Progressing")],
            {},
            "a",
            {"b": (Filter.READY, "not Ready (Progressing)")},
        ),
        (
            "NotAvailable is not Ready",
            [good("a"), good("b").status("NotAvailable")],
            {},
            "a",
            {"b": (Filter.READY, "not Ready (NotAvailable)")},
        ),
        (
            "no status yet",
            [good("a"), template("b").gpu("MI300X")],
            {},
            "a",
            {"b": (Filter.READY, "not Ready (Pending)")},
        ),
        (
            "unoptimized",
            [good("a"), good("b").unoptimized()],
            {},
            "a",
            {"b": (Filter.OPTIMIZATION, "profile type unoptimized")},
        ),
        (
            "preview does not pass either",
            [good("a"), good("b").preview()],
            {},
            "a",
            {"b": (Filter.OPTIMIZATION, "profile type preview")},
        ),
        (
            "no profile counts as unoptimized",
            [good("a"), template("b").ready().gpu("MI300X")],
            {},
            "a",
            {"b": (Filter.OPTIMIZATION, "profile type unoptimized")},
        ),
        (
            "metric override",
            [good("a"), good("b").metric("throughput")],
            {"overrides": {"metric": "latency"}},
            "a",
            {"b": (Filter.OVERRIDES, "metric throughput (overrides ask latency)")},
        ),
        (
            "profile metric beats spec metric",
            [good("a").metric("throughput").profile(metric="latency"), good("b").profile(metric="throughput")],
            {"overrides": {"metric": "latency"}},
            "a",
            {"b": (Filter.OVERRIDES, "metric throughput")},
        ),
        (
            "metric compares case-insensitively",
            [good("a").metric("Latency")],
            {"overrides": {"metric": "LATENCY"}},
            "a",
            {},
        ),
        (
            "unknown metric differs",
            [good("a"), good("b").with_spec(metric=None)],
            {"overrides": {"metric": "latency"}},
            "a",
            {"b": (Filter.OVERRIDES, "metric unset (overrides ask latency)")},
        ),
        (
            "precision override",
            [good("a").precision("fp8"), good("b")],
            {"overrides": {"precision": "fp8"}},
            "a",
            {"b": (Filter.OVERRIDES, "precision fp16 (overrides ask fp8)")},
        ),
        (
            "GPU model override",
            [good("a"), good("b", "MI210")],
            {"overrides": {"hardware": gpu_override("mi300x")}, "cluster_gpus": ("MI300X", "MI210")},
            "a",
            {"b": (Filter.OVERRIDES, "GPU MI210 (overrides ask mi300x)")},
        ),
        (
            "GPU count override",
            [good("a").gpu("MI300X", 4), good("b")],
            {"overrides": {"hardware": gpu_override(count=4)}},
            "a",
            {"b": (Filter.OVERRIDES, "1 GPUs (overrides ask 4)")},
        ),
        (
            "unknown GPU count passes a count override",
            [good("a").gpu("MI300X", None)],
            {"overrides": {"hardware": gpu_override(count=4)}},
            "a",
            {},
        ),
        (
            "GPU absent from the cluster",
            [good("a"), good("b", "MI325X")],
            {},
            "a",
            {"b": (Filter.GPU, "GPU MI325X is not in the cluster")},
        ),
        (
            "profile GPU when the spec names none",
            [good("a"), good("b").gpu(None).profile(gpu="MI325X")],
            {},
            "a",
            {"b": (Filter.GPU, "GPU MI325X is not in the cluster")},
        ),
        ("GPU names are case-insensitive", [good("a", "mi300x")], {}, "a", {}),
        ("templates without a GPU model pass", [good("a").gpu(None, 1)], {"cluster_gpus": ()}, "a", {}),
        (
            "derived templates are never auto-selected",
            [good("a"), good("b").derived()],
            {},
            "a",
            {"b": (Filter.DERIVED, "derived by a service")},
        ),
        (
            "namespaced beats a better cluster template",
            [good("a", "MI210"), good("c", "MI325X", cluster=True)],
            {"cluster_gpus": ("MI325X", "MI210")},
            "a",
            {"c": (Filter.SCOPE, "a namespaced one is usable")},
        ),
        (
            "allowUnoptimized lets unoptimized and preview through",
            [good("a").unoptimized(), good("b").preview().metric("throughput")],
            {"allow_unoptimized": True},
            "b",
            {},
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_each_filter_drops_what_it_should_and_says_why(row, templates, kwargs, chosen, rejected):
    result = select(*templates, **kwargs)
    assert result.chosen is not None and result.chosen.name == chosen, result.explain()
    assert result.health.reason == "Resolved" and result.health.ready
    assert {c.name for c in result.candidates if c.verdict is Verdict.REJECTED} == set(rejected)
    for name, (flt, fragment) in rejected.items():
        candidate = next(c for c in result.candidates if c.name == name)
        assert (candidate.verdict, candidate.filter) == (Verdict.REJECTED, flt)
        assert fragment in candidate.why


def test_templates_of_other_models_are_not_candidates():
    result = select(good("a"), good("other", cluster=True).with_spec(modelName="another-model"))
    assert [c.name for c in result.candidates] == ["a"]


def test_a_cluster_template_is_chosen_when_no_namespaced_one_is_usable():
    result = select(good("a").status("Failed"), good("c", cluster=True))
    assert (result.chosen.name, result.scope) == ("c", Scope.CLUSTER)
    assert result.chosen.reference() == {
        "kind": "AIMClusterServiceTemplate",
        "name": "c",
        "scope": "Cluster",
        "uid": "uid-c",
    }


# ---------------------------------------------------------------- auto-selection: ranking (spec 2.11)


def pair(better: dict[str, Any], worse: dict[str, Any], **kwargs: Any):
    """Select between ``better`` and ``worse`` in both input orders; return the selection."""
    for first, second in ((better, worse), (worse, better)):
        result = select(first, second, **kwargs)
        assert result.chosen is not None and result.chosen.name == better["metadata"]["name"], result.explain()
    return result


def test_profile_type_ranks_optimized_then_preview_then_unoptimized():
    both = {"allow_unoptimized": True}
    result = pair(good("opt"), good("pre").preview(), **both)
    assert "profile type: optimized before preview" in fates_why(result, "pre")
    pair(good("pre").preview(), good("unopt").unoptimized(), **both)
    pair(good("unopt").unoptimized(), good("nothing").profile(type="custom"), **both)


def fates_why(selection, name: str) -> str:
    return next(c.why for c in selection.candidates if c.name == name)


@pytest.mark.parametrize(("better", "worse"), [("MI325X", "MI300X"), ("MI300X", "MI250X"), ("MI250X", "MI210")])
def test_gpu_ranks_by_the_amd_vendors_preference(better, worse):
    result = pair(good("b", better), good("w", worse), cluster_gpus=(better, worse))
    assert fates_why(result, "w") == f"outranked by b on GPU: {better} before {worse}"


@pytest.mark.parametrize(("better", "worse"), [("B200", "H100"), ("H100", "A100"), ("A100", "L4")])
def test_gpu_ranks_nvidia_models_by_the_nvidia_vendors_preference(better, worse):
    result = pair(good("b", better), good("w", worse), cluster_gpus=(better, worse))
    assert fates_why(result, "w") == f"outranked by b on GPU: {better} before {worse}"


def test_a_known_gpu_ranks_before_a_template_without_gpu_model():
    result = pair(good("b", "MI210"), good("w").gpu(None, 1), cluster_gpus=("MI210",))
    assert "GPU: MI210 before no GPU model" in fates_why(result, "w")


def test_gpu_ranking_asks_the_inventory_not_a_built_in_list():
    class Acme:
        name = "acme"

        def detect(self, node):
            model = node["metadata"]["labels"].get("acme.example/gpu")
            return [GpuDevice("acme", model, 1, "acme.example/gpu")] if model else []

        def normalize_model(self, model):
            return model.strip().upper() if model.strip().upper() in ("Z9", "Z1") else None

        def preference(self):
            return ("Z9", "Z1")

        def node_affinity_terms(self, model, min_vram_bytes, inventory):
            return None

        def watches_node_key(self, key):
            return key.startswith("acme.example/")

    nodes = [{"metadata": {"name": n, "labels": {"acme.example/gpu": n}}} for n in ("Z1", "Z9")]
    inventory = GpuInventory.from_nodes(nodes, [Acme()])
    result = select_template("m", [good("z1", "Z1"), good("z9", "z9")], [], inventory)
    assert result.chosen.name == "z9"


def test_metric_ranks_latency_before_throughput():
    result = pair(good("lat"), good("thr").metric("throughput"))
    assert fates_why(result, "thr") == "outranked by lat on metric: latency before throughput"


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("fp4", "int4"),
        ("int4", "fp8"),
        ("fp8", "int8"),
        ("int8", "fp16"),
        ("fp16", "bf16"),
        ("bf16", "fp32"),
        ("fp32", "auto"),
    ],
)
def test_precision_ranks_fp4_int4_fp8_int8_fp16_bf16_fp32_then_the_rest(better, worse):
    result = pair(good("b").precision(better), good("w").precision(worse))
    assert fates_why(result, "w") == f"outranked by b on precision: {better} before {worse}"


@pytest.mark.parametrize(
    ("row", "better", "worse"),
    [
        ("profile type before GPU", good("b", "MI210"), good("w", "MI325X").preview()),
        ("GPU before metric", good("b").metric("throughput"), good("w", "MI210")),
        ("metric before precision", good("b").precision("fp32"), good("w").metric("throughput").precision("fp4")),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_keys_compare_lexicographically(row, better, worse):
    pair(better, worse, cluster_gpus=("MI325X", "MI300X", "MI210"), allow_unoptimized=True)


def test_profile_values_rank_before_spec_values():
    result = pair(
        good("b").metric("throughput").profile(metric="latency", precision="fp8"), good("w").profile(precision="fp16")
    )
    assert fates_why(result, "w") == "outranked by b on precision: fp8 before fp16"


# ---------------------------------------------------------------- auto-selection: outcomes (Q4)


def test_a_tie_on_every_key_selects_nothing_and_says_so():
    result = select(good("a"), good("b"), good("c").precision("bf16"))
    assert result.chosen is None
    assert fates(result) == {"a": (Verdict.TIED, None), "b": (Verdict.TIED, None), "c": (Verdict.OUTRANKED, None)}
    assert (result.health.state, result.health.reason) == (State.PENDING, "TemplateSelectionAmbiguous")
    assert result.health.category is None and result.health.upstream
    assert result.health.message == (
        "2 templates for model 'm' rank equally (optimized, MI300X, latency, fp16): a, b; "
        "set spec.template.name to choose one, or remove the duplicates"
    )


def test_unranked_gpus_tie_like_upstream_others():
    result = select(good("a", "MI308X"), good("b", "MI100"), cluster_gpus=("MI308X", "MI100"))
    assert result.health.reason == "TemplateSelectionAmbiguous"
    assert "(optimized, MI308X, latency, fp16)" in result.health.message


def test_tied_cluster_templates_are_ambiguous_too():
    assert select(good("a", cluster=True), good("b", cluster=True)).health.reason == "TemplateSelectionAmbiguous"


@pytest.mark.parametrize(
    ("row", "templates", "kwargs", "state", "reason", "message"),
    [
        (
            "no template at all",
            [],
            {},
            State.PENDING,
            "TemplateNotFound",
            "no template for model 'm' exists: no AIMServiceTemplate in namespace 'ml-team' and no "
            "AIMClusterServiceTemplate has this modelName; waiting for one",
        ),
        (
            "only derived ones",
            [good("a").derived()],
            {},
            State.PENDING,
            "TemplateNotFound",
            "no template for model 'm' exists",
        ),
        (
            "none Ready",
            [good("a").status("Progressing"), good("b").status("NotAvailable")],
            {},
            State.PROGRESSING,
            "TemplateNotReady",
            "no template for model 'm' is Ready yet: a (Progressing), b (NotAvailable)",
        ),
        (
            "none optimized",
            [good("a").unoptimized(), good("b").preview()],
            {},
            State.PENDING,
            "TemplateNotFound",
            "2 templates for model 'm' are Ready but none is optimized (a: unoptimized, b: preview); "
            "set spec.template.allowUnoptimized: true to use them",
        ),
        (
            "overrides contradict every template",
            [good("a"), good("b").precision("bf16")],
            {"overrides": {"precision": "fp8"}},
            State.PENDING,
            "TemplateNotFound",
            "no usable template for model 'm' matches spec.overrides (precision fp8): "
            "a: precision fp16 (overrides ask fp8), b: precision bf16 (overrides ask fp8)",
        ),
        (
            "template GPUs absent",
            [good("a", "MI300X"), good("b", "MI325X")],
            {"cluster_gpus": ("MI210",)},
            State.PENDING,
            "TemplateNotFound",
            "no template's GPU (MI300X, MI325X) is present in the cluster (found: MI210)",
        ),
        (
            "no GPUs at all",
            [good("a")],
            {"cluster_gpus": ()},
            State.PENDING,
            "TemplateNotFound",
            "no template's GPU (MI300X) is present in the cluster (found: no GPUs)",
        ),
        (
            "impossible GPU override",
            [good("a").gpu(None, 1)],
            {"overrides": {"hardware": gpu_override("MI325X")}},
            State.PENDING,
            "TemplateNotFound",
            "spec.overrides asks for GPU MI325X, which is not in the cluster (found: MI300X)",
        ),
        (
            "GPU override matching no template",
            [good("a")],
            {"overrides": {"hardware": gpu_override("MI325X")}, "cluster_gpus": ("MI300X", "MI325X")},
            State.PENDING,
            "TemplateNotFound",
            "a: GPU MI300X (overrides ask MI325X)",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_when_nothing_is_selected_the_message_says_exactly_why(row, templates, kwargs, state, reason, message):
    result = select(*templates, **kwargs)
    assert result.chosen is None
    assert (result.health.state, result.health.reason) == (state, reason)
    assert message in result.health.message
    assert result.health.category is None and result.health.upstream  # waits (Pending), never Failed


def test_explain_lists_every_candidate_with_its_fate():
    result = select(good("a"), good("b").status("Progressing"), good("c").metric("throughput"), good("d", cluster=True))
    lines = result.explain()
    assert lines[0].startswith("template for model m: Resolved: selected AIMServiceTemplate ml-team/a")
    assert lines[1] == "  + AIMServiceTemplate ml-team/a: selected: best (optimized, MI300X, latency, fp16)"
    assert lines[2] == "  - AIMServiceTemplate ml-team/b: rejected [ready]: not Ready (Progressing)"
    assert lines[3] == (
        "  - AIMServiceTemplate ml-team/c: outranked: outranked by a on metric: latency before throughput"
    )
    assert lines[4].startswith("  - AIMClusterServiceTemplate d: rejected [scope]")


# ---------------------------------------------------------------- template health and references (F43, Q3)


@pytest.mark.parametrize(
    ("state", "expected_state", "reason"),
    [
        ("Ready", State.READY, "Resolved"),
        ("Progressing", State.PROGRESSING, "TemplateNotReady"),
        ("Pending", State.PROGRESSING, "TemplateNotReady"),
        ("NotAvailable", State.NOT_AVAILABLE, "TemplateNotReady"),
        ("Failed", State.FAILED, "TemplateNotReady"),
        ("Degraded", State.FAILED, "TemplateNotReady"),
    ],
)
def test_template_health_maps_each_state(state, expected_state, reason):
    health = template_health(template("t").status(state, "no MI300X nodes"))
    assert (health.state, health.reason, health.upstream, health.category) == (expected_state, reason, True, None)
    if state != "Ready":
        assert health.message == f"AIMServiceTemplate ml-team/t is {state}: no MI300X nodes"


def test_a_template_without_status_is_pending_and_cluster_templates_are_named_as_such():
    health = template_health(template("t", cluster=True))
    assert (health.state, health.message) == (State.PROGRESSING, "AIMClusterServiceTemplate t is Pending")


def test_resolved_reference_has_a_namespace_only_for_namespaced_templates():
    assert resolved_reference(template("t"), Scope.NAMESPACE) == {
        "kind": "AIMServiceTemplate",
        "name": "t",
        "namespace": NS,
        "scope": "Namespace",
        "uid": "uid-t",
    }
    cluster = template("c", cluster=True)
    del cluster["metadata"]["uid"]
    assert resolved_reference(cluster, Scope.CLUSTER) == {
        "kind": "AIMClusterServiceTemplate",
        "name": "c",
        "scope": "Cluster",
    }


# ---------------------------------------------------------------- sticky (F45)

REF_A = {"name": "a", "namespace": NS, "scope": "Namespace", "uid": "uid-a"}


@pytest.mark.parametrize(
    ("row", "recorded", "namespaced", "cluster", "kept"),
    [
        ("recorded and Ready", REF_A, [good("a")], [], ("a", Scope.NAMESPACE)),
        ("no longer Ready", REF_A, [good("a").status("Degraded")], [], None),
        ("deleted", REF_A, [], [], None),
        ("recreated under the same name", REF_A, [good("a").with_spec()], [], None),
        (
            "cluster scope looks only cluster-wide",
            {"name": "a", "scope": "Cluster"},
            [good("a")],
            [good("a", cluster=True)],
            ("a", Scope.CLUSTER),
        ),
        ("no scope: namespace first", {"name": "a"}, [good("a")], [good("a", cluster=True)], ("a", Scope.NAMESPACE)),
        ("nothing recorded", None, [good("a")], [], None),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_sticky_keeps_the_recorded_template_while_it_exists_and_is_ready(row, recorded, namespaced, cluster, kept):
    if row == "recreated under the same name":
        namespaced[0]["metadata"]["uid"] = "another-uid"
    found = sticky(recorded, by_name(*namespaced), by_name(*cluster))
    assert (None if found is None else (found.name, found.scope)) == kept


# ---------------------------------------------------------------- explicit name (F43, F56, Q5)


def explicit(svc: dict[str, Any], namespaced=(), cluster=(), cluster_gpus=("MI300X",)):
    name = svc["spec"]["template"]["name"]
    return resolve_explicit(name, svc, by_name(*namespaced), by_name(*cluster), gpus(*cluster_gpus))


def test_an_explicit_namespaced_template_wins_over_a_cluster_one_of_the_same_name():
    result = explicit(service().named("t"), [good("t")], [good("t", cluster=True)])
    assert (result.template.scope, result.health.reason, result.ready) == (Scope.NAMESPACE, "Resolved", True)
    assert result.reference == {
        "kind": "AIMServiceTemplate",
        "name": "t",
        "namespace": NS,
        "scope": "Namespace",
        "uid": "uid-t",
    }
    assert result.derived is None and result.selection is None


def test_an_explicit_name_falls_back_to_the_cluster_template():
    result = explicit(service().named(" t "), [], [good("t", cluster=True)])
    assert (result.template.scope, result.reference["scope"]) == (Scope.CLUSTER, "Cluster")


def test_an_explicit_template_that_is_not_ready_is_used_but_not_recorded():
    result = explicit(service().named("t"), [good("t").status("NotAvailable", "no MI300X nodes")])
    assert (result.health.state, result.health.reason) == (State.NOT_AVAILABLE, "TemplateNotReady")
    assert result.template.name == "t" and result.reference is None


def test_a_missing_explicit_template_is_a_missing_reference_naming_both_lookups():
    result = explicit(service().named("t"))
    assert (result.health.state, result.health.reason, result.health.category) == (
        State.FAILED,
        "TemplateNotFound",
        Category.MISSING_UPSTREAM,
    )
    assert result.health.message == (
        "template 't' not found: no AIMServiceTemplate 't' in namespace 'ml-team' and no AIMClusterServiceTemplate 't'"
    )
    plan = Plan()
    result.contribute(plan)
    assert [(i.category, i.reason) for i in plan.issues] == [(Category.MISSING_UPSTREAM, "TemplateNotFound")]
    assert plan.components["Template"] is result.health and not plan.apply


def test_a_missing_explicit_template_with_overrides_names_the_derived_lookup_too():
    result = explicit(service().named("t").overrides(precision="fp8"))
    derived = derived_template_name("t", precision="fp8")
    assert f"no AIMServiceTemplate '{derived}' (derived for spec.overrides) or 't'" in result.health.message


@pytest.mark.parametrize("cluster", [False, True], ids=["namespaced base", "cluster base"])
def test_overrides_on_an_explicit_ready_base_plan_the_derived_template_and_wait_for_it(cluster):
    base = good("t", cluster=cluster)
    svc = service().named("t").overrides(precision="fp8")
    namespaced, clustered = ([], [base]) if cluster else ([base], [])
    name = derived_template_name("t", precision="fp8")

    waiting = explicit(svc, namespaced, clustered)
    assert waiting.derived is not None and waiting.derived["metadata"]["name"] == name
    assert waiting.derived["spec"]["precision"] == "fp8"
    assert (waiting.health.state, waiting.health.reason, waiting.health.upstream) == (
        State.PROGRESSING,
        "TemplateNotReady",
        True,
    )
    where = "AIMClusterServiceTemplate t" if cluster else "AIMServiceTemplate ml-team/t"
    assert (
        waiting.health.message == f"creating AIMServiceTemplate ml-team/{name} from {where} with overrides "
        "(precision fp8)"
    )
    assert waiting.template is None and waiting.reference is None

    created = template(name).derived().status("Progressing")
    discovering = explicit(svc, [*namespaced, created], clustered)
    assert discovering.template.name == name and discovering.health.reason == "TemplateNotReady"
    assert discovering.derived is not None  # still planned, so our fields stay ours

    ready = explicit(svc, [*namespaced, copy.deepcopy(created).ready()], clustered)
    assert ready.ready and ready.reference == {
        "kind": "AIMServiceTemplate",
        "name": name,
        "namespace": NS,
        "scope": "Namespace",
        "uid": f"uid-{name}",
    }


def test_overrides_wait_for_a_base_that_is_not_ready():
    result = explicit(service().named("t").overrides(precision="fp8"), [good("t").status("Progressing")])
    assert result.derived is None and result.template is None
    assert (result.health.state, result.health.reason) == (State.PROGRESSING, "TemplateNotReady")
    assert (
        result.health.message == "base of spec.overrides (precision fp8): AIMServiceTemplate ml-team/t is Progressing"
    )


def test_a_gpu_override_derives_from_a_not_available_base():
    result = explicit(
        service().named("t").overrides(hardware=gpu_override("MI300X")), [good("t", "MI325X").status("NotAvailable")]
    )
    assert result.derived is not None and result.derived["spec"]["hardware"]["gpu"]["model"] == "MI300X"


def test_an_existing_derived_template_is_used_when_its_base_is_gone():
    name = derived_template_name("t", precision="fp8")
    result = explicit(service().named("t").overrides(precision="fp8"), [template(name).derived().ready()])
    assert result.ready and result.template.name == name and result.derived is None


def test_overrides_that_change_nothing_use_the_base():
    result = explicit(
        service().named("t").overrides(precision="FP16", metric="latency", hardware=gpu_override("mi300x", 1)),
        [good("t")],
    )
    assert result.template.name == "t" and result.derived is None and result.ready


def test_a_derived_template_named_explicitly_is_not_derived_again():
    result = explicit(service().named("t-ovr").overrides(precision="fp8"), [good("t-ovr").derived()])
    assert result.template.name == "t-ovr" and result.derived is None


# ---------------------------------------------------------------- derived template (F56, F57)


def test_the_derived_template_follows_the_naming_rule_and_carries_the_overrides():
    base = (
        template("my-template")
        .ready()
        .gpu("MI210", 1)
        .metric("latency")
        .precision("fp16")
        .with_spec(profileId="p-1", env=[{"name": "A", "value": "1"}])
    )
    base["spec"]["hardware"]["gpu"]["resourceName"] = "amd.com/gpu"
    overrides = {"metric": "throughput", "precision": "fp8", "hardware": gpu_override("MI300X", 4)}
    before = copy.deepcopy(base)
    obj = derived_template(base, Scope.NAMESPACE, service(), overrides, caching_shared=False)
    assert base == before
    assert obj["apiVersion"] == "aim.eai.amd.com/v1alpha1" and obj["kind"] == "AIMServiceTemplate"
    assert obj["metadata"] == {
        "name": "my-template-ovr-mi300x-4gpu-fp8-throughput-b295",
        "namespace": NS,
        "labels": {"app.kubernetes.io/managed-by": "aim-engine", "aim.eai.amd.com/origin": "derived"},
    }
    assert obj["spec"] == {
        "modelName": "m",
        "metric": "throughput",
        "precision": "fp8",
        "hardware": {"gpu": {"model": "MI300X", "requests": 4, "resourceName": "amd.com/gpu"}},
        "env": [{"name": "A", "value": "1"}],
        "runtimeConfigName": "default",
    }


def test_a_gpu_model_override_replaces_a_minimum_vram():
    base = template("t").with_spec(hardware={"gpu": {"minVram": "64Gi", "requests": 1}})
    obj = derived_template(base, Scope.NAMESPACE, service(), {"hardware": gpu_override("MI300X")}, False)
    assert obj["spec"]["hardware"] == {"gpu": {"model": "MI300X", "requests": 1}}


def test_the_profile_id_stays_when_the_overrides_keep_the_profile():
    base = good("t").with_spec(profileId="p-1")
    obj = derived_template(base, Scope.NAMESPACE, service(), {"hardware": {"cpu": {"requests": "8"}}}, False)
    assert obj["spec"]["profileId"] == "p-1" and obj["spec"]["hardware"]["cpu"] == {"requests": "8"}


@pytest.mark.parametrize(
    ("service_config", "base_config", "expected"),
    [("svc-config", "base-config", "svc-config"), (None, "base-config", "base-config"), (None, None, "default")],
)
def test_the_runtime_config_comes_from_the_service_then_the_base(service_config, base_config, expected):
    svc = service().with_spec(runtimeConfigName=service_config)
    base = good("t").with_spec(runtimeConfigName=base_config)
    assert (
        derived_template(base, Scope.NAMESPACE, svc, {"precision": "fp8"}, False)["spec"]["runtimeConfigName"]
        == expected
    )


def test_pull_secrets_and_resources_come_from_the_service_when_set():
    base = good("t").with_spec(imagePullSecrets=[{"name": "base"}], resources={"limits": {"cpu": "1"}})
    kept = derived_template(base, Scope.NAMESPACE, service(), {"precision": "fp8"}, False)["spec"]
    assert (kept["imagePullSecrets"], kept["resources"]) == ([{"name": "base"}], {"limits": {"cpu": "1"}})
    svc = service().with_spec(imagePullSecrets=[{"name": "svc"}], resources={"limits": {"memory": "8Gi"}})
    mine = derived_template(base, Scope.NAMESPACE, svc, {"precision": "fp8"}, False)["spec"]
    assert (mine["imagePullSecrets"], mine["resources"]) == ([{"name": "svc"}], {"limits": {"memory": "8Gi"}})


@pytest.mark.parametrize(
    ("scope", "shared", "expected"),
    [
        (Scope.NAMESPACE, True, {"enabled": True, "env": [{"name": "E", "value": "1"}]}),
        (Scope.NAMESPACE, False, {"enabled": False, "env": [{"name": "E", "value": "1"}]}),
        (Scope.CLUSTER, True, {"enabled": True}),
        (Scope.CLUSTER, False, None),
    ],
)
def test_caching_is_enabled_for_shared_services_only(scope, shared, expected):
    base = good("t", cluster=scope is Scope.CLUSTER)
    if scope is Scope.NAMESPACE:
        base.with_spec(caching={"enabled": False, "env": [{"name": "E", "value": "1"}]})
    obj = derived_template(base, scope, service(), {"precision": "fp8"}, caching_shared=shared)
    assert obj["spec"].get("caching") == expected


def test_a_derived_template_is_never_derived_again():
    with pytest.raises(ValueError, match="is a derived template"):
        derived_template(good("t").derived(), Scope.NAMESPACE, service(), {"precision": "fp8"}, True)


def test_dedicated_services_derive_without_caching_through_the_resolution():
    svc = service().named("t").overrides(precision="fp8").with_spec(caching={"mode": "Never"})
    assert "caching" not in explicit(svc, [], [good("t", cluster=True)]).derived["spec"]


def test_overrides_describe_and_name_only_what_is_set():
    o = Overrides.read({"hardware": gpu_override("MI300X", 4), "metric": "throughput"})
    assert o.describe() == "GPU MI300X, 4 GPUs, metric throughput"
    assert o.derived_name("base") == derived_template_name("base", "MI300X", 4, "", "throughput")
    assert not Overrides.read(None) and not Overrides.read({})


# ---------------------------------------------------------------- the whole order (choose_template)


def choose(svc: dict[str, Any], namespaced=(), cluster=(), cluster_gpus=("MI300X",)):
    return choose_template(svc, "m", list(namespaced), list(cluster), gpus(*cluster_gpus))


def test_a_recorded_template_stays_when_a_better_one_appears():
    old = good("old", "MI210")
    svc = service().resolved(resolved_reference(old, Scope.NAMESPACE))
    result = choose(svc, [old, good("new", "MI325X")], cluster_gpus=("MI210", "MI325X"))
    assert result.template.name == "old" and result.ready
    assert result.health.message == (
        "keeping AIMServiceTemplate ml-team/old recorded in status.resolvedTemplate "
        "while it is Ready (auto-selection would now choose AIMServiceTemplate ml-team/new)"
    )


def test_keeping_the_template_auto_selection_still_picks_says_what_the_first_pass_said():
    chosen = good("chosen", "MI300X")
    first = choose(service(), [chosen])
    svc = service().resolved(resolved_reference(chosen, Scope.NAMESPACE))
    again = choose(svc, [chosen])
    assert again.template.name == "chosen"
    assert again.health == first.health  # nothing new to write on the next pass


def test_a_recorded_template_that_failed_is_replaced_by_a_new_selection():
    old = good("old").status("Failed")
    svc = service().resolved(resolved_reference(old, Scope.NAMESPACE))
    result = choose(svc, [old, good("new")])
    assert result.template.name == "new" and result.selection is not None
    assert result.health.message == "selected AIMServiceTemplate ml-team/new (optimized, MI300X, latency, fp16)"


def test_an_explicit_name_skips_selection():
    result = choose(service().named("t"), [good("best"), good("t", "MI210")], cluster_gpus=("MI300X", "MI210"))
    assert result.template.name == "t" and result.selection is None


def test_auto_selection_with_overrides_adding_a_gpu_model_uses_a_derived_copy():
    base = good("t").gpu(None, 1)
    svc = service().overrides(hardware=gpu_override("MI300X"))
    result = choose(svc, [base])
    assert result.selection is not None and result.selection.chosen.name == "t"
    assert result.derived is not None and result.derived["metadata"]["name"] == derived_template_name("t", "MI300X")
    assert result.health.reason == "TemplateNotReady" and result.template is None
    plan = Plan()
    result.contribute(plan)
    assert [(d.resource, d.obj["metadata"]["name"], d.owned) for d in plan.apply] == [
        (TEMPLATES, result.derived["metadata"]["name"], True)
    ]


def test_auto_selection_with_overrides_the_base_already_meets_makes_no_copy():
    result = choose(service().overrides(precision="fp16", metric="latency"), [good("t"), good("u").precision("fp8")])
    assert result.template.name == "t" and result.derived is None
    assert result.health.reason == "Resolved" and result.health.message.startswith("selected AIMServiceTemplate")


def test_another_services_derived_copy_does_not_capture_auto_selection():
    copy_of_other = good(derived_template_name("t", precision="fp16")).derived().precision("fp4")
    result = choose(service(), [good("t"), copy_of_other])
    assert result.template.name == "t"
    assert fates(result.selection)[copy_of_other["metadata"]["name"]] == (Verdict.REJECTED, Filter.DERIVED)


def test_with_overrides_without_overrides_is_the_base():
    base = ScopedTemplate(good("t"), Scope.NAMESPACE)
    result = with_overrides(base, service(), {})
    assert result.template is base and result.derived is None and result.ready


def test_a_derived_templates_change_triggers_the_service_that_owns_it_before_it_records_it() -> None:
    """A service naming a base template with spec.overrides waits for its derived template, whose name is
    neither in its spec nor (until Ready) in status.resolvedTemplate: its status change must reach the
    service anyway (else the service reported it Pending until some other change reconciled it)."""
    from aim_core.reconcile.resources import SERVICES, TEMPLATES
    from aim_core.runtime.store import Store
    from tests.service.builders import controller

    ctl = controller()
    store = Store()
    ctl.setup(store)
    svc = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "qwen-throughput", "namespace": "ml-team", "uid": "s1"},
        "spec": {"model": {"name": "qwen3-32b"}, "template": {"name": "base"}, "overrides": {"metric": "throughput"}},
    }
    store.upsert(SERVICES, svc)
    derived = {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMServiceTemplate",
        "metadata": {
            "name": "base-ovr-throughput-39b8",
            "namespace": "ml-team",
            "ownerReferences": [
                {"apiVersion": "aim.eai.amd.com/v1alpha1", "kind": "AIMService", "name": "qwen-throughput", "uid": "s1"}
            ],
        },
        "spec": {"modelName": "qwen3-32b"},
        "status": {"status": "Failed"},
    }
    watch = next(w for w in ctl.watches() if w.resource == TEMPLATES)
    assert ("ml-team", "qwen-throughput") in set(watch.mapper(derived))
    other = {**derived, "metadata": {"name": "someone-elses", "namespace": "ml-team"}}
    assert ("ml-team", "qwen-throughput") not in set(watch.mapper(other))
