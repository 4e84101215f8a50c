"""Reading ``spec.images`` and ``spec.filters`` (F78, D41): registry, repository, tag, exclusions, constraints."""

from __future__ import annotations

import pytest

from aim_core.modelsource.selectors import Match, parse_selectors


def one(spec):
    [selector] = parse_selectors(spec)
    return selector


@pytest.mark.parametrize(
    ("spec", "registry", "repository", "tag", "strategy"),
    [
        ({"images": ["org/repo:1.0.0"]}, "docker.io", "org/repo", "1.0.0", "explicit"),
        ({"images": ["org/repo"]}, "docker.io", "org/repo", None, "tags"),
        ({"images": ["ghcr.io/org/repo:1.0.0"]}, "ghcr.io", "org/repo", "1.0.0", "explicit"),
        ({"registry": "ghcr.io", "images": ["org/repo"]}, "ghcr.io", "org/repo", None, "tags"),
        ({"registry": "ghcr.io", "images": ["quay.io/org/repo"]}, "quay.io", "org/repo", None, "tags"),
        ({"filters": [{"image": "org/repo*"}]}, "docker.io", "org/repo*", None, "repositories"),
        ({"filters": [{"image": "ghcr.io/org/aim-*"}]}, "ghcr.io", "org/aim-*", None, "repositories"),
        ({"filters": [{"image": "localhost:5000/org/repo:v1"}]}, "localhost:5000", "org/repo", "v1", "explicit"),
        ({"filters": [{"image": "127.0.0.1:5000/team/sub/repo"}]}, "127.0.0.1:5000", "team/sub/repo", None, "tags"),
        ({"filters": [{"image": "localhost/org/repo"}]}, "localhost", "org/repo", None, "tags"),
        ({"images": ["ubuntu:22.04"]}, "docker.io", "library/ubuntu", "22.04", "explicit"),
        ({"registry": "index.docker.io", "images": ["org/repo"]}, "docker.io", "org/repo", None, "tags"),
        ({"images": ["registry-1.docker.io/org/repo:1"]}, "docker.io", "org/repo", "1", "explicit"),
        ({"filters": [{"image": "org/repo*:1.0.0"}]}, "docker.io", "org/repo*", "1.0.0", "repositories"),
    ],
)
def test_entry_forms(spec, registry, repository, tag, strategy):
    selector = one(spec)

    assert selector.problem is None
    assert (selector.registry, selector.repository, selector.tag, selector.strategy) == (
        registry,
        repository,
        tag,
        strategy,
    )


def test_filter_versions_win_over_global_and_explicit_tags_ignore_both():
    a, b, c = parse_selectors(
        {
            "versions": [">=1.0.0"],
            "filters": [{"image": "org/a", "versions": ["<1.0.0"]}, {"image": "org/b"}, {"image": "org/c:0.1.0"}],
        }
    )

    assert a.constraints.texts == ("<1.0.0",)
    assert b.constraints.texts == (">=1.0.0",)
    assert not c.constraints
    assert c.select_tags("org/c", ["0.1.0", "1.0.0"]) == [Match("docker.io", "org/c", "0.1.0")]


def test_images_use_the_global_versions():
    [selector] = parse_selectors({"images": ["org/a"], "versions": ["~1.2.0"]})

    assert [m.tag for m in selector.select_tags("org/a", ["1.2.0", "1.2.9", "1.3.0", "latest"])] == ["1.2.0", "1.2.9"]


@pytest.mark.parametrize(
    ("pattern", "repository", "matches"),
    [
        ("org/aim-*", "org/aim-llama", True),
        ("org/aim-*", "org/aim-", True),
        ("org/aim-*", "org/base", False),
        ("org/aim-*", "other/aim-llama", False),  # anchored at the start
        ("org/*", "org/team/deep", True),  # * crosses /
        ("*llama*", "org/aim-llama-70b", True),
        ("org/aim-*-it", "org/aim-gemma-it", True),
        ("org/aim-*-it", "org/aim-gemma-it-x", False),  # anchored at the end
        ("org/aim.x*", "org/aimyx", False),  # . is literal
    ],
)
def test_wildcards_match_whole_repository_names(pattern, repository, matches):
    assert one({"filters": [{"image": pattern}]}).matches_repository(repository) is matches


def test_exclusions_are_exact_repository_names_without_registry():
    selector = one(
        {
            "filters": [
                {
                    "image": "ghcr.io/silogen/aim-*",
                    "exclude": ["silogen/aim-base", "ghcr.io/silogen/aim-old", "silogen/aim"],
                }
            ]
        }
    )

    assert not selector.matches_repository("silogen/aim-base")
    assert not selector.matches_repository("silogen/aim-old")  # a registry prefix is dropped
    assert selector.matches_repository("silogen/aim-base-2")  # exact, not a prefix
    assert selector.matches_repository("silogen/aim-llama")


def test_an_excluded_explicit_image_matches_nothing():
    selector = one({"filters": [{"image": "org/repo:1.0", "exclude": ["org/repo"]}]})

    assert selector.explicit_match() is None


@pytest.mark.parametrize(
    ("spec", "reason", "says"),
    [
        ({"images": ["Org/Repo:1.0"]}, "InvalidImage", "must be lower-case"),
        ({"images": ["org/repo:"]}, "InvalidImage", "not a valid tag"),
        ({"images": ["org//repo"]}, "InvalidImage", "is not a repository name"),
        ({"images": ["org/repo:1.*"]}, "InvalidImage", "wildcards in tags"),
        ({"images": ["org/repo@sha256:" + "a" * 64]}, "InvalidImage", "pins a digest"),
        ({"images": [""]}, "InvalidImage", "empty image"),
        ({"registry": "https://ghcr.io", "images": ["org/repo"]}, "InvalidRegistry", "write the host only"),
        ({"registry": "ghcr io", "images": ["org/repo"]}, "InvalidRegistry", "is not a registry host"),
        ({"images": ["org/repo"], "versions": [">=1.0", "newest"]}, "InvalidVersionConstraint", "spec.versions"),
        (
            {"filters": [{"image": "org/repo", "versions": ["~>"]}]},
            "InvalidVersionConstraint",
            "spec.filters[0].versions",
        ),
    ],
)
def test_unusable_entries_carry_a_problem_naming_the_field(spec, reason, says):
    selector = one(spec)

    assert selector.problem is not None
    assert selector.problem.reason == reason
    assert says in selector.problem.message


def test_a_bad_global_constraint_does_not_touch_entries_with_explicit_tags():
    a, b = parse_selectors({"images": ["org/a:1.0.0", "org/b"], "versions": ["newest"]})

    assert a.problem is None
    assert b.problem is not None and b.problem.reason == "InvalidVersionConstraint"


def test_a_host_in_an_entry_escapes_a_bad_spec_registry():
    a, b = parse_selectors({"registry": "https://bad", "images": ["ghcr.io/org/a:1", "org/b:1"]})

    assert a.problem is None and a.registry == "ghcr.io"
    assert b.problem is not None and b.problem.reason == "InvalidRegistry"


def test_match_images_drop_only_docker_hub():
    assert Match("docker.io", "org/a", "1").image == "org/a:1"
    assert Match("ghcr.io", "org/a", "1").image == "ghcr.io/org/a:1"
    assert Match("127.0.0.1:5000", "org/a", "1").image == "127.0.0.1:5000/org/a:1"
