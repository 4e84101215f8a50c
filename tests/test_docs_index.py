"""The docs index: what the code offers has a place in docs/ where people look for it.

* every hook spec in ``aim_core/plugin/hookspecs.py`` has a heading in ``docs/plugins.md``
  containing its name in backticks;
* every CLI subcommand (nested ones too, e.g. ``aim-engine artifact download``)
  has a heading in ``docs/cli.md`` containing ``aim-engine X [Y]`` in backticks;
* every metric family created in the ``aim_core/metrics`` package (and every family
  a scrape of a fresh :class:`~aim_core.metrics.Metrics` shows) is the first cell of
  a table row in ``docs/metrics.md``, in backticks;
* every condition reason the code can set is the first cell of a table row in
  ``docs/troubleshooting.md``, in backticks;
* every flag of ``aim-engine run`` and every environment variable the code
  reads is in ``docs/configuration.md``;
* every page in ``docs/`` is linked from ``docs/index.md``.

The collectors live in :mod:`tests.docs.collect`; ``tests/docs/test_collect.py``
shows on small sources that they find what they must (so these tests can fail).
"""

from __future__ import annotations

import re
from pathlib import Path

from aim_core.plugin import hookspecs
from tests.docs import collect

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
METRICS_PACKAGE = ROOT / "aim_core" / "metrics"


def _read(name: str) -> str:
    path = DOCS / name
    assert path.is_file(), f"docs/{name} is missing"
    return path.read_text(encoding="utf-8")


def _cli_parser():
    from aim_core import cli

    return cli.build_parser()


def _missing_headings(names: list[str], markdown: str, *, follow: str) -> list[str]:
    """Names no heading span starts with (the span may go on with ``follow``: arguments, a signature)."""
    spans = collect.heading_code_spans(markdown)
    return [n for n in names if not any(s == n or (s.startswith(n) and re.match(follow, s[len(n) :])) for s in spans)]


# ---------------------------------------------------------------- hooks


def test_every_hook_spec_has_a_heading_in_plugins_md():
    marker = f"{hookspecs.PROJECT}_spec"
    hooks = sorted(name for name, fn in vars(hookspecs).items() if callable(fn) and hasattr(fn, marker))
    assert hooks, "no hook specs found: the collector is broken"

    missing = _missing_headings(hooks, _read("plugins.md"), follow=r"\(")

    assert missing == [], f"docs/plugins.md needs a heading with `{missing[0]}(...)` for each of {missing}"


# ---------------------------------------------------------------- CLI


def test_every_cli_command_has_a_heading_in_cli_md():
    commands = collect.cli_commands(_cli_parser())
    assert {"aim-engine run", "aim-engine artifact download"} <= set(commands), commands

    missing = _missing_headings(commands, _read("cli.md"), follow=r"\s")

    assert missing == [], f"docs/cli.md needs a heading containing `{missing[0]}` (in backticks) for each of {missing}"


def test_every_run_flag_is_in_configuration_md():
    options = collect.cli_options(collect.subparser(_cli_parser(), "run"))
    assert "--workers" in options, options
    text = _read("configuration.md")

    missing = [o for o in options if not re.search(rf"`{re.escape(o)}(?![\w-])[^`]*`", text)]

    assert missing == [], f"docs/configuration.md does not document these flags of `aim-engine run`: {missing}"


# ---------------------------------------------------------------- metrics


def test_every_metric_family_has_a_row_in_metrics_md():
    from aim_core.metrics import Metrics

    modules = sorted(METRICS_PACKAGE.glob("*.py"))
    families = set().union(*(collect.metric_families_in(m.read_text(encoding="utf-8")) for m in modules))
    assert {"aim_objects", "workqueue_depth", "rest_client_requests_total"} <= families, (
        f"the source collector missed families in {[m.name for m in modules]}: it needs a look"
    )
    families |= Metrics().family_names()
    rows = collect.table_first_cells(_read("metrics.md"))

    def documented(name: str) -> bool:
        # prometheus_client drops a counter's _total from the family name; either spelling is fine
        base = name.removesuffix("_total")
        return bool({name, base, f"{base}_total"} & rows)

    missing = sorted(f for f in families if not documented(f))

    assert missing == [], f"docs/metrics.md needs a table row starting with | `name` | for each of {missing}"


# ---------------------------------------------------------------- reasons


def test_every_condition_reason_has_a_row_in_troubleshooting_md():
    sites = collect.code_reason_sites()
    assert len(sites) > 100, f"only {len(sites)} reasons found: the collector is broken"
    rows = collect.table_first_cells(_read("troubleshooting.md"))

    missing = {reason: where for reason, where in sorted(sites.items()) if reason not in rows}

    assert not missing, "docs/troubleshooting.md needs a table row starting with | `Reason` | for:\n" + "\n".join(
        f"  {reason}  (set at {', '.join(where[:3])})" for reason, where in missing.items()
    )


def test_troubleshooting_rows_are_reasons_the_code_sets():
    """A row for a reason nothing sets any more is stale; it would send people looking for the wrong thing."""
    sites = collect.code_reason_sites()
    rows = collect.table_first_cells(_read("troubleshooting.md"))

    stale = sorted(r for r in rows if collect.REASON.match(r) and r not in sites)

    assert stale == [], f"docs/troubleshooting.md has rows for reasons the code never sets: {stale}"


# ---------------------------------------------------------------- environment


def test_every_environment_variable_the_code_reads_is_in_configuration_md():
    found = collect.code_env_vars()
    assert {"AIM_SYSTEM_NAMESPACE", "AIM_ENGINE_PLUGINS", "STALL_TIMEOUT"} <= found.keys(), sorted(found)
    rows = collect.table_first_cells(_read("configuration.md"))
    rows |= {name.strip(" `") for row in _first_cells_raw(_read("configuration.md")) for name in row.split(",")}

    missing = {name: where for name, where in sorted(found.items()) if name not in rows}

    assert not missing, "docs/configuration.md needs a table row starting with | `NAME` | for:\n" + "\n".join(
        f"  {name}  (read in {', '.join(where[:3])})" for name, where in missing.items()
    )


def _first_cells_raw(markdown: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\s*\|([^|]+)\|", markdown, flags=re.MULTILINE)]


# ---------------------------------------------------------------- the index


def test_every_docs_page_is_linked_from_the_index():
    index = _read("index.md")
    linked = set(re.findall(r"\]\(([\w./-]+\.md)(?:#[\w-]*)?\)", index))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")} - {"index.md"}

    assert sorted(pages - linked) == [], "docs/index.md does not link these pages"
    assert sorted(p for p in linked if not (DOCS / p).is_file()) == [], "docs/index.md links pages that do not exist"
