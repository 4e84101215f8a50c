"""Views of a stored object are built once per stored version; copies (which may be modified) carry none."""

from __future__ import annotations

import copy

from aim_core.reconcile.obj import Stored
from aim_core.reconcile.resources import SERVICES
from aim_core.runtime.store import Store
from aim_core.service.view import ServiceView


def service(rv: str, model: str) -> dict:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMService",
        "metadata": {"name": "chat", "namespace": "team", "resourceVersion": rv},
        "spec": {"model": {"name": model}},
    }


def test_a_stored_object_has_one_view_per_version():
    store = Store(compact=True)
    store.upsert(SERVICES, service("1", "qwen"))
    stored = store.get(SERVICES, "team", "chat")
    assert stored.__class__ is Stored
    view = ServiceView.of(stored)
    assert view.model_name == "qwen"
    assert ServiceView.of(stored) is view  # built once

    store.upsert(SERVICES, service("2", "llama"))
    assert ServiceView.of(store.get(SERVICES, "team", "chat")).model_name == "llama"  # a new version, a new view


def test_copies_of_a_stored_object_are_plain_and_read_afresh():
    store = Store()
    store.upsert(SERVICES, service("1", "qwen"))
    stored = store.get(SERVICES, "team", "chat")
    ServiceView.of(stored)
    for made in (copy.deepcopy(stored), copy.copy(stored), dict(stored), {**stored}):
        assert made.__class__ is dict
        assert made == stored
    edited = copy.deepcopy(stored)
    edited["spec"]["model"]["name"] = "llama"
    assert ServiceView.of(edited).model_name == "llama"
    assert ServiceView.of(stored).model_name == "qwen"  # the original is untouched
