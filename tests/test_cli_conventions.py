"""What kubectl and helm users expect of a CLI: --version, completion, examples and exit codes in
every --help, errors that name the choices, one spelling of -o and -f across commands."""

from __future__ import annotations

import argparse
import shutil
import subprocess

import pytest

from aim_core.cli import build_parser
from tests.cliprocess import ROOT, cli


def parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from parsers(child, (*path, name))


PARSERS = list(parsers(build_parser()))


def test_version_names_the_release_and_the_commit_when_known():
    done = cli("--version")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("aim-engine 0.")
    if (ROOT / ".git").exists() and shutil.which("git"):
        assert "(commit " in done.stdout


@pytest.mark.parametrize(("path", "parser"), PARSERS, ids=[" ".join(p) or "aim-engine" for p, _ in PARSERS])
def test_every_help_has_examples_and_exit_codes(path, parser):
    text = parser.format_help()
    assert "Examples:\n  " in text
    assert "Exit status: 0 " in text
    for line in text.split("Examples:")[1].splitlines()[1:]:
        if not line.strip():
            break
        assert line.strip().split()[0] in ("aim-engine", "source", "echo", "kubectl", "TARGET_DIR=/tmp/m"), line


@pytest.mark.parametrize(("path", "parser"), PARSERS, ids=[" ".join(p) or "aim-engine" for p, _ in PARSERS])
def test_output_and_file_options_are_spelt_one_way(path, parser):
    for action in parser._actions:
        if "--output" in action.option_strings:
            assert action.option_strings[:2] == ["-o", "--output"] and action.choices
        if action.dest in ("file", "filename") or "-f" in action.option_strings:
            assert action.option_strings[:2] == ["-f", "--filename"]
        assert "--json" not in action.option_strings or action.help == argparse.SUPPRESS


def test_a_missing_subcommand_names_the_choices_not_the_parser_internals():
    done = cli("bench")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "aim-engine bench: error: missing the command: show, compare or sweep"
    assert "bench_command" not in done.stderr
    done = cli("rendr")
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert "unknown command 'rendr' (did you mean 'render'?); choose crds, plugins, render" in last


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion_completes_commands_options_and_choices(tmp_path):
    done = cli("completion", "bash")
    assert done.returncode == 0
    script = tmp_path / "aim-engine.bash"
    script.write_text(done.stdout)

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        probe = (
            f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
            '_aim_engine; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        run = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path)
        return run.stdout.split()

    assert "render" in complete("aim-engine ren")
    assert {"show", "compare", "sweep"} == set(complete("aim-engine bench "))
    assert "--strict" in complete("aim-engine render --st")
    assert set(complete("aim-engine render -o ")) == {"yaml", "json", "summary", "report"}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_completion_scripts_parse(shell, tmp_path):
    done = cli("completion", shell)
    assert done.returncode == 0 and "aim-engine" in done.stdout
    assert "render" in done.stdout and ("--strict" in done.stdout or "-l strict" in done.stdout)
    if shutil.which(shell) is None:
        pytest.skip(f"no {shell} here to parse the script")
    script = tmp_path / f"aim-engine.{shell}"
    script.write_text(done.stdout)
    check = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr


def test_a_bad_option_value_names_the_option_and_what_it_takes():
    done = cli("run", "--workers", "0")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "aim-engine run: error: argument --workers: '0': at least 1"
    done = cli("render", "-f", "examples", "-o", "yml")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "aim-engine render: error: -o/--output: unknown value 'yml' (did you mean 'yaml'?); "
        "choose yaml, json, summary or report"
    )
