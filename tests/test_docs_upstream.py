"""Every requirement id the code, tests and docs cite (F<n>, Q<n>) has an entry in docs/upstream.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "upstream.md"
CITED = re.compile(r"\b[FQ][0-9]{1,2}\b")
ENTRY = re.compile(r"^- \*\*([FQ][0-9]{1,2})\*\* ", re.M)


def cited(paths: list[Path]) -> set[str]:
    return {i for p in paths for i in CITED.findall(p.read_text(encoding="utf-8"))}


def missing_entries(ids: set[str], page: str) -> set[str]:
    return ids - set(ENTRY.findall(page))


def sources() -> list[Path]:
    files = [
        p
        for d in ("aim_core", "plugins", "testing", "tests")
        for p in (ROOT / d).rglob("*.py")
        if p != Path(__file__).resolve()
    ]
    return files + [p for p in (ROOT / "docs").glob("*.md") if p != PAGE]


def test_every_cited_id_has_an_entry():
    assert missing_entries(cited(sources()), PAGE.read_text(encoding="utf-8")) == set()


def test_the_check_sees_an_id_without_an_entry():
    page = "- **F1** Ten kinds.\n- **Q2** A quirk.\n"
    assert missing_entries({"F1", "F2", "Q2"}, page) == {"F2"}
