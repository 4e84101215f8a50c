from aim_core.resources import RUNTIME_CONFIGS, SERVICES
from aim_core.store import Store
from aim_core.providers import ResourceRef

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", True)


def obj(ns, name, rv="1", **spec):
    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": rv}, "spec": spec}


def test_index_lookup_follows_updates_and_deletes():
    store = Store()
    store.add_index(SERVICES, "config", lambda o: [(o["metadata"]["namespace"], o["spec"].get("runtimeConfigName") or "default")])
    store.upsert(SERVICES, obj("a", "s1", runtimeConfigName="x"))
    store.upsert(SERVICES, obj("a", "s2"))
    store.upsert(SERVICES, obj("b", "s3", runtimeConfigName="x"))
    assert [o["metadata"]["name"] for o in store.by_index(SERVICES, "config", ("a", "x"))] == ["s1"]
    assert [o["metadata"]["name"] for o in store.by_index(SERVICES, "config", ("a", "default"))] == ["s2"]

    store.upsert(SERVICES, obj("a", "s1", rv="2"))  # switched to default
    assert store.by_index(SERVICES, "config", ("a", "x")) == []
    assert sorted(o["metadata"]["name"] for o in store.by_index(SERVICES, "config", ("a", "default"))) == ["s1", "s2"]

    store.delete(SERVICES, "a", "s2")
    assert [o["metadata"]["name"] for o in store.by_index(SERVICES, "config", ("a", "default"))] == ["s1"]


def test_older_resource_version_does_not_roll_back():
    store = Store()
    store.upsert(SERVICES, obj("a", "s", rv="5", replicas=2))
    assert store.upsert(SERVICES, obj("a", "s", rv="4", replicas=1)) is False
    assert store.get(SERVICES, "a", "s")["spec"]["replicas"] == 2


def test_listeners_see_changes_but_not_no_ops():
    store = Store()
    seen = []
    store.subscribe(lambda ref, ev, new, old: seen.append((ref.kind, ev, new["metadata"]["name"])))
    store.upsert(RUNTIME_CONFIGS, obj("a", "c"))
    store.upsert(RUNTIME_CONFIGS, obj("a", "c"))  # identical: no event
    store.upsert(RUNTIME_CONFIGS, obj("a", "c", rv="2", env=[]))
    store.delete(RUNTIME_CONFIGS, "a", "c")
    assert seen == [("AIMRuntimeConfig", "ADDED", "c"), ("AIMRuntimeConfig", "MODIFIED", "c"), ("AIMRuntimeConfig", "DELETED", "c")]


def test_replace_all_drops_vanished_objects_only_in_listed_namespaces():
    store = Store()
    store.upsert(SERVICES, obj("a", "gone"))
    store.upsert(SERVICES, obj("b", "other-ns"))
    store.replace_all(SERVICES, [obj("a", "kept")], namespaces={"a"})
    assert store.get(SERVICES, "a", "gone") is None
    assert store.get(SERVICES, "a", "kept") is not None
    assert store.get(SERVICES, "b", "other-ns") is not None
    assert SERVICES in store.synced


def test_the_operator_store_keeps_only_what_readers_use_in_compact_form():
    from aim_core.store import LAST_APPLIED

    store = Store(field_managers={"aim-service-controller"}, compact=True)
    fields = {"f:spec": {"f:predictor": {"f:model": {}}}}

    def isvc(name):
        return {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService",
                "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1",
                             "annotations": {LAST_APPLIED: "{...}", "team": "a"},
                             "managedFields": [
                                 {"manager": "aim-service-controller", "operation": "Apply", "fieldsV1": dict(fields)},
                                 {"manager": "aim-service-controller", "operation": "Update", "fieldsV1": {"f:x": {}}},
                                 {"manager": "kserve", "operation": "Update", "fieldsV1": {"f:status": {}}}]},
                "spec": {"predictor": {"model": {"runtime": "vllm"}}}}

    store.upsert(ISVC, isvc("a"))
    store.upsert(ISVC, isvc("b"))
    a, b = store.get(ISVC, "ns", "a"), store.get(ISVC, "ns", "b")
    assert a["metadata"]["annotations"] == {"team": "a"}
    assert [(e["manager"], e["operation"]) for e in a["metadata"]["managedFields"]] == [
        ("aim-service-controller", "Apply")]
    assert a["spec"] == {"predictor": {"model": {"runtime": "vllm"}}}
    assert a["metadata"]["managedFields"][0]["fieldsV1"] == fields
    assert a["metadata"]["managedFields"][0]["fieldsV1"] is b["metadata"]["managedFields"][0]["fieldsV1"]
    assert store.upsert(ISVC, isvc("a")) is False  # the same object again is no change


def test_a_plain_store_keeps_objects_as_given():
    store = Store()
    obj = {"metadata": {"name": "a", "namespace": "ns",
                        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {}}]}}
    store.upsert(ISVC, obj)
    assert store.get(ISVC, "ns", "a")["metadata"]["managedFields"] == obj["metadata"]["managedFields"]
