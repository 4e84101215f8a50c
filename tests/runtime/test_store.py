import json

from aim_core.plugin.providers import ResourceRef
from aim_core.reconcile.resources import RUNTIME_CONFIGS, SERVICES
from aim_core.runtime.store import Store

ISVC = ResourceRef("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", True)


def obj(ns, name, rv="1", **spec):
    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": rv}, "spec": spec}


def test_index_lookup_follows_updates_and_deletes():
    store = Store()
    store.add_index(
        SERVICES, "config", lambda o: [(o["metadata"]["namespace"], o["spec"].get("runtimeConfigName") or "default")]
    )
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
    assert seen == [
        ("AIMRuntimeConfig", "ADDED", "c"),
        ("AIMRuntimeConfig", "MODIFIED", "c"),
        ("AIMRuntimeConfig", "DELETED", "c"),
    ]


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
    from aim_core.runtime.storeform import LAST_APPLIED

    store = Store(field_managers={"aim-service-controller"}, compact=True)
    fields = {"f:spec": {"f:predictor": {"f:model": {}}}}

    def isvc(name):
        return {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {
                "name": name,
                "namespace": "ns",
                "resourceVersion": "1",
                "annotations": {LAST_APPLIED: "{...}", "team": "a"},
                "managedFields": [
                    {"manager": "aim-service-controller", "operation": "Apply", "fieldsV1": dict(fields)},
                    {"manager": "aim-service-controller", "operation": "Update", "fieldsV1": {"f:x": {}}},
                    {"manager": "kserve", "operation": "Update", "fieldsV1": {"f:status": {}}},
                ],
            },
            "spec": {"predictor": {"model": {"runtime": "vllm"}}},
        }

    store.upsert(ISVC, isvc("a"))
    store.upsert(ISVC, isvc("b"))
    a, b = store.get(ISVC, "ns", "a"), store.get(ISVC, "ns", "b")
    assert a["metadata"]["annotations"] == {"team": "a"}
    assert [(e["manager"], e["operation"]) for e in a["metadata"]["managedFields"]] == [
        ("aim-service-controller", "Apply")
    ]
    assert a["spec"] == {"predictor": {"model": {"runtime": "vllm"}}}
    assert a["metadata"]["managedFields"][0]["fieldsV1"] == fields
    assert a["metadata"]["managedFields"][0]["fieldsV1"] is b["metadata"]["managedFields"][0]["fieldsV1"]
    assert store.upsert(ISVC, isvc("a")) is False  # the same object again is no change


def test_a_plain_store_keeps_objects_as_given():
    store = Store()
    obj = {
        "metadata": {
            "name": "a",
            "namespace": "ns",
            "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {}}],
        }
    }
    store.upsert(ISVC, obj)
    assert store.get(ISVC, "ns", "a")["metadata"]["managedFields"] == obj["metadata"]["managedFields"]


MANAGER = "aim-service-controller"


def _isvc_as_served(name, owner_uid, spec=None):
    """An InferenceService as the API server returns it after our apply (managedFields with keyed list entries)."""
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": "1",
            "uid": f"uid-{name}",
            "labels": {"aim.eai.amd.com/service": name},
            "ownerReferences": [
                {
                    "apiVersion": "aim.eai.amd.com/v1alpha1",
                    "kind": "AIMService",
                    "name": name,
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
            "managedFields": [
                {
                    "manager": MANAGER,
                    "operation": "Apply",
                    "apiVersion": "serving.kserve.io/v1beta1",
                    "time": f"2026-01-01T00:00:0{len(name) % 10}Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:metadata": {
                            "f:labels": {"f:aim.eai.amd.com/service": {}},
                            "f:ownerReferences": {
                                f'k:{{"uid":"{owner_uid}"}}': {
                                    ".": {},
                                    "f:apiVersion": {},
                                    "f:kind": {},
                                    "f:name": {},
                                    "f:uid": {},
                                }
                            },
                        },
                        "f:spec": {
                            "f:predictor": {
                                "f:minReplicas": {},
                                "f:tolerations": {},
                                "f:containers": {
                                    'k:{"name":"kserve-container"}': {
                                        ".": {},
                                        "f:image": {},
                                        "f:name": {},
                                        "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}},
                                    }
                                },
                            }
                        },
                    },
                },
                {"manager": "kserve", "operation": "Update", "fieldsV1": {"f:status": {"f:url": {}}}},
            ],
        },
        "spec": spec
        if spec is not None
        else {
            "predictor": {
                "minReplicas": 1,
                "tolerations": [{"key": "gpu", "operator": "Exists"}],
                "containers": [{"name": "kserve-container", "image": "img:1", "env": [{"name": "A", "value": "1"}]}],
            }
        },
    }


