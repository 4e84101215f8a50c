"""Registry settings from the environment: plain HTTP only where the user said so (or loopback)."""

import pytest

from aim_core.registry.settings import InvalidRegistrySetting, RegistrySettings, is_loopback


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("localhost:5000", True),
        ("127.0.0.1:5000", True),
        ("127.8.9.1", True),
        ("[::1]:5000", True),
        ("registry.example.com", False),
        ("10.0.0.1:5000", False),
        ("ghcr.io", False),
    ],
)
def test_loopback_hosts(host, loopback):
    assert is_loopback(host) is loopback


def test_plain_http_for_loopback_and_listed_hosts_only():
    settings = RegistrySettings.from_env({"AIM_ENGINE_REGISTRY_INSECURE": "mirror.lan:5000, lab.lan"})
    assert settings.scheme("127.0.0.1:5000") == "http"
    assert settings.scheme("mirror.lan:5000") == "http"
    assert settings.scheme("mirror.lan:5001") == "https"
    assert settings.scheme("lab.lan:443") == "http"
    assert settings.scheme("ghcr.io") == "https"


def test_numbers_and_ca_file(tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = RegistrySettings.from_env(
        {
            "AIM_ENGINE_REGISTRY_TIMEOUT": "2.5",
            "AIM_ENGINE_REGISTRY_RETRIES": "0",
            "AIM_ENGINE_REGISTRY_DEADLINE": "30",
            "AIM_ENGINE_REGISTRY_CA_FILE": str(ca),
        }
    )
    assert (settings.timeout, settings.retries, settings.deadline, settings.ca_file) == (2.5, 0, 30.0, str(ca))
    assert RegistrySettings.from_env({}) == RegistrySettings()


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"AIM_ENGINE_REGISTRY_TIMEOUT": "soon"}, "AIM_ENGINE_REGISTRY_TIMEOUT='soon' is not a number"),
        ({"AIM_ENGINE_REGISTRY_RETRIES": "-1"}, "must be at least 0"),
        ({"AIM_ENGINE_REGISTRY_DEADLINE": "0"}, "must be at least"),
        ({"AIM_ENGINE_REGISTRY_CA_FILE": "/nonexistent/ca.pem"}, "not a readable file"),
    ],
)
def test_bad_values_say_which_variable(env, says):
    with pytest.raises(InvalidRegistrySetting, match=says):
        RegistrySettings.from_env(env)
