"""Unused adapter artifacts the operator created go after their retention; nothing else does."""

from __future__ import annotations

import pytest

from aim_core.artifact.plan import plan_artifact
from aim_core.reconcile.resources import ARTIFACTS
from aim_core.runtimeconfig import DEFAULT_UNUSED_ADAPTER_RETENTION
from tests.artifact.builders import BINDING, NOW, NS, make_artifact, names, observed, pvc, status_after

CREATED_BY_SERVICE = {
    "manager": "aim-service-controller",
    "operation": "Apply",
    "apiVersion": "aim.eai.amd.com/v1alpha1",
    "fieldsV1": {"f:metadata": {"f:labels": {"f:aim.eai.amd.com/adapter": {}}}, "f:spec": {"f:sourceUri": {}}},
}


def adapter_artifact(last_used: str | None, *, by_service: bool = True, label: bool = True):
    art = make_artifact("lora-abc", "hf://org/sql-lora", size="1Gi").downloaded()
    if label:
        art.labels(**{"aim.eai.amd.com/adapter": "true"})
    if by_service:
        art["metadata"]["managedFields"] = [CREATED_BY_SERVICE]
    if last_used:
        art.status(lastUsed=last_used)
    return art


def plan_for(art, config=None, **fields):
    fields.setdefault("pvc", pvc(names(art)["pvc"]))
    fields.setdefault("role_binding", BINDING)
    return plan_artifact(art, observed(config, **fields))


def deleted(plan):
    return [(d.resource, d.namespace, d.name) for d in plan.delete]


def test_an_unused_adapter_artifact_goes_after_the_default_week():
    assert DEFAULT_UNUSED_ADAPTER_RETENTION == "168h"
    art = adapter_artifact("2025-12-24T11:00:00Z")  # unused for 8 days
    plan = plan_for(art)
    assert deleted(plan) == [(ARTIFACTS, NS, "lora-abc")]
    retention = status_after(art, plan)["conditions"]
    assert any(c["type"] == "RetentionReady" and c["reason"] == "RetentionExpired" for c in retention)


def test_before_its_retention_it_stays_and_is_looked_at_again_when_it_ends():
    art = adapter_artifact("2025-12-31T12:00:00Z")  # unused for a day
    plan = plan_for(art)
    assert deleted(plan) == []
    assert plan.requeue_after == pytest.approx(6 * 86400)


def test_never_used_counts_from_its_creation():
    art = adapter_artifact(None)  # created 2026-01-01T00:00:00Z, 12 hours before NOW
    assert deleted(plan_for(art, {"artifact": {"unusedAdapterRetention": "6h"}})) == [(ARTIFACTS, NS, "lora-abc")]
    assert deleted(plan_for(art, {"artifact": {"unusedAdapterRetention": "24h"}})) == []


def test_the_runtime_config_sets_the_retention_or_keeps_them_for_ever():
    art = adapter_artifact("2025-06-01T00:00:00Z")
    assert deleted(plan_for(art, {"artifact": {"unusedAdapterRetention": "Never"}})) == []
    assert deleted(plan_for(art, {"artifact": {"unusedAdapterRetention": "720h"}})) == [(ARTIFACTS, NS, "lora-abc")]


@pytest.mark.parametrize(
    "art, why",
    [
        (adapter_artifact("2025-01-01T00:00:00Z", by_service=False), "a user's artifact with the adapter label"),
        (adapter_artifact("2025-01-01T00:00:00Z", label=False), "no adapter label"),
        (adapter_artifact("2025-01-01T00:00:00Z").owned(), "owned by a template cache"),
    ],
)
def test_artifacts_the_operator_did_not_create_for_an_adapter_are_never_deleted(art, why):
    assert deleted(plan_for(art)) == [], why


def test_an_artifact_in_use_is_never_deleted():
    art = adapter_artifact("2025-01-01T00:00:00Z")
    plan = plan_for(art, in_use=True)
    assert deleted(plan) == [] and plan.status["lastUsed"] == NOW
