from datetime import UTC, datetime, timedelta

import pytest

from aim_core.reconcile.conditions import format_time
from aim_core.reconcile.errors import ErrorInfo
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.status import SERVICE_STATUS_MAP, derive, requeue_after, should_apply

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
INFRA, AUTH, INVALID = Category.INFRASTRUCTURE, Category.AUTH, Category.INVALID_SPEC
MISSING_UP = Category.MISSING_UPSTREAM


def ok(reason="Ready", message="", upstream=False):
    return Health.ok(reason, message, upstream=upstream)


def progressing(reason, message="", upstream=False):
    return Health.progressing(reason, message, upstream=upstream)


def failing(category, reason, message, state=State.FAILED, upstream=False):
    return Health.error(category, reason, message, state=state, upstream=upstream)


def prev(type_, status, reason, message="", ago=0):
    when = format_time(NOW - timedelta(seconds=ago))
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": when}


def table(derived):
    return {c.type: (c.status, c.reason, c.message) for c in derived.conditions}


def test_all_ready():
    d = derive({"Model": ok("ModelResolved", upstream=True), "InferenceService": ok(reason="")}, now=NOW)
    assert (d.state, d.status, d.ready, d.should_apply) == (State.READY, State.READY, True, True)
    assert table(d) == {
        "ModelReady": ("True", "ModelResolved", ""),
        "InferenceServiceReady": ("True", "Ready", ""),  # empty reason → literal Ready
        "Ready": ("True", "AllComponentsReady", "All components are ready"),
    }
    assert [c.type for c in d.conditions] == ["ModelReady", "InferenceServiceReady", "Ready"]


def test_no_components_is_ready():
    assert derive({}, now=NOW).status is State.READY


@pytest.mark.parametrize(
    ("components", "state", "ready"),
    [
        # not-ready upstream dependency → Pending; child → Progressing; worst wins
        (
            {"Model": progressing("CreatingModel", "creating", upstream=True)},
            State.PENDING,
            ("Progressing", "Component Model is not ready: creating"),
        ),
        (
            {"Job": progressing("JobRunning")},
            State.PROGRESSING,
            ("Progressing", "Component Job is not ready: JobRunning"),
        ),
        (
            {"Pods": Health(State.STARTING, "PodsStarting", "1/2")},
            State.PROGRESSING,
            ("Progressing", "Component Pods is not ready: 1/2"),
        ),
        (
            {"Pods": Health(State.PENDING, "FailedScheduling", "0/3 nodes")},
            State.PENDING,
            ("Progressing", "Component Pods is not ready: 0/3 nodes"),
        ),
        (
            {
                "Model": ok(upstream=True),
                "Pods": progressing("PodsStarting"),
                "Template": progressing("TemplateNotReady", upstream=True),
            },
            State.PENDING,
            ("Progressing", "Component Pods is not ready: PodsStarting"),
        ),
        # error states keep their own state; the first one explains Ready
        (
            {
                "Pods": progressing("PodsStarting"),
                "Cache": Health(State.DEGRADED, "CacheLost", "pvc lost"),
                "Job": Health(State.FAILED, "JobFailed", "exit 1"),
            },
            State.FAILED,
            ("CacheLost", "Component Cache is not ready: pvc lost"),
        ),
        (
            {"Template": Health(State.NOT_AVAILABLE, "GPUNotAvailable", "no MI300X", upstream=True)},
            State.NOT_AVAILABLE,
            ("GPUNotAvailable", "Component Template is not ready: no MI300X"),
        ),
        (
            {"Pods": failing(Category.RESOURCE_EXHAUSTION, "PodOOMKilled", "oom")},
            State.FAILED,
            ("PodOOMKilled", "Component Pods is not ready: oom"),
        ),
    ],
)
def test_worst_component_wins(components, state, ready):
    d = derive(components, now=NOW)
    assert d.state is state
    assert d.status is state
    assert table(d)["Ready"] == ("False", *ready)
    assert d.should_apply is True


@pytest.mark.parametrize(
    ("components", "status"),
    [
        ({"Model": ok()}, "Running"),
        ({"Pods": progressing("PodsStarting")}, "Starting"),
        ({"Model": progressing("ModelNotReady", upstream=True)}, "Pending"),
        ({"Template": Health(State.NOT_AVAILABLE, "GPUNotAvailable", "no GPU", upstream=True)}, "Pending"),  # Q3
        ({"Model": Health(State.FAILED, "ModelNotReady", "m")}, "Failed"),
        ({"Cache": Health(State.DEGRADED, "CacheLost", "c")}, "Degraded"),
    ],
)
def test_service_status_map(components, status):
    d = derive(components, now=NOW, status_map=SERVICE_STATUS_MAP)
    assert d.status.value == status


