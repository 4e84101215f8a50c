"""``aim-engine render -o report``: what render concluded, for a person, in a screenful.

Every line fits ``width`` columns: long names (templates run to 70 characters) fold at a ``-``
and continue on the next line, never cut; sentences wrap. First the services (status, template,
why, what would be applied), then the other objects that are not ready, then with ``--explain``
how each service's model and template were resolved, last how to see the objects themselves.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any


def fold(text: str, width: int) -> list[str]:
    """``text`` in pieces of at most ``width`` characters, broken after a ``-``, ``.`` or ``/`` where one is near."""
    width = max(width, 8)
    out = []
    while len(text) > width:
        cut = max(text.rfind(c, 0, width) for c in "-./,")
        cut = cut + 1 if cut >= width // 2 else width
        out.append(text[:cut])
        text = text[cut:]
    out.append(text)
    return out


def _wrap(label: str, text: str, width: int, indent: int = 2) -> list[str]:
    first = " " * indent + (f"{label}: " if label else "")
    rest = " " * (indent + 4)
    return textwrap.wrap(
        text, width, initial_indent=first, subsequent_indent=rest, break_long_words=True, break_on_hyphens=False
    ) or [first.rstrip()]


def _columns(rows: Sequence[Sequence[str]], width: int) -> list[str]:
    """Rows as aligned columns within ``width``; the last column folds to fit."""
    fixed = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    room = max(width - sum(fixed) - 2 * len(fixed), 16)
    lines = []
    for row in rows:
        pieces = fold(row[-1], room)
        head = "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], fixed, strict=False))
        lines.append(f"{head}  {pieces[0]}".rstrip())
        pad = " " * (len(head) + 2)
        lines += [f"{pad}{p}" for p in pieces[1:]]
    return lines


def _ident(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


_OFFLINE = "NotListedOffline"  # a registry render does not ask: not a failure of the input


def _ready(status: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or () if c.get("type") == "Ready"), None)


def _ready_reason(status: dict[str, Any]) -> str:
    ready = _ready(status)
    if not ready or ready.get("status") == "True":
        return ""
    return ": ".join(p for p in (ready.get("reason"), ready.get("message")) if p)


def format_report(
    results: Sequence[Any],
    summary: Sequence[Any],
    checked: Any,
    *,
    explain: bool,
    width: int = 100,
    files: Sequence[str] = (),
) -> str:
    width = max(60, min(width, 160))
    lines: list[str] = []
    source = " ".join(files)
    lines.append(
        f"Planned {len(results)} objects from {source or 'the input'}: {len(summary)} service(s)"
        + (f", {len(checked.refused)} refused" if checked.refused else "")
        + ". Nothing was sent to a cluster."
    )
    lines.append("")
    if summary:
        rows = [("SERVICE", "STATUS", "TEMPLATE")] + [(s.service, s.status, s.template) for s in summary]
        table = _columns(rows, width)
        lines.append(table[0])
        body = table[1:]
        # each service's rows, then its why and what it would apply
        i = 0
        for s in summary:
            lines.append(body[i])
            i += 1
            while i < len(body) and body[i].startswith(" "):
                lines.append(body[i])
                i += 1
            lines += _wrap("why", s.why, width)
            lines += _wrap("would apply", ", ".join(s.applies) or "nothing yet", width)
        lines.append("")
    others, offline = [], []
    for r in results:
        ready = _ready(r.status)
        if r.obj.get("kind") == "AIMService" or ready is None or ready.get("status") == "True":
            continue
        (offline if _OFFLINE in (ready.get("message") or "") else others).append(r)
    if others:
        lines.append("Other objects that are not Ready:")
        for r in others:
            lines += _wrap(
                "",
                f"{r.obj['kind']} {_ident(r.obj)}: {r.status.get('status') or '-'}; {_ready_reason(r.status)}",
                width,
            )
        lines.append("")
    if offline:
        lines.append(
            "Not checked offline (render asks no registry; `aim-engine tags IMAGE` lists what a filter matches):"
        )
        for r in offline:
            lines += _wrap("", f"{r.obj['kind']} {_ident(r.obj)}", width)
        lines.append("")
    if checked.refused:
        lines.append("Refused (the API server would reject these; nothing was planned from them):")
        for f in checked.refused:
            lines += _wrap("", f.line(), width)
        lines.append("")
    if explain:
        lines.append("How each service was resolved:")
        for r in results:
            if r.obj.get("kind") != "AIMService":
                continue
            lines.append(f"  AIMService {_ident(r.obj)}")
            detailed = any(n.startswith("template for model ") for n in r.notes)
            for note in r.notes:
                if detailed and note.startswith("template: "):
                    continue  # the same decision as the detailed note above it
                for k, part in enumerate(note.splitlines()):
                    lines += _wrap("", part, width, indent=4 if k == 0 else 6)
        lines.append("")
    shown = " ".join(f"-f {f}" for f in files) or "-f FILE"
    lines.append("To see the objects the operator would apply and the status it would write:")
    lines.append(f"  aim-engine render {shown} -o yaml      (or ./scripts/demo -o yaml)")
    return "\n".join(lines) + "\n"
