"""Semver constraints on tags (F78): which tags a ``versions`` list keeps."""

from __future__ import annotations

import pytest

from aim_core.modelsource.versions import ConstraintError, parse_constraints, parse_tag, tag_key

TAGS = [
    "0.7.9",
    "0.8.0-rc1",
    "0.8.0",
    "0.8.1-rc1",
    "0.8.4",
    "0.8.5",
    "v0.9.0",
    "0.9.1",
    "1.0.0-rc1",
    "1.0.0",
    "1.2.0",
    "1.2.7",
    "1.3.0-rc1",
    "1.3.0",
    "2.0.0",
    "latest",
    "dev",
    "0.9",
    "1",
    "main-abc123",
]


@pytest.mark.parametrize(
    ("versions", "kept"),
    [
        # The model-sources document's syntax list.
        ([">=1.0.0"], ["1.0.0", "1.2.0", "1.2.7", "1.3.0-rc1", "1.3.0", "2.0.0"]),
        (
            ["<2.0.0"],
            [
                "0.7.9",
                "0.8.0-rc1",
                "0.8.0",
                "0.8.1-rc1",
                "0.8.4",
                "0.8.5",
                "v0.9.0",
                "0.9.1",
                "1.0.0-rc1",
                "1.0.0",
                "1.2.0",
                "1.2.7",
                "1.3.0-rc1",
                "1.3.0",
            ],
        ),
        (["~1.2.0"], ["1.2.0", "1.2.7"]),  # patch updates only: 1.3.0-rc1 is not 1.2.x
        (["^1.0.0"], ["1.0.0", "1.2.0", "1.2.7", "1.3.0-rc1", "1.3.0"]),  # minor updates: 1.x.x
        (
            [">=0.8.1-rc1"],
            [
                "0.8.1-rc1",
                "0.8.4",
                "0.8.5",
                "v0.9.0",
                "0.9.1",
                "1.0.0-rc1",
                "1.0.0",
                "1.2.0",
                "1.2.7",
                "1.3.0-rc1",
                "1.3.0",
                "2.0.0",
            ],
        ),
        # Global example: ">=0.8.0" and "<1.0.0"; prereleases are ordinary versions (1.0.0-rc1 < 1.0.0).
        ([">=0.8.0", "<1.0.0"], ["0.8.0", "0.8.1-rc1", "0.8.4", "0.8.5", "v0.9.0", "0.9.1", "1.0.0-rc1"]),
        (
            [">=0.8.5"],
            ["0.8.5", "v0.9.0", "0.9.1", "1.0.0-rc1", "1.0.0", "1.2.0", "1.2.7", "1.3.0-rc1", "1.3.0", "2.0.0"],
        ),
        # X.Y is padded to X.Y.0 for comparisons.
        ([">=0.9", "<1.0"], ["v0.9.0", "0.9.1", "1.0.0-rc1"]),
        # Caret below 1.0 stays within the minor; 0.0.z is exact.
        (["^0.8.1"], ["0.8.4", "0.8.5"]),
        (["^0.0.3"], []),
        # Tilde with a partial version.
        (["~1"], ["1.0.0", "1.2.0", "1.2.7", "1.3.0-rc1", "1.3.0"]),
        # Wildcards and partial equality.
        (["1.2.x"], ["1.2.0", "1.2.7"]),
        (["1.2"], ["1.2.0", "1.2.7"]),
        (["=0.8.5"], ["0.8.5"]),
        (["!=0.8.5", ">=0.8.4", "<0.9.0"], ["0.8.4"]),
        # A leading v on the constraint is fine.
        (["v0.9.0"], ["v0.9.0"]),
        # Several constraints in one entry: comma or space is AND, || is OR, hyphen ranges.
        # (as with "<1.0.0" above, an upper bound admits the prereleases of that version)
        ([">= 1.2.0, < 1.3.0"], ["1.2.0", "1.2.7", "1.3.0-rc1"]),
        ([">=1.2.0 <1.3.0"], ["1.2.0", "1.2.7", "1.3.0-rc1"]),
        (["<0.8.0 || >=2.0.0"], ["0.7.9", "0.8.0-rc1", "2.0.0"]),
        (["1.2 - 1.3"], ["1.2.0", "1.2.7", "1.3.0-rc1", "1.3.0"]),
        (
            ["<=1.2"],
            [
                "0.7.9",
                "0.8.0-rc1",
                "0.8.0",
                "0.8.1-rc1",
                "0.8.4",
                "0.8.5",
                "v0.9.0",
                "0.9.1",
                "1.0.0-rc1",
                "1.0.0",
                "1.2.0",
                "1.2.7",
            ],
        ),
        ([">1.2"], ["1.3.0-rc1", "1.3.0", "2.0.0"]),
    ],
)
def test_constraints_keep_exactly_these_tags(versions, kept):
    assert parse_constraints(versions).filter(TAGS) == kept


