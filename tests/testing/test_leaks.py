"""The secret scanner of the leak tests finds a planted secret in every form it looks for.

Without this, the leak tests (tests/wire/test_secrets_wire.py, tests/downloader/test_secrets.py)
could pass because the scanner finds nothing at all.
"""

from __future__ import annotations

import base64
import json
import logging

import pytest

from aim_testing.leaks import SecretScanner, base64_cores

USER, PASSWORD = "alice", "pw-3f9c1d0a77e2"
TOKEN = "hf_TokenThatMustNotLeak12345"


def scanner() -> SecretScanner:
    return SecretScanner().add_login("registry", USER, PASSWORD).add("hf token", TOKEN)


def dockerconfigjson(host: str = "127.0.0.1:5000") -> str:
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    config = {"auths": {host: {"username": USER, "password": PASSWORD, "auth": auth}}}
    return base64.b64encode(json.dumps(config).encode()).decode()


@pytest.mark.parametrize(
    "text",
    [
        f"pull failed for alice with {PASSWORD}",  # plain
        f'{{"message": "bad \\"{PASSWORD}\\""}}',  # inside JSON
        f"GET /v2/?password={PASSWORD}",  # percent-encoding of this one is itself
        f"Authorization: Basic {base64.b64encode(f'{USER}:{PASSWORD}'.encode()).decode()}",
        f"data: {dockerconfigjson()}",  # the whole pull secret, base64 of JSON holding it
        f"data: {dockerconfigjson('registry.example.com:443')}",  # another alignment
        f"token={base64.urlsafe_b64encode(b'x' + TOKEN.encode()).decode()}",  # url-safe, offset 1
    ],
)
def test_a_planted_secret_is_found_in_every_form(text):
    leaks = scanner().scan_text("a log", text)
    assert leaks, text
    assert all(PASSWORD not in str(leak) and TOKEN not in str(leak) for leak in leaks)


def test_clean_text_has_no_leaks():
    text = "pull secret ml-team/regcred was refused by 127.0.0.1:5000 (401 Unauthorized); check the password"
    assert scanner().scan_text("a log", text + base64.b64encode(text.encode()).decode()) == []


def test_base64_cores_are_found_at_every_offset():
    secret = b"sekrit-value-42"
    cores = base64_cores(secret)
    for pad in (b"", b"a", b"ab", b"abc", b"abcd"):
        encoded = base64.b64encode(pad + secret + b"tail").decode()
        assert any(core in encoded for form, core in cores.items() if form.startswith("base64@")), pad


def test_short_secrets_are_refused():
    with pytest.raises(ValueError, match="too short"):
        SecretScanner().add("pin", "1234")


def test_the_emulator_scan_finds_status_events_and_request_bodies_but_skips_secrets(kube):
    found = scanner()
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "regcred", "namespace": "ns"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": dockerconfigjson()},
        }
    )
    assert found.scan_emulator(kube.emulator) == []
    kube.put_object(
        {
            "apiVersion": "aim.eai.amd.com/v1alpha1",
            "kind": "AIMModel",
            "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"image": "x/y:1"},
            "status": {
                "conditions": [
                    {
                        "type": "AuthValid",
                        "status": "False",
                        "reason": "AuthFailed",
                        "message": f"denied for {USER}:{PASSWORD}",
                    }
                ]
            },
        }
    )
    kube.put_object(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "e1", "namespace": "ns"},
            "involvedObject": {"kind": "AIMModel", "name": "m", "namespace": "ns"},
            "reason": "Failed",
            "message": f"token {TOKEN} refused",
        }
    )
    leaks = found.scan_emulator(kube.emulator)
    assert {leak.secret for leak in leaks} >= {"registry basic auth", "registry password", "hf token"}
    assert any(leak.where.startswith("aimmodels ns/m") for leak in leaks)
    assert any(leak.where.startswith("events ns/e1") for leak in leaks)


async def test_the_emulator_scan_reads_request_bodies(kube, api):
    found = scanner()
    response = await api.post(
        kube.path("v1/configmaps", "ns"),
        json={
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "ns"},
            "data": {"a": "1"},
        },
    )
    assert response.status_code == 201, response.text
    await api.patch(
        kube.path("v1/configmaps", "ns", "c"),
        json={"data": {"b": TOKEN}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    await api.patch(
        kube.path("v1/configmaps", "ns", "c"),
        json={"data": {"b": "gone again"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    leaks = found.scan_emulator(kube.emulator)
    assert [leak.where.split()[0] for leak in leaks] == ["request"]  # only the body sent, not what is there now


def test_a_log_handler_capture_is_scanned(caplog):
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("aim_engine.test").debug("sending %s", {"Authorization": f"Bearer {TOKEN}"})
    assert scanner().scan_text("captured logs", caplog.text)