def test_the_compact_store_keeps_what_needs_apply_reads_of_managed_fields():
    import copy

    from aim_core.runtime.applyset import needs_apply, owned_fields

    store = Store(field_managers={MANAGER}, compact=True)
    served = {name: _isvc_as_served(name, f"owner-{name}") for name in ("a", "b")}
    for obj in served.values():
        store.upsert(ISVC, copy.deepcopy(obj))
    a, b = store.get(ISVC, "ns", "a"), store.get(ISVC, "ns", "b")
    assert (
        owned_fields(a, MANAGER)
        == owned_fields(served["a"], MANAGER)
        == {
            ("metadata",),
            ("metadata", "labels"),
            ("metadata", "labels", "aim.eai.amd.com/service"),
            ("metadata", "ownerReferences"),
            ("spec",),
            ("spec", "predictor"),
            ("spec", "predictor", "minReplicas"),
            ("spec", "predictor", "tolerations"),
            ("spec", "predictor", "containers"),
        }
    )
    # What the engine decides from the stored object is what it decides from the server's: in step, ...
    body = {k: v for k, v in served["a"].items() if k != "status"}
    body["metadata"] = {k: served["a"]["metadata"][k] for k in ("name", "namespace", "labels", "ownerReferences")}
    assert needs_apply(body, a, MANAGER) is needs_apply(body, served["a"], MANAGER) is False
    # ... a field we stopped wanting is still seen as ours to remove, ...
    untolerated = copy.deepcopy(body)
    del untolerated["spec"]["predictor"]["tolerations"]
    assert needs_apply(untolerated, a, MANAGER) is needs_apply(untolerated, served["a"], MANAGER) is True
    # ... and a changed value is seen.
    changed = copy.deepcopy(body)
    changed["spec"]["predictor"]["containers"][0]["image"] = "img:2"
    assert needs_apply(changed, a, MANAGER) is True
    # Objects owned by different services share one managedFields (the owner's uid was what differed).
    assert a["metadata"]["managedFields"] is b["metadata"]["managedFields"]
    assert [e["manager"] for e in a["metadata"]["managedFields"]] == [MANAGER]
    # The same object again is no change (a relisting does not wake every controller).
    assert store.upsert(ISVC, copy.deepcopy(served["a"])) is False


def test_equal_specs_are_shared_and_each_object_keeps_its_own_values():
    import copy

    store = Store(field_managers={MANAGER}, compact=True)
    store.upsert(ISVC, _isvc_as_served("a", "o1"))
    store.upsert(ISVC, _isvc_as_served("b", "o2"))
    other = {"predictor": {"minReplicas": 2}}
    store.upsert(ISVC, _isvc_as_served("c", "o3", spec=copy.deepcopy(other)))
    a, b, c = (store.get(ISVC, "ns", n) for n in "abc")
    assert a["spec"] is b["spec"] and a["spec"] == _isvc_as_served("a", "o1")["spec"]
    assert c["spec"] == other
    assert (a["metadata"]["ownerReferences"][0]["uid"], b["metadata"]["ownerReferences"][0]["uid"]) == ("o1", "o2")
    # b changes: a keeps its spec
    changed = _isvc_as_served("b", "o2", spec=copy.deepcopy(other))
    changed["metadata"]["resourceVersion"] = "2"
    assert store.upsert(ISVC, changed) is True
    assert store.get(ISVC, "ns", "b")["spec"] == other
    assert store.get(ISVC, "ns", "a")["spec"] == _isvc_as_served("a", "o1")["spec"]
    assert store.damaged_shares() == []
    # A reader that modifies a stored (shared) value is caught (the wire tests check this after every test).
    store.get(ISVC, "ns", "a")["spec"]["predictor"]["minReplicas"] = 5
    assert len(store.damaged_shares()) == 1