def test_non_semver_tags_are_skipped_whenever_constraints_exist():
    kept = parse_constraints([">=0.0.0"]).filter(TAGS)

    for tag in ("latest", "dev", "0.9", "1", "main-abc123"):
        assert tag not in kept
    assert "v0.9.0" in kept  # a leading v is dropped before parsing


def test_without_constraints_every_tag_matches_including_latest():
    assert parse_constraints([]).filter(TAGS) == TAGS
    assert parse_constraints(None).allows("latest")


def test_caret_on_zero_major_and_minor():
    assert parse_constraints(["^0.8.1"]).filter(["0.8.0", "0.8.1", "0.8.9", "0.9.0", "1.0.0"]) == ["0.8.1", "0.8.9"]
    assert parse_constraints(["^0.0.3"]).filter(["0.0.2", "0.0.3", "0.0.4", "0.1.0"]) == ["0.0.3"]


def test_tags_parse_as_strict_semver_after_dropping_a_leading_v():
    assert str(parse_tag("v1.2.3")) == "1.2.3"
    assert str(parse_tag("0.8.1-rc1")) == "0.8.1-rc1"
    assert parse_tag("1.2") is None
    assert parse_tag("V1.2.3") is None
    assert parse_tag("latest") is None


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        ("abc", "is not a version"),
        (">=", "needs a version"),
        ("1.x.2", "cannot follow a wildcard"),
        ("1.2-rc1", "needs a full version"),
        ("", "empty"),
        ("  ", "empty"),
        (">=1.0.0 <", "needs a version"),
        ("~>", "needs a version"),
        ("1.0.0 ||", "empty"),
    ],
)
def test_unparsable_constraints_are_errors_naming_the_constraint(bad, says):
    with pytest.raises(ConstraintError) as err:
        parse_constraints([">=0.1.0", bad])

    assert says in str(err.value)
    assert repr(bad) in str(err.value)


CORPUS = [
    "0.0.0",
    "0.0.1",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0-rc1",
    "1.0.0-0",
    "1.0.0-0.3.7",
    "1.0.0-x.7.z.92",
    "1.0.0",
    "1.0.0+b5",
    "1.0.0-rc1+b5",
    "2.0.0",
    "10.20.30",
    "1.10.0",
    "1.9.0",
    "v1.2.3",
    "01.2.3",
    "1.02.3",
    "1.2.3-01",
    "1.2",
    "1",
    "latest",
    "1.2.3-",
    "1.2.3+",
    "1.2.3-rc..1",
    "1.2.3.4",
    "",
    "v",
    "1.2.3-rc-1",
    "1.2.3--",
    "99999.0.0",
]


@pytest.mark.parametrize("tag", CORPUS)
def test_tags_are_semver_exactly_when_the_semver_package_says_so(tag):
    assert (tag_key(tag) is None) == (parse_tag(tag) is None)


def test_tag_order_is_the_semver_package_order():
    import functools

    versions = [t for t in CORPUS if parse_tag(t) is not None]
    by_package = sorted(versions, key=functools.cmp_to_key(lambda a, b: parse_tag(a).compare(parse_tag(b))))
    by_key = sorted(versions, key=tag_key)

    assert [tag_key(t) for t in by_key] == [tag_key(t) for t in by_package]