def test_not_available_service_names_the_component_in_ready():
    d = derive(
        {"Template": Health(State.NOT_AVAILABLE, "GPUNotAvailable", "no GPU")}, now=NOW, status_map=SERVICE_STATUS_MAP
    )
    assert (d.state, d.status) == (State.NOT_AVAILABLE, State.PENDING)
    assert table(d)["Ready"] == ("False", "GPUNotAvailable", "Component Template is not ready: no GPU")


@pytest.mark.parametrize(
    ("components", "errors", "framework", "ready_reason"),
    [
        (
            {"RuntimeConfig": failing(MISSING_UP, "ConfigNotFound", "config 'x' not found", upstream=True)},
            [],
            {"ConfigValid": ("False", "ReferenceNotFound", "config 'x' not found")},
            "ReferenceNotFound",
        ),
        (
            {"Model": ok()},
            [(INVALID, "InvalidImageReference", "bad image"), (MISSING_UP, "ModelNotFound", "no model")],
            {"ConfigValid": ("False", "InvalidSpec", "bad image; no model")},  # InvalidSpec wins
            "InvalidSpec",
        ),
        (
            {"Model": ok()},
            [(AUTH, "Forbidden", "rbac")],
            {"AuthValid": ("False", "AuthError", "rbac")},
            "AuthError",
        ),
        (
            {},
            [(AUTH, "Unauthorized", "401"), (INVALID, "InvalidSpec", "422")],
            {"AuthValid": ("False", "AuthError", "401"), "ConfigValid": ("False", "InvalidSpec", "422")},
            "AuthError",  # auth before config
        ),
    ],
)
def test_blocking_errors_fail_the_root_and_stop_apply(components, errors, framework, ready_reason):
    d = derive(components, errors, now=NOW)
    assert (d.state, d.should_apply) == (State.FAILED, False)
    conditions = table(d)
    assert {
        k: v for k, v in conditions.items() if k in ("AuthValid", "ConfigValid", "DependenciesReachable")
    } == framework
    assert conditions["Ready"][:2] == ("False", ready_reason)


def test_missing_downstream_never_blocks():
    d = derive(
        {"Job": failing(Category.MISSING_DOWNSTREAM, "ResourceNotReady", "job missing", state=State.PROGRESSING)},
        now=NOW,
    )
    assert (d.state, d.should_apply) == (State.PROGRESSING, True)
    assert "ConfigValid" not in table(d)


def test_explicit_non_framework_errors_weigh_on_the_root():
    d = derive({"Model": ok()}, [(Category.MISSING_DOWNSTREAM, "NotFound", "gone")], now=NOW)
    assert d.state is State.PROGRESSING
    assert table(d)["Ready"] == ("False", "Progressing", "gone")
    d = derive({"Model": ok()}, [(Category.RESOURCE_EXHAUSTION, "QuotaExceeded", "quota")], now=NOW)
    assert d.state is State.FAILED
    assert table(d)["Ready"] == ("False", "QuotaExceeded", "quota")


def test_lazy_framework_conditions_recover_to_true():
    previous = [prev("AuthValid", "False", "AuthError"), prev("DependenciesReachable", "False", "InfrastructureError")]
    d = derive({"Model": ok()}, [], previous, now=NOW)
    assert table(d)["AuthValid"] == ("True", "AuthenticationValid", "Authentication is valid")
    assert table(d)["DependenciesReachable"] == ("True", "Reachable", "All dependencies are reachable")
    assert "ConfigValid" not in table(d)
    assert d.state is State.READY


REGISTRY_DOWN = failing(Category.UNKNOWN, "UnknownError", "registry 503", state=State.DEGRADED)


def test_first_infrastructure_error_is_within_grace():
    previous = [prev("ImageMetadataReady", "True", "ImageFound", "found"), prev("Ready", "True", "AllComponentsReady")]
    d = derive({"ImageMetadata": REGISTRY_DOWN}, [], previous, now=NOW)
    assert table(d)["ImageMetadataReady"] == ("True", "ImageFound", "found")  # kept
    assert table(d)["DependenciesReachable"] == ("False", "InfrastructureError", "registry 503")
    assert (d.state, d.grace_remaining) == (State.READY, 10.0)
    assert d.component_states == {"ImageMetadata": State.READY}


def test_grace_measured_from_dependencies_reachable_transition():
    previous = [
        prev("ImageMetadataReady", "True", "ImageFound"),
        prev("DependenciesReachable", "False", "InfrastructureError", ago=4),
    ]
    d = derive({"ImageMetadata": REGISTRY_DOWN}, [], previous, now=NOW)
    assert d.state is State.READY and d.grace_remaining == 6.0


