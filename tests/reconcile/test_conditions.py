from datetime import UTC, datetime, timedelta, timezone

import pytest

from aim_core.reconcile.conditions import Condition, find, format_time, merge_conditions, parse_time, to_k8s

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z"


def k8s(type_, status, reason, message="", when=T0, **extra):
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": when, **extra}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # new condition gets now
        ([], [Condition.true("ModelReady", "ModelResolved")], [k8s("ModelReady", "True", "ModelResolved", when=T1)]),
        # unchanged status and reason: time kept, message updated
        (
            [k8s("ModelReady", "False", "ModelNotReady", "old msg")],
            [Condition.false("ModelReady", "ModelNotReady", "new msg")],
            [k8s("ModelReady", "False", "ModelNotReady", "new msg")],
        ),
        # reason change alone is a transition
        (
            [k8s("ModelReady", "False", "ModelNotReady")],
            [Condition.false("ModelReady", "CreatingModel")],
            [k8s("ModelReady", "False", "CreatingModel", when=T1)],
        ),
        # status change is a transition
        (
            [k8s("ModelReady", "False", "ModelNotReady")],
            [Condition.true("ModelReady", "ModelNotReady")],
            [k8s("ModelReady", "True", "ModelNotReady", when=T1)],
        ),
        # conditions not in the new set are dropped (non-framework)
        ([k8s("DiscoveryJobReady", "False", "JobRunning")], [], []),
        # lazy framework: a True one is not born
        ([], [Condition.true("AuthValid", "AuthenticationValid")], []),
        # lazy framework: born False
        (
            [],
            [Condition.false("AuthValid", "AuthError", "401")],
            [k8s("AuthValid", "False", "AuthError", "401", when=T1)],
        ),
        # once present, a missing framework condition flips back to True and stays
        (
            [k8s("ConfigValid", "False", "InvalidSpec", "bad")],
            [],
            [k8s("ConfigValid", "True", "ConfigurationValid", "Configuration is valid", when=T1)],
        ),
        (
            [k8s("DependenciesReachable", "True", "Reachable", "fine")],
            [],
            [k8s("DependenciesReachable", "True", "Reachable", "fine")],
        ),
        (
            [k8s("DependenciesReachable", "False", "InfrastructureError")],
            [Condition.true("DependenciesReachable", "Reachable", "ok")],
            [k8s("DependenciesReachable", "True", "Reachable", "ok", when=T1)],
        ),
    ],
)
def test_merge_conditions(old, new, expected):
    assert merge_conditions(old, new, T1) == expected


def test_merge_orders_ready_first_then_by_type():
    new = [
        Condition.true("TemplateReady", "Resolved"),
        Condition.false("AuthValid", "AuthError"),
        Condition.true("Ready", "AllComponentsReady"),
        Condition.true("CacheReady", "CacheReady"),
    ]
    assert [c["type"] for c in merge_conditions([], new, T1)] == ["Ready", "AuthValid", "CacheReady", "TemplateReady"]


def test_observed_generation_is_taken_from_new_or_kept():
    old = [k8s("Ready", "True", "AllComponentsReady", observedGeneration=3)]
    assert merge_conditions(old, [Condition.true("Ready", "AllComponentsReady")], T1)[0]["observedGeneration"] == 3
    newer = Condition("Ready", "True", "AllComponentsReady", observed_generation=4)
    assert merge_conditions(old, [newer], T1)[0]["observedGeneration"] == 4
    assert "observedGeneration" not in merge_conditions([], [Condition.true("Ready", "X")], T1)[0]


def test_observed_generation_stamped_on_what_this_reconcile_set():
    old = [k8s("Ready", "True", "AllComponentsReady", observedGeneration=3), k8s("AuthValid", "False", "AuthError")]
    new = [
        Condition.true("Ready", "AllComponentsReady"),
        Condition("ModelReady", "True", "Ready", observed_generation=4),
    ]
    merged = {c["type"]: c for c in merge_conditions(old, new, T1, observed_generation=5)}
    assert merged["Ready"]["observedGeneration"] == 5
    assert merged["ModelReady"]["observedGeneration"] == 4  # its own value wins
    assert merged["AuthValid"] == k8s(
        "AuthValid", "True", "AuthenticationValid", "Authentication is valid", when=T1, observedGeneration=5
    )


def test_old_entry_without_time_gets_now():
    old = [{"type": "Ready", "status": "True", "reason": "AllComponentsReady"}]
    assert merge_conditions(old, [Condition.true("Ready", "AllComponentsReady")], T1)[0]["lastTransitionTime"] == T1


def test_condition_values():
    with pytest.raises(ValueError):
        Condition("Ready", "Maybe", "X")
    raw = k8s("Ready", "False", "Progressing", "m", observedGeneration=2)
    cond = Condition.from_k8s(raw)
    assert cond == Condition("Ready", "False", "Progressing", "m", T0, 2)
    assert cond.to_k8s() == raw
    assert to_k8s([cond, raw]) == [raw, raw]
    assert find([raw], "Ready") == cond
    assert find([raw], "Other") is None


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime(2026, 1, 1, 12, 30, 5, 999, tzinfo=UTC), "2026-01-01T12:30:05Z"),
        (datetime(2026, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=2))), "2026-01-01T10:00:00Z"),
        (datetime(2026, 1, 1), "2026-01-01T00:00:00Z"),  # naive is taken as UTC
    ],
)
def test_format_time(moment, text):
    assert format_time(moment) == text


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-01-01T00:00:05Z", datetime(2026, 1, 1, 0, 0, 5, tzinfo=UTC)),
        ("2026-01-01T02:00:00+02:00", datetime(2026, 1, 1, 0, 0, tzinfo=UTC)),
        ("2026-01-01T00:00:00.5Z", datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
        ("", None),
        ("yesterday", None),
    ],
)
def test_parse_time(text, moment):
    assert parse_time(text) == moment


def test_a_message_longer_than_the_crd_allows_is_cut_to_fit_and_says_so():
    from aim_core.reconcile.conditions import MAX_MESSAGE

    long = "x" * 70_000
    (cond,) = merge_conditions([], [Condition.false("RunsReady", "SweepFailed", long)], T1)
    assert len(cond["message"]) <= MAX_MESSAGE == 32768
    assert cond["message"].startswith("x" * 1000) and cond["message"].endswith("(cut: 70000 characters in all)")
    (short,) = merge_conditions([], [Condition.false("RunsReady", "SweepFailed", "fits")], T1)
    assert short["message"] == "fits"