def test_the_shared_values_table_stays_bounded_and_correct(monkeypatch):
    import aim_core.runtime.storeform as store_module

    monkeypatch.setattr(store_module, "_SHARED_MAX", 8)
    store = Store(field_managers={MANAGER}, compact=True)
    for i in range(40):  # a spec of its own each: the table is swept of values no object holds
        store.upsert(ISVC, obj("ns", f"s{i}", replicas=i))
        if i % 2:
            store.delete(ISVC, "ns", f"s{i}")
    assert len(store._shared) < 8
    assert [store.get(ISVC, "ns", f"s{i}")["spec"] for i in range(0, 40, 2)] == [
        {"replicas": i} for i in range(0, 40, 2)
    ]
    store.upsert(ISVC, obj("ns", "again", replicas=0))
    assert store.get(ISVC, "ns", "again")["spec"] == {"replicas": 0}
    assert store.damaged_shares() == []


def test_indexes_follow_objects_sharing_a_value_and_objects_with_a_value_of_their_own():
    store = Store()
    store.add_index(
        SERVICES, "model", lambda o: [o["spec"]["model"], o["spec"]["model"]] if o["spec"].get("model") else []
    )
    store.add_index(SERVICES, "name", lambda o: [(o["metadata"]["namespace"], o["metadata"]["name"].upper())])

    def names(index, value):
        return [o["metadata"]["name"] for o in store.by_index(SERVICES, index, value)]

    for i, model in enumerate(["m1", "m1", "m1", "m2", None]):
        store.upsert(SERVICES, obj("a", f"s{i}", **({"model": model} if model else {})))
    assert names("model", "m1") == ["s0", "s1", "s2"] and names("model", "m2") == ["s3"]
    assert names("name", ("a", "S4")) == ["s4"]
    assert store.keys_by_index(SERVICES, "model", "m1") == {("a", "s0"), ("a", "s1"), ("a", "s2")}
    store.delete(SERVICES, "a", "s0")
    store.delete(SERVICES, "a", "s1")
    assert names("model", "m1") == ["s2"]
    store.upsert(SERVICES, obj("a", "s2", rv="2", model="m2"))  # moves to m2
    assert names("model", "m1") == [] and names("model", "m2") == ["s2", "s3"]
    store.delete(SERVICES, "a", "s3")
    store.delete(SERVICES, "a", "s2")
    assert names("model", "m2") == [] and store.keys_by_index(SERVICES, "model", "m2") == set()
    store.upsert(SERVICES, obj("a", "s5", model="m1"))
    assert names("model", "m1") == ["s5"] and names("name", ("a", "S5")) == ["s5"]
    assert names("name", ("a", "S0")) == []


def test_equal_maps_in_statuses_are_shared():
    store = Store(field_managers={MANAGER}, compact=True)

    def service(name, template):
        return {
            **obj("ns", name),
            "status": {
                "status": "Running",
                "conditions": [{"type": "Ready", "status": "True"}],
                "resolvedTemplate": {"kind": "AIMServiceTemplate", "name": template},
            },
        }

    for name, template in (("a", "t1"), ("b", "t1"), ("c", "t2")):
        store.upsert(SERVICES, service(name, template))
    a, b, c = (store.get(SERVICES, "ns", n)["status"] for n in "abc")
    assert a["resolvedTemplate"] is b["resolvedTemplate"]
    assert (a["resolvedTemplate"]["name"], c["resolvedTemplate"]["name"]) == ("t1", "t2")
    assert a == service("a", "t1")["status"] and store.damaged_shares() == []


