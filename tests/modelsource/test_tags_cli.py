"""``aim-engine tags``: one filter entry through the controller's selector, listing and matching code."""

from __future__ import annotations

import json

import pytest

from aim_core import cli
from aim_core.plugin import manager as plugins
from aim_core.registry import RegistryError
from tests.modelsource.docexamples import QWEN
from tests.modelsource.harness import MemoryRegistries


@pytest.fixture()
def registries(monkeypatch) -> MemoryRegistries:
    """The command's plugin manager answers registries from memory (a throwaway registry plugin)."""
    found, original = MemoryRegistries(), plugins.get_plugin_manager

    def manager(*args, **kwargs):
        pm = original(load_entrypoints=False)
        pm.register(found, name="test-registries")
        return pm

    monkeypatch.setattr(plugins, "get_plugin_manager", manager)
    return found


def test_prints_the_matching_images_newest_first(registries, capsys):
    code = cli.main(["tags", f"ghcr.io/{QWEN}", "--versions", ">=0.8.0", "--versions", "<1.0.0"])

    assert code == 0
    assert capsys.readouterr().out.splitlines() == [f"ghcr.io/{QWEN}:{t}" for t in ("0.9.1", "0.8.5", "0.8.4", "0.8.0")]


def test_wildcards_exclusions_and_json(registries, capsys):
    code = cli.main(
        [
            "tags",
            "amdenterpriseai/aim-*",
            "--exclude",
            "amdenterpriseai/aim-base",
            "--exclude",
            "amdenterpriseai/aim-experimental",
            "--versions",
            "~0.8.0",
            "--json",
        ]
    )

    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["strategy"] == "repositories"
    assert out["images"] == [
        "amdenterpriseai/aim-deepseek-deepseek-r1:0.8.5",
        "amdenterpriseai/aim-deepseek-deepseek-r1:0.8.4",
        f"{QWEN}:0.8.5",
        f"{QWEN}:0.8.4",
    ]


def test_credentials_from_a_docker_config_file(registries, tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"auths": {"private.registry.io": {"username": "me", "password": "pw-123"}}}))

    code = cli.main(["tags", "myorg/model-b", "--registry", "private.registry.io", "--pull-secret", str(config)])

    assert code == 0
    assert {(c.username, c.password) for *_, c in registries.requests} == {("me", "pw-123")}


def test_a_failing_registry_exits_non_zero_naming_the_reason(registries, capsys):
    registries.failures["ghcr.io"] = RegistryError("auth", "registry ghcr.io answered 401", registry="ghcr.io")

    code = cli.main(["tags", f"ghcr.io/{QWEN}"])

    assert code == 1
    assert "RegistryAuthFailed" in capsys.readouterr().err


def test_a_bad_constraint_is_reported(registries, capsys):
    code = cli.main(["tags", QWEN, "--versions", "newest"])

    assert code == 1
    assert "InvalidVersionConstraint" in capsys.readouterr().err


def test_an_unreadable_pull_secret_file_is_an_error_not_a_traceback(registries, tmp_path, capsys):
    code = cli.main(["tags", QWEN, "--pull-secret", str(tmp_path / "missing.json")])

    assert code == 2
    assert "missing.json" in capsys.readouterr().err


def test_a_terminal_stderr_shows_what_is_being_listed_and_a_pipe_sees_nothing(registries, capsys, monkeypatch):
    import io
    import sys

    assert cli.main(["tags", "amdenterpriseai/aim-*", "--versions", "~0.8.0"]) == 0
    assert capsys.readouterr().err == ""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["tags", "amdenterpriseai/aim-*", "--versions", "~0.8.0"]) == 0
    assert "listing: tags of docker.io/amdenterpriseai/" in terminal.getvalue()  # the last listing is shown at the end
    listed = capsys.readouterr().out.splitlines()
    assert listed and all(line.startswith("amdenterpriseai/") for line in listed)
