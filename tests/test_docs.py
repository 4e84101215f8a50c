"""Docs and tests keep the hook contract honest.

Every hook in :mod:`aim_core.plugin.hookspecs` has a section in ``docs/plugins.md``
titled with its exact signature, and is named by at least one test under
``tests/`` or ``plugins/*/tests``. Every plugin switch is documented.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from aim_core.plugin import hookspecs
from aim_core.plugin import manager as plugins

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "plugins.md"


def hook_names() -> list[str]:
    marker = f"{hookspecs.PROJECT}_spec"
    return sorted(name for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, marker))


def signature(name: str) -> str:
    """``aim_registry_client(registry: str) -> RegistryClient | None``, from the spec's own annotations."""
    sig = inspect.signature(getattr(hookspecs, name))
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"{name}({params}) -> {sig.return_annotation}"


def doc_headings() -> list[str]:
    return re.findall(r"^## `(.+)`\s*$", DOCS.read_text(), flags=re.MULTILINE)


def test_hook_discovery_finds_every_spec():
    assert hook_names() == [
        "aim_autoscalers",
        "aim_benchmark_tools",
        "aim_doctor_checks",
        "aim_gpu_vendors",
        "aim_registry_client",
        "aim_route_builders",
        "aim_runtime_builders",
    ]


@pytest.mark.parametrize("name", hook_names())
def test_hook_has_a_docs_section_titled_with_its_signature(name):
    assert signature(name) in doc_headings(), f"docs/plugins.md needs a section '## `{signature(name)}`'"


def test_every_hook_heading_in_the_docs_is_a_current_hook():
    current = {signature(name) for name in hook_names()}
    stale = [h for h in doc_headings() if h.startswith("aim_") and h not in current]
    assert stale == [], "docs/plugins.md documents hooks or signatures that no longer exist"


@pytest.mark.parametrize("name", hook_names())
def test_hook_is_named_by_a_test(name):
    test_files = [*ROOT.glob("tests/**/test_*.py"), *ROOT.glob("plugins/*/tests/**/test_*.py")]
    pattern = re.compile(rf"\b{name}\b")
    naming = [f for f in test_files if f.resolve() != Path(__file__).resolve() and pattern.search(f.read_text())]
    assert naming, f"no test under tests/ or plugins/*/tests mentions {name}"


@pytest.mark.parametrize("variable", [plugins.ENV_PLUGINS, plugins.ENV_DISABLE, plugins.ENV_TRACE])
def test_plugin_switch_is_in_the_docs_table(variable):
    assert f"| `{variable}` |" in DOCS.read_text()