def serving_pod() -> dict:
    """A KServe predictor pod as the API server returns it (abridged, but with what makes pods big)."""
    env = [{"name": f"VAR_{i}", "value": "x" * 40} for i in range(30)]
    probe = {"httpGet": {"path": "/health", "port": 8000}, "initialDelaySeconds": 30, "periodSeconds": 10}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "qwen-predictor-abc",
            "namespace": "llm",
            "uid": "u1",
            "resourceVersion": "7",
            "labels": {"serving.kserve.io/inferenceservice": "qwen"},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "qwen-predictor-6d9f", "uid": "r1"}],
        },
        "spec": {
            "nodeName": "gpu-node-1",
            "volumes": [
                {"name": "model-cache", "persistentVolumeClaim": {"claimName": "cache-qwen"}},
                {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                {"name": "token", "projected": {"sources": [{"serviceAccountToken": {"path": "token"}}]}},
            ],
            "initContainers": [{"name": "storage-initializer", "image": "kserve/storage-initializer", "env": env}],
            "containers": [
                {
                    "name": "kserve-container",
                    "image": "aim:0.8.5",
                    "env": env,
                    "args": ["--port", "8000"],
                    "readinessProbe": probe,
                    "livenessProbe": probe,
                    "resources": {"limits": {"amd.com/gpu": "1"}},
                    "volumeMounts": [{"name": "model-cache", "mountPath": "/workspace/model-cache"}],
                }
            ],
        },
        "status": {
            "phase": "Running",
            "hostIP": "10.0.0.5",
            "hostIPs": [{"ip": "10.0.0.5"}],
            "podIP": "10.244.1.17",
            "podIPs": [{"ip": "10.244.1.17"}],
            "qosClass": "Burstable",
            "startTime": "2026-01-01T00:00:00Z",
            "conditions": [
                {"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": "2026-01-01T00:01:00Z"}
                for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")
            ],
            "initContainerStatuses": [
                {
                    "name": "storage-initializer",
                    "image": "kserve/storage-initializer",
                    "imageID": "docker.io/kserve/storage-initializer@sha256:" + "a" * 64,
                    "containerID": "containerd://" + "b" * 64,
                    "ready": True,
                    "restartCount": 0,
                    "started": False,
                    "state": {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "finishedAt": "2026-01-01T00:00:40Z",
                            "containerID": "containerd://" + "b" * 64,
                        }
                    },
                    "lastState": {},
                }
            ],
            "containerStatuses": [
                {
                    "name": "kserve-container",
                    "image": "aim:0.8.5",
                    "imageID": "docker.io/library/aim@sha256:" + "c" * 64,
                    "containerID": "containerd://" + "d" * 64,
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}},
                    "lastState": {},
                }
            ],
        },
    }


def test_the_store_keeps_pods_as_their_readers_use_them():
    from aim_core.artifact.keys import pvc_claims
    from aim_core.reconcile.resources import PODS
    from aim_core.reconcile.workloads import inspect_pods
    from aim_core.runtime.storeform import pod_essentials

    pod = serving_pod()
    store = Store(projections={PODS: pod_essentials})
    store.upsert(PODS, pod)
    kept = store.get(PODS, "llm", "qwen-predictor-abc")
    assert kept["metadata"] == pod["metadata"]
    assert kept["spec"] == {"nodeName": "gpu-node-1", "volumes": [pod["spec"]["volumes"][0]]}
    assert kept["status"] == {  # what pod inspection reads, no addresses, times, image IDs or other conditions
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "initContainerStatuses": [
            {
                "name": "storage-initializer",
                "ready": True,
                "restartCount": 0,
                "state": {"terminated": pod["status"]["initContainerStatuses"][0]["state"]["terminated"]},
            }
        ],
        "containerStatuses": [{"name": "kserve-container", "ready": True, "restartCount": 0, "state": {"running": {}}}],
    }
    assert inspect_pods([kept]) == inspect_pods([pod]) and inspect_pods([kept]).ready
    assert pvc_claims(kept) == pvc_claims(pod) == [("llm", "cache-qwen")]  # artifact usage (F76) reads the claims
    assert len(json.dumps(kept)) < len(json.dumps(pod)) / 3
    assert pod_essentials(kept) is kept  # already essential: nothing copied again
    assert store.upsert(PODS, serving_pod()) is False  # the same pod again changes nothing
