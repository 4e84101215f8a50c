"""Links between the docs resolve: the file exists, and so does the heading an anchor names.

Anchors follow GitHub's rule: the heading's text, lower-cased, without
punctuation other than ``-`` and ``_``, spaces turned into ``-``; a repeated
heading gets ``-1``, ``-2``, ... Links inside code blocks are not links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md", ROOT / "examples" / "README.md"])
FENCE = re.compile(r"^```.*?^```", flags=re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(markdown: str) -> set[str]:
    found: set[str] = set()
    for line in FENCE.sub("", markdown).splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        candidate, n = slug, 0
        while candidate in found:
            n += 1
            candidate = f"{slug}-{n}"
        found.add(candidate)
    return found


def broken_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text(encoding="utf-8")):
            broken.append(f"{target} (no such heading)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(page):
    assert broken_links(page) == []


def test_the_link_check_catches_missing_files_and_headings(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## The `aim-engine run` command\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md) [ok](other.md#the-aim-engine-run-command) [ok](other.md#same-1)\n"
        "[gone](missing.md) [bad](other.md#nowhere) [self](#here)\n"
        "```\n[not a link](nowhere.md)\n```\n## Here\n"
    )

    assert broken_links(page) == ["missing.md (no such file)", "other.md#nowhere (no such heading)"]
