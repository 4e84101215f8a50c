import pytest

from aim_core.reconcile.labels import (
    PAUSED_ANNOTATION,
    controller_labels,
    glob_match,
    glob_problem,
    is_paused,
    propagate_labels,
)

# Cases from Go's path/filepath match tests; every malformed pattern gives False.
GO_CASES = [
    ("abc", "abc", True),
    ("*", "abc", True),
    ("*c", "abc", True),
    ("a*", "a", True),
    ("a*", "abc", True),
    ("a*", "ab/c", False),
    ("a*/b", "abc/b", True),
    ("a*/b", "a/c/b", False),
    ("a*b*c*d*e*/f", "axbxcxdxe/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False),
    ("a*b?c*x", "abxbbxdbxebxczzx", True),
    ("a*b?c*x", "abxbbxdbxebxczzy", False),
    ("ab[c]", "abc", True),
    ("ab[b-d]", "abc", True),
    ("ab[e-g]", "abc", False),
    ("ab[^c]", "abc", False),
    ("ab[^b-d]", "abc", False),
    ("ab[^e-g]", "abc", True),
    ("a\\*b", "a*b", True),
    ("a\\*b", "ab", False),
    ("a?b", "a☺b", True),
    ("a[^a]b", "a☺b", True),
    ("a???b", "a☺b", False),
    ("a[^a][^a][^a]b", "a☺b", False),
    ("[a-ζ]*", "α", True),
    ("*[a-ζ]", "A", False),
    ("a?b", "a/b", False),
    ("a*b", "a/b", False),
    ("[\\]a]", "]", True),
    ("[\\-]", "-", True),
    ("[x\\-]", "x", True),
    ("[x\\-]", "-", True),
    ("[x\\-]", "z", False),
    ("[\\-x]", "x", True),
    ("[\\-x]", "-", True),
    ("[\\-x]", "a", False),
    ("*x", "xxx", True),
    # malformed
    ("[]a]", "]", False),
    ("[-]", "-", False),
    ("[x-]", "x", False),
    ("[-x]", "x", False),
    ("\\", "a", False),
    ("[a-b-c]", "a", False),
    ("[", "a", False),
    ("[^", "a", False),
    ("[^bc", "a", False),
    ("a[", "a", False),
    ("a[", "ab", False),
    ("a/b[", "x", False),
    ("a*[", "abc", False),
]


@pytest.mark.parametrize(("pattern", "name", "expected"), GO_CASES)
def test_glob_match_like_go(pattern, name, expected):
    assert glob_match(pattern, name) is expected


@pytest.mark.parametrize(("pattern", "name", "expected"), GO_CASES)
def test_glob_problem_flags_exactly_the_malformed_patterns(pattern, name, expected):
    malformed = GO_CASES.index((pattern, name, expected)) >= GO_CASES.index(("[]a]", "]", False))
    problem = glob_problem(pattern)
    assert (problem is not None) is malformed
    if malformed:
        assert repr(pattern) in problem


@pytest.mark.parametrize("pattern", ["*", "**", "team.example.com/*", "[a-z]*", "a\\*b", ""])
def test_glob_problem_accepts_valid_patterns(pattern):
    assert glob_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "key", "expected"),
    [
        ("team.example.com/*", "team.example.com/owner", True),
        ("*", "team.example.com/owner", False),  # a bare * does not cross '/'
        ("*", "team", True),
        ("*/owner", "team.example.com/owner", True),
        ("team.example.com/*", "team.example.com/a/b", False),
        ("cost-center", "cost-center", True),
        ("cost-*", "cost-center", True),
    ],
)
def test_glob_match_on_label_keys(pattern, key, expected):
    assert glob_match(pattern, key) is expected


PARENT = {
    "aim.eai.amd.com/service.name": "svc",
    "team.example.com/owner": "alice",
    "cost-center": "42",
    "app": "demo",
}


@pytest.mark.parametrize(
    ("child", "enabled", "patterns", "expected"),
    [
        ({}, False, ["*"], {"aim.eai.amd.com/service.name": "svc"}),
        (
            {},
            True,
            ["team.example.com/*", "cost-*"],
            {"aim.eai.amd.com/service.name": "svc", "team.example.com/owner": "alice", "cost-center": "42"},
        ),
        ({}, True, ["*"], {"aim.eai.amd.com/service.name": "svc", "cost-center": "42", "app": "demo"}),
        ({}, True, [], {"aim.eai.amd.com/service.name": "svc"}),
        ({}, True, ["[bad"], {"aim.eai.amd.com/service.name": "svc"}),
        (
            {"aim.eai.amd.com/service.name": "own", "app": "mine"},
            True,
            ["*"],
            {"aim.eai.amd.com/service.name": "own", "app": "mine", "cost-center": "42"},
        ),
    ],
)
def test_propagate_labels(child, enabled, patterns, expected):
    assert propagate_labels(PARENT, child, enabled, patterns) == expected


def test_propagate_labels_handles_missing_maps():
    assert propagate_labels(None, None, True, ["*"]) == {}


@pytest.mark.parametrize(
    ("controller", "parent", "child", "expected"),
    [
        (
            "service",
            "my-svc",
            {},
            {"app.kubernetes.io/managed-by": "aim-service-controller", "aim.eai.amd.com/service.name": "my-svc"},
        ),
        (
            "template-cache",
            "cache-1",
            {"app.kubernetes.io/managed-by": "aim-engine"},
            {"app.kubernetes.io/managed-by": "aim-engine", "aim.eai.amd.com/template-cache.name": "cache-1"},
        ),
        (
            "model",
            "m",
            {"aim.eai.amd.com/model.name": "kept"},
            {"app.kubernetes.io/managed-by": "aim-model-controller", "aim.eai.amd.com/model.name": "kept"},
        ),
        (
            "service",
            "s" * 70,
            {},
            {"app.kubernetes.io/managed-by": "aim-service-controller", "aim.eai.amd.com/service.name": "s" * 63},
        ),
    ],
)
def test_controller_labels(controller, parent, child, expected):
    assert controller_labels(controller, parent, child) == expected


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        ({"annotations": {PAUSED_ANNOTATION: "true"}}, True),
        ({"annotations": {PAUSED_ANNOTATION: "True"}}, False),
        ({"annotations": {PAUSED_ANNOTATION: "yes"}}, False),
        ({"annotations": None}, False),
        ({}, False),
        (None, False),
    ],
)
def test_is_paused(metadata, expected):
    assert is_paused(metadata) is expected