def test_after_grace_the_component_and_root_degrade():
    previous = [
        prev("ImageMetadataReady", "True", "ImageFound"),
        prev("DependenciesReachable", "False", "InfrastructureError", ago=10),
    ]
    d = derive(
        {"ImageMetadata": REGISTRY_DOWN, "ServiceTemplates": progressing("AwaitingMetadata")}, [], previous, now=NOW
    )
    assert d.grace_remaining is None
    assert table(d)["ImageMetadataReady"] == ("False", "UnknownError", "registry 503")
    assert d.state is State.DEGRADED
    assert table(d)["Ready"] == ("False", "UnknownError", "Component ImageMetadata is not ready: registry 503")
    assert d.should_apply is True


def test_infra_since_overrides_previous_conditions():
    previous = [prev("ImageMetadataReady", "True", "ImageFound")]
    d = derive({"ImageMetadata": REGISTRY_DOWN}, [], previous, NOW - timedelta(seconds=30), now=NOW)
    assert d.state is State.DEGRADED


def test_grace_without_previous_condition_uses_current_health():
    d = derive({"ImageMetadata": REGISTRY_DOWN}, now=NOW)
    assert table(d)["ImageMetadataReady"][:2] == ("False", "UnknownError")
    assert d.state is State.DEGRADED  # the component itself says Degraded


@pytest.mark.parametrize(
    ("components", "ago", "state", "ready"),
    [
        # apply failure while a child is still coming up: Degraded only after the grace
        (
            {"Job": progressing("JobRunning")},
            0,
            State.PROGRESSING,
            ("False", "InfrastructureError", "apply: connection refused"),
        ),
        (
            {"Job": progressing("JobRunning")},
            15,
            State.DEGRADED,
            ("False", "InfrastructureError", "apply: connection refused"),
        ),
        # all components ready: root stays Ready (infra only degrades a not-ready root)
        ({"Job": ok()}, 15, State.READY, ("True", "AllComponentsReady", "All components are ready")),
        # already worse than Degraded: stays
        (
            {"Job": Health(State.FAILED, "JobFailed", "exit 1")},
            15,
            State.FAILED,
            ("False", "JobFailed", "Component Job is not ready: exit 1"),
        ),
    ],
)
def test_explicit_infrastructure_errors(components, ago, state, ready):
    previous = [prev("DependenciesReachable", "False", "InfrastructureError", ago=ago)] if ago else []
    d = derive(components, [(INFRA, "ConnectionRefused", "apply: connection refused")], previous, now=NOW)
    assert d.state is state
    assert table(d)["Ready"] == ready
    assert table(d)["DependenciesReachable"][:2] == ("False", "InfrastructureError")


def test_errors_may_be_objects_with_category_reason_message():
    issue = ErrorInfo(AUTH, "Forbidden", "rbac")  # a NamedTuple: attributes and indexing

    class Issue:
        category, reason, message = MISSING_UP, "ConfigNotFound", "no config"

    d = derive({}, [Issue()], now=NOW)
    assert table(d)["ConfigValid"] == ("False", "ReferenceNotFound", "no config")
    assert should_apply([issue]) is False
    assert requeue_after([Issue()]) is None


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        ([], True),
        ([(INFRA, "Timeout", "")], True),
        ([(Category.MISSING_DOWNSTREAM, "NotFound", "")], True),
        ([(Category.RESOURCE_EXHAUSTION, "PodOOMKilled", "")], True),
        ([(AUTH, "Forbidden", "")], False),
        ([(INVALID, "InvalidSpec", "")], False),
        ([(INFRA, "Timeout", ""), (MISSING_UP, "ReferenceNotFound", "")], False),
    ],
)
def test_should_apply(errors, expected):
    assert should_apply(errors) is expected


@pytest.mark.parametrize(
    ("errors", "kwargs", "expected"),
    [
        ([], {}, None),
        ([(AUTH, "Forbidden", "")], {}, None),  # permanent: wait for a change, no hot loop
        ([(INFRA, "Timeout", "")], {}, 5.0),
        ([(Category.UNKNOWN, "UnknownError", "")], {"retry": 3}, 40.0),
        ([(INFRA, "Timeout", "")], {"retry": 10}, 300.0),
        ([(INFRA, "Timeout", "")], {"retry": 3, "grace_remaining": 6.0}, 6.0),
        ([(INFRA, "Timeout", "")], {"grace_remaining": 9.0}, 5.0),
    ],
)
def test_requeue_after(errors, kwargs, expected):
    assert requeue_after(errors, **kwargs) == expected
