"""clone: a deep copy of a body about to be changed and sent, as copy.deepcopy made it."""

from __future__ import annotations

import copy

from aim_core.reconcile.obj import Stored, clone


def test_a_clone_is_equal_and_shares_nothing_that_can_change():
    body = {"metadata": {"name": "x", "labels": {"a": "b"}}, "spec": {"env": [{"name": "A", "value": "1"}], "n": 1.5}}
    made = clone(body)
    assert made == body == copy.deepcopy(body)
    made["metadata"]["labels"]["a"] = "changed"
    made["spec"]["env"].append({"name": "B"})
    assert body == {
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {"env": [{"name": "A", "value": "1"}], "n": 1.5},
    }


def test_a_clone_of_a_stored_object_is_a_plain_dict():
    made = clone(Stored({"spec": {"a": 1}}))
    assert made.__class__ is dict
    assert made == {"spec": {"a": 1}}


def test_values_json_cannot_carry_are_copied_field_by_field():
    body = {"spec": {1: {"x": [1, 2]}, "big": 2**70}}
    made = clone(body)
    assert made == body
    assert made["spec"][1] is not body["spec"][1]
