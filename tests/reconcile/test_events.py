import pytest

from aim_core.reconcile.conditions import Condition
from aim_core.reconcile.events import EventSpec, plan_events
from aim_core.reconcile.health import Health, State


def old(type_, status, reason, message=""):
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "t"}


T, F = Condition.true, Condition.false


@pytest.mark.parametrize(
    ("before", "after", "states", "expected"),
    [
        # new condition: Normal, default message
        (
            [],
            [T("ModelReady", "ModelResolved")],
            {"Model": State.READY},
            [EventSpec("Normal", "ModelResolved", "Model is ready: ModelResolved", "ModelReady")],
        ),
        # unchanged, healthy: silent
        (
            [old("ModelReady", "True", "ModelResolved")],
            [T("ModelReady", "ModelResolved", "new msg")],
            {"Model": State.READY},
            [],
        ),
        # transition of a progressing component: Normal with the condition message
        (
            [old("PodsReady", "False", "PodsPending")],
            [F("PodsReady", "PodsStarting", "1/2 started")],
            {"Pods": State.PROGRESSING},
            [EventSpec("Normal", "PodsStarting", "1/2 started", "PodsReady")],
        ),
        # component in an error state: Warning every reconcile, even unchanged
        (
            [old("JobReady", "False", "JobFailed", "exit 1")],
            [F("JobReady", "JobFailed", "exit 1")],
            {"Job": State.FAILED},
            [EventSpec("Warning", "JobFailed", "exit 1", "JobReady", recurring=True)],
        ),
        (
            [],
            [F("CacheReady", "CacheLost")],
            {"Cache": Health(State.DEGRADED, "CacheLost")},
            [EventSpec("Warning", "CacheLost", "Cache is not ready: CacheLost", "CacheReady", recurring=True)],
        ),
        (
            [old("TemplateReady", "False", "GPUNotAvailable")],
            [F("TemplateReady", "GPUNotAvailable", "no GPU")],
            {"Template": State.NOT_AVAILABLE},
            [EventSpec("Warning", "GPUNotAvailable", "no GPU", "TemplateReady", recurring=True)],
        ),
        # framework conditions: Warning while False, Normal when they flip back
        (
            [old("DependenciesReachable", "False", "InfrastructureError", "refused")],
            [F("DependenciesReachable", "InfrastructureError", "refused")],
            {},
            [EventSpec("Warning", "InfrastructureError", "refused", "DependenciesReachable", recurring=True)],
        ),
        (
            [old("AuthValid", "False", "AuthError")],
            [T("AuthValid", "AuthenticationValid", "Authentication is valid")],
            {},
            [EventSpec("Normal", "AuthenticationValid", "Authentication is valid", "AuthValid")],
        ),
        # Ready transitions are Normal, even to False
        (
            [old("Ready", "True", "AllComponentsReady")],
            [F("Ready", "Progressing")],
            {},
            [EventSpec("Normal", "Progressing", "Resource is not ready: Progressing", "Ready")],
        ),
        # a reason change is a transition
        (
            [old("ModelReady", "False", "CreatingModel")],
            [F("ModelReady", "ModelNotReady", "m")],
            {"Model": State.PENDING},
            [EventSpec("Normal", "ModelNotReady", "m", "ModelReady")],
        ),
        # non-component condition types: default message uses the whole type
        (
            [],
            [T("Discovered", "InlineModelSources")],
            {},
            [EventSpec("Normal", "InlineModelSources", "Discovered is ready: InlineModelSources", "Discovered")],
        ),
    ],
)
def test_plan_events(before, after, states, expected):
    assert plan_events(before, after, states) == expected


def test_warn_on_transition_is_one_off():
    before = [old("DownloadComplete", "True", "Downloading")]
    failed = [F("DownloadComplete", "VerificationFailed", "checksum")]
    assert plan_events(before, failed, warn_on_transition={"DownloadComplete"}) == [
        EventSpec("Warning", "VerificationFailed", "checksum", "DownloadComplete")
    ]
    again = [old("DownloadComplete", "False", "VerificationFailed", "checksum")]
    assert plan_events(again, failed, warn_on_transition={"DownloadComplete"}) == []


def test_events_keep_condition_order_and_accept_dicts():
    after = [old("ModelReady", "True", "ModelResolved", "ok"), old("Ready", "True", "AllComponentsReady", "all")]
    assert [e.condition for e in plan_events([], after)] == ["ModelReady", "Ready"]


def test_conditions_appearing_together_make_one_summary_event_and_later_transitions_their_own():
    from aim_core.reconcile.events import plan_events, summarize_first_appearance

    new = [
        {
            "type": "Ready",
            "status": "False",
            "reason": "Progressing",
            "message": "Component InferenceService is not ready",
        },
        {"type": "ModelReady", "status": "True", "reason": "ModelResolved", "message": "model m is Ready"},
        {"type": "TemplateReady", "status": "True", "reason": "Resolved", "message": "template t"},
    ]
    events = summarize_first_appearance([], plan_events([], new))
    assert len(events) == 1
    assert events[0].type == "Normal" and events[0].reason == "Progressing"
    assert "ModelReady ModelResolved" in events[0].message and "TemplateReady Resolved" in events[0].message

    later = [dict(new[0], status="True", reason="AllComponentsReady", message="All components are ready"), *new[1:]]
    events = summarize_first_appearance(new, plan_events(new, later))
    assert [(e.type, e.reason) for e in events] == [("Normal", "AllComponentsReady")]


def test_a_change_of_state_is_one_event_listing_the_component_transitions_that_made_it():
    from aim_core.reconcile.events import plan_events, summarize

    starting = [
        old("Ready", "False", "Progressing", "Component InferenceService is not ready"),
        old("InferenceServiceReady", "False", "Starting", "waiting"),
        old("PodsReady", "False", "PodsStarting", "0/1 ready"),
        old("ModelReady", "True", "ModelResolved", "model m is Ready"),
    ]
    running = [
        old("Ready", "True", "AllComponentsReady", "All components are ready"),
        old("InferenceServiceReady", "True", "Ready", "ready"),
        old("PodsReady", "True", "PodsReady", "1/1 ready"),
        starting[3],
    ]
    events = summarize(starting, plan_events(starting, running), fold_state_change=True)
    assert len(summarize(starting, plan_events(starting, running))) == 3  # other kinds: one per transition
    assert [(e.type, e.reason) for e in events] == [("Normal", "AllComponentsReady")]
    assert "InferenceServiceReady Ready" in events[0].message and "PodsReady PodsReady" in events[0].message

    # a component's own transition, the state unchanged: its own event, as before
    pods_only = [running[0], running[1], old("PodsReady", "False", "PodsStarting", "0/1 ready"), starting[3]]
    events = summarize(running, plan_events(running, pods_only), fold_state_change=True)
    assert [(e.type, e.reason) for e in events] == [("Normal", "PodsStarting")]


def test_warnings_are_not_folded_into_a_change_of_state():
    from aim_core.reconcile.events import plan_events, summarize

    before = [old("Ready", "True", "AllComponentsReady", "ok"), old("PodsReady", "True", "PodsReady", "ok")]
    after = [old("Ready", "False", "PodsFailed", "pods fail"), old("PodsReady", "False", "CrashLoop", "crashing")]
    events = summarize(before, plan_events(before, after, {"Pods": State.FAILED}), fold_state_change=True)
    assert [(e.type, e.reason) for e in events] == [("Normal", "PodsFailed"), ("Warning", "CrashLoop")]
