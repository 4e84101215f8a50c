"""Image references parse as `docker pull` reads them, and bad ones say what is wrong."""

import pytest

from aim_core import ImageReference, InvalidImageReference

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest", "canonical"),
    [
        ("ubuntu", "docker.io", "library/ubuntu", None, None, "docker.io/library/ubuntu"),
        ("ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", None, "docker.io/library/ubuntu:22.04"),
        (
            "amdenterpriseai/aim-llama:0.8.4",
            "docker.io",
            "amdenterpriseai/aim-llama",
            "0.8.4",
            None,
            "docker.io/amdenterpriseai/aim-llama:0.8.4",
        ),
        ("index.docker.io/org/x:1", "docker.io", "org/x", "1", None, "docker.io/org/x:1"),
        (
            "registry-1.docker.io/library/busybox",
            "docker.io",
            "library/busybox",
            None,
            None,
            "docker.io/library/busybox",
        ),
        ("docker.io/busybox", "docker.io", "library/busybox", None, None, "docker.io/library/busybox"),
        ("ghcr.io/org/team/model:v1.0", "ghcr.io", "org/team/model", "v1.0", None, "ghcr.io/org/team/model:v1.0"),
        (f"ghcr.io/org/model@{DIGEST}", "ghcr.io", "org/model", None, DIGEST, f"ghcr.io/org/model@{DIGEST}"),
        (f"quay.io/org/model:1.2@{DIGEST}", "quay.io", "org/model", "1.2", DIGEST, f"quay.io/org/model:1.2@{DIGEST}"),
        ("127.0.0.1:5000/a/b:c", "127.0.0.1:5000", "a/b", "c", None, "127.0.0.1:5000/a/b:c"),
        ("localhost/only", "localhost", "only", None, None, "localhost/only"),
        ("localhost:5000", "docker.io", "library/localhost", "5000", None, "docker.io/library/localhost:5000"),
        ("[::1]:5000/a:b", "[::1]:5000", "a", "b", None, "[::1]:5000/a:b"),
        (
            "Registry.Example.com/a_b/c.d__e-f---g:T_1",
            "registry.example.com",
            "a_b/c.d__e-f---g",
            "T_1",
            None,
            "registry.example.com/a_b/c.d__e-f---g:T_1",
        ),
    ],
)
def test_parse(text, registry, repository, tag, digest, canonical):
    ref = ImageReference.parse(text)
    assert (ref.registry, ref.repository, ref.tag, ref.digest) == (registry, repository, tag, digest)
    assert str(ref) == canonical
    assert ImageReference.parse(str(ref)) == ref


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("Ubuntu", "lower-case"),
        ("org//repo", "empty path component"),
        ("org/repo/", "empty path component"),
        ("org/../repo", "'..' path component"),
        ("org/repo:", "invalid tag"),
        ("org/repo:-bad", "invalid tag"),
        ("org/repo:" + "x" * 129, "invalid tag"),
        ("org/repo@sha256:abc", "malformed digest"),
        ("org/repo@sha256:" + "AB" * 32, "64 lower-case hex"),
        ("org/repo@", "malformed digest"),
        (" org/repo", "whitespace"),
        ("org/re\npo", "control character"),
        ("org/re\x00po", "control character"),
        ("-org/repo", "invalid path component"),
        ("my_host.example.com/a", "invalid registry host"),
        (":tag", "no repository"),
        ("a/" + "b" * 260, "longer than 255"),
    ],
)
def test_invalid_references_say_what_is_wrong(text, says):
    with pytest.raises(InvalidImageReference, match=says):
        ImageReference.parse(text)


def test_invalid_reference_is_a_value_error():
    assert issubclass(InvalidImageReference, ValueError)


@pytest.mark.parametrize(
    ("text", "familiar", "reference"),
    [
        ("ubuntu", "ubuntu", "latest"),
        ("docker.io/org/repo:1", "org/repo:1", "1"),
        (f"ghcr.io/org/repo:1@{DIGEST}", f"ghcr.io/org/repo:1@{DIGEST}", DIGEST),
    ],
)
def test_familiar_form_and_what_is_asked_for(text, familiar, reference):
    ref = ImageReference.parse(text)
    assert ref.familiar == familiar
    assert ref.reference == reference


@pytest.mark.parametrize(
    ("pattern", "repository", "matches"),
    [
        ("org/aim-*", "org/aim-llama", True),
        ("org/aim-*", "org/aim-", True),
        ("org/aim-*", "org/aim-x/nested", True),
        ("org/aim-*", "other/org/aim-x", False),
        ("org/*-instruct", "org/llama-3.1-8b-instruct", True),
        ("org/*-instruct", "org/llama-instruct-v2", False),
        ("org/exact", "org/exact", True),
        ("org/exact", "org/exactly", False),
        ("org/a.b", "org/aXb", False),
        ("*", "anything/at/all", True),
    ],
)
def test_repository_globs_are_anchored_and_literal_but_for_the_star(pattern, repository, matches):
    from aim_core.registry import repository_matches

    assert repository_matches(pattern, repository) is matches
