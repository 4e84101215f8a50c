"""Credentials come from the pull secret entry for the image's host, as the kubelet picks them."""

import base64
import json

import pytest

from aim_core import InvalidPullSecret, RegistryCredentials, credentials_for


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def dockerconfig(name: str, auths: dict, *, key: str = ".dockerconfigjson", wrap: bool = True) -> dict:
    body = {"auths": auths} if wrap else auths
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "team"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {key: b64(json.dumps(body))},
    }


def test_username_and_password_for_the_matching_host():
    secret = dockerconfig("pull", {"ghcr.io": {"username": "u", "password": "p"}, "quay.io": {"auth": b64("q:r")}})
    assert credentials_for("ghcr.io", [secret]) == RegistryCredentials(username="u", password="p")
    assert credentials_for("quay.io", [secret]) == RegistryCredentials(username="q", password="r")
    assert credentials_for("registry.example.com", [secret]) is None


def test_auth_field_splits_at_the_first_colon():
    secret = dockerconfig("pull", {"r.example.com": {"auth": b64("user:pa:ss")}})
    assert credentials_for("r.example.com", [secret]) == RegistryCredentials(username="user", password="pa:ss")


@pytest.mark.parametrize("key", ["https://index.docker.io/v1/", "registry-1.docker.io", "docker.io", "index.docker.io"])
def test_docker_hub_aliases(key):
    secret = dockerconfig("hub", {key: {"auth": b64("me:tok")}})
    assert credentials_for("docker.io", [secret]) == RegistryCredentials(username="me", password="tok")
    assert credentials_for("registry-1.docker.io", [secret]) == RegistryCredentials(username="me", password="tok")


def test_keys_with_scheme_path_and_port_match_by_host_and_port():
    secret = dockerconfig("pull", {"http://127.0.0.1:5000/v2/": {"auth": b64("a:b")}})
    assert credentials_for("127.0.0.1:5000", [secret]) == RegistryCredentials(username="a", password="b")
    assert credentials_for("127.0.0.1:5001", [secret]) is None


def test_first_secret_with_an_entry_wins():
    first = dockerconfig("first", {"other.io": {"auth": b64("x:y")}})
    second = dockerconfig("second", {"ghcr.io": {"auth": b64("s:2")}})
    third = dockerconfig("third", {"ghcr.io": {"auth": b64("t:3")}})
    assert credentials_for("ghcr.io", [first, second, third]) == RegistryCredentials(username="s", password="2")


def test_legacy_dockercfg_and_registry_token():
    legacy = dockerconfig("old", {"quay.io": {"auth": b64("l:m")}}, key=".dockercfg", wrap=False)
    token = dockerconfig("tok", {"ghcr.io": {"registrytoken": "bearer-value"}})
    assert credentials_for("quay.io", [legacy]) == RegistryCredentials(username="l", password="m")
    assert credentials_for("ghcr.io", [token]) == RegistryCredentials(token="bearer-value")


def test_string_data_is_read_too():
    secret = {
        "metadata": {"name": "s"},
        "stringData": {".dockerconfigjson": json.dumps({"auths": {"a.io": {"auth": b64("u:p")}}})},
    }
    assert credentials_for("a.io", [secret]) == RegistryCredentials(username="u", password="p")


@pytest.mark.parametrize(
    ("secret", "says"),
    [
        (
            {"metadata": {"name": "s", "namespace": "team"}, "data": {"token": b64("x")}},
            "team/s has no .dockerconfigjson",
        ),
        ({"metadata": {"name": "s"}, "data": {".dockerconfigjson": "%%%"}}, "not valid base64"),
        ({"metadata": {"name": "s"}, "data": {".dockerconfigjson": b64("{not json")}}, "not valid JSON"),
        ({"metadata": {"name": "s"}, "data": {".dockerconfigjson": b64("[1]")}}, "not a JSON object"),
        (
            {"metadata": {"name": "s"}, "data": {".dockerconfigjson": b64('{"auths": []}')}},
            "'auths' is not a JSON object",
        ),
    ],
)
def test_malformed_secrets_name_the_secret(secret, says):
    with pytest.raises(InvalidPullSecret, match=says):
        credentials_for("ghcr.io", [secret])


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ({"auth": "!!!"}, "not base64"),
        ({"auth": b64("no-colon-here")}, "not base64 of 'username:password'"),
        ({"email": "a@b"}, "neither username/password"),
        ("a string", "not a JSON object"),
    ],
)
def test_unusable_entries_are_refused_without_echoing_values(entry, says):
    secret = dockerconfig("pull", {"ghcr.io": entry})
    with pytest.raises(InvalidPullSecret, match=says) as info:
        credentials_for("ghcr.io", [secret])
    assert "no-colon-here" not in str(info.value)
    assert "team/pull" in str(info.value)


def test_invalid_pull_secret_is_a_value_error():
    assert issubclass(InvalidPullSecret, ValueError)


def test_the_repr_of_credentials_hides_the_password_and_token():
    shown = repr(RegistryCredentials(username="robot", password="s3cret-pass")) + repr(
        RegistryCredentials(token="tok-123")
    )
    assert "robot" in shown and "s3cret-pass" not in shown and "tok-123" not in shown
    assert repr(RegistryCredentials()) == "RegistryCredentials(username=None, password=None, token=None)"


def test_the_fingerprint_tells_every_part_of_the_credentials_apart():
    from aim_core import credentials_fingerprint

    variants = [
        None,
        RegistryCredentials(username="u", password="p"),
        RegistryCredentials(username="u", password="q"),
        RegistryCredentials(username="v", password="p"),
        RegistryCredentials(token="p"),
    ]
    prints = [credentials_fingerprint(c) for c in variants]
    assert len(set(prints)) == len(variants) and prints[0] == ""
    assert all(len(p) == 64 for p in prints[1:])  # a sha256, not the secret
    assert credentials_fingerprint(RegistryCredentials(username="u", password="p")) == prints[1]
