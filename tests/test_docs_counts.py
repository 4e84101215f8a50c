"""Numbers in the docs that can drift from the code: how many CRDs, kinds, shipped plugins, hooks.

Every sentence of README.md and docs/*.md that counts one of these in words or digits ("the twelve
CRDs", "seven hooks", "8 shipped plugins") must say what the code has; upstream's count is allowed
where the sentence says it is upstream's ("upstream's ten"). A plugin added under plugins/ or a kind
added to aim_core.api makes a stale sentence fail here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aim_core.api.kinds import KINDS
from aim_core.plugin import hookspecs

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
WORDS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen".split()
NUMBER = r"(?P<n>\d+|" + "|".join(WORDS) + r")"
UPSTREAM_KINDS = sum(1 for k in KINDS if k.upstream)


def shipped_plugins() -> int:
    return len(list(ROOT.glob("plugins/*/pyproject.toml")))


def hooks() -> int:
    return sum(1 for name in dir(hookspecs) if name.startswith("aim_") and callable(getattr(hookspecs, name)))


COUNTS = {
    "kinds": (
        rf"\b{NUMBER} (?:top-level )?(?:AIM )?(?:kinds|CRDs|CustomResourceDefinitions|custom resources)\b",
        len(KINDS),
    ),
    "plugins": (rf"\b{NUMBER} (?:shipped )?plugins\b", shipped_plugins()),
    "hooks": (rf"\b{NUMBER} hooks\b", hooks()),
}


def value(text: str) -> int:
    return int(text) if text.isdigit() else WORDS.index(text.lower())


def test_the_counts_come_from_the_code():
    assert len(KINDS) >= 12 and UPSTREAM_KINDS == 10
    assert shipped_plugins() >= 8
    assert hooks() >= 7


@pytest.mark.parametrize("what", sorted(COUNTS))
def test_the_docs_count_what_the_code_has(what):
    pattern, expected = COUNTS[what]
    wrong = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(pattern, text, flags=re.IGNORECASE):
            before = text[max(0, m.start() - 40) : m.start()].lower()
            after = text[m.end() : m.end() + 30].lower()
            n = value(m["n"])
            if what == "kinds" and n == UPSTREAM_KINDS and ("upstream" in before or "upstream" in after):
                continue
            if what == "plugins" and ("example" in before or "example" in after):
                continue  # examples/plugins: written for the guide, not shipped
            if n != expected:
                line = text.count("\n", 0, m.start()) + 1
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)!r} (the code has {expected})")
    assert wrong == [], "\n".join(wrong)


def test_the_readme_starts_with_the_two_scripts_and_they_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert [line.split()[0] for line in block[:2]] == ["./scripts/demo", "./scripts/test"]
    demo = (ROOT / "scripts" / "demo").read_text(encoding="utf-8")
    assert "./scripts/setup demo" in demo and "aim-engine render -f examples -o report --explain" in demo
    assert "aim-engine render -f examples -o report --explain" in readme
    assert "./scripts/setup test" in (ROOT / "scripts" / "test").read_text(encoding="utf-8")
    assert "./scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- commands in the docs

SHELL_BLOCK = re.compile(r"```(?:sh|bash|shell|console)?\n(.*?)```", flags=re.S)
AIM_ENGINE = re.compile(r"(?:^(?:\.venv/bin/)?|\|\s*|<\()aim-engine\s+(?P<args>.*)$")


def shell_lines() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        for block in SHELL_BLOCK.findall(path.read_text(encoding="utf-8")):
            for raw in block.splitlines():
                line = raw.split(" #")[0].strip().removeprefix("$ ").strip()
                if line:
                    out.append((str(path.relative_to(ROOT)), line))
    return out


def test_every_aim_engine_command_in_the_docs_parses():
    """Subcommands and options the docs show exist (lines with [optional] or a|b placeholders aside)."""
    import contextlib
    import io
    import shlex

    from aim_core.cli import build_parser

    checked, wrong = 0, []
    for where, line in shell_lines():
        m = AIM_ENGINE.search(line.removesuffix(")") if "<(aim-engine" in line else line)
        if not m or re.search(r"[\[\]|<>]|\.\.\.|\\$", m["args"]):
            continue
        checked += 1
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                build_parser().parse_args(shlex.split(m["args"]))
        except SystemExit as exc:
            if exc.code:
                wrong.append(f"{where}: {line}\n    {err.getvalue().strip().splitlines()[-1]}")
    assert checked > 20
    assert wrong == [], "\n".join(wrong)


def test_install_commands_name_files_and_charts_that_exist():
    checked, wrong = 0, []
    for where, line in shell_lines():
        words = line.split()
        if words[:2] == ["kubectl", "apply"]:
            for flag, path in zip(words, words[1:]):
                if flag in ("-f", "-k") and path != "-" and not path.startswith("http"):
                    checked += 1
                    if not (ROOT / path).exists():
                        wrong.append(f"{where}: {line}: {path} does not exist")
        if words[:2] == ["helm", "install"] and len(words) > 3:
            checked += 1
            if not (ROOT / words[3]).is_dir():
                wrong.append(f"{where}: {line}: {words[3]} is not a chart here")
    assert checked > 5
    assert wrong == [], "\n".join(wrong)
