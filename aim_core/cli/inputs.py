"""One loader for every file the CLI reads: ``-f/--filename``, ``--nodes``, ``--kubeconfig``.

A path is a file, a directory (its ``*.yaml``, ``*.yml`` and ``*.json`` files, recursively, in
name order) or ``-`` for standard input. Each document must be a mapping with ``apiVersion``,
``kind`` and ``metadata.name`` (``List`` kinds are flattened to their items). Whatever is wrong
is an :class:`InputError` naming the file, the document and the line, which the CLI prints as
one line (``aim-engine: dir/svc.yaml:5:4: ...``) before it exits 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import yaml

__all__ = ["Document", "InputError", "load", "load_documents", "read_text"]

SUFFIXES = (".yaml", ".yml", ".json")
STDIN = "-"


class InputError(Exception):
    """A file the user named cannot be read or is not what the command takes (exit 2)."""


@attrs.frozen
class Document:
    """One object read from a file, with where it came from."""

    obj: dict[str, Any]
    source: str  # the path as the user wrote it (or "<stdin>")
    index: int  # the document's position in its file, from 1
    line: int  # the line its document starts on, from 1

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _loader() -> type:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_text(path: str | Path, *, stdin_ok: bool = True) -> tuple[str, str]:
    """The text of ``path`` (``-``: standard input) and how to name it in messages.

    :raises InputError: no such file, a directory, unreadable, not UTF-8.
    """
    text_path = str(path)
    if text_path == STDIN and stdin_ok:
        try:
            return sys.stdin.read(), "<stdin>"
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"<stdin>: cannot read: {exc}") from None
    p = Path(text_path)
    try:
        return p.read_text(encoding="utf-8"), text_path
    except FileNotFoundError:
        raise InputError(f"{text_path}: no such file or directory") from None
    except IsADirectoryError:
        raise InputError(f"{text_path}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{text_path}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{text_path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{text_path}: cannot read: {exc.strerror or exc}") from None


def _files(path: str) -> list[str]:
    if path == STDIN:
        return [STDIN]
    p = Path(path)
    if p.is_dir():
        found = sorted(f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES)
        if not found:
            raise InputError(f"{path}: no .yaml, .yml or .json file in this directory")
        return [str(f) for f in found]
    if not p.exists():
        raise InputError(f"{path}: no such file or directory")
    return [path]


def parse(text: str, source: str) -> list[tuple[Any, int, int]]:
    """The documents of ``text`` as ``(value, index, line)``; JSON is YAML, so one parser reads both.

    :raises InputError: ``source:line:column: what`` of the first syntax error.
    """
    out: list[tuple[Any, int, int]] = []
    try:
        loader = _loader()(text)
        try:
            index = 0
            while loader.check_node():
                node = loader.get_node()
                index += 1
                value = loader.construct_document(node)
                out.append((value, index, node.start_mark.line + 1))
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        if mark is not None:
            raise InputError(f"{source}:{mark.line + 1}:{mark.column + 1}: malformed YAML: {what}") from None
        raise InputError(f"{source}: malformed YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: malformed YAML: {exc}") from None
    return out


def _check(doc: Any, source: str, index: int, line: int) -> dict[str, Any]:
    where = f"{source}:{line}: document {index}"
    if not isinstance(doc, dict):
        shown = "a list" if isinstance(doc, list) else f"the {type(doc).__name__} {json.dumps(doc, default=str)[:40]}"
        raise InputError(
            f"{where}: expected a Kubernetes object (a mapping with apiVersion, kind, metadata), got {shown}"
        )
    missing = [k for k in ("apiVersion", "kind") if not isinstance(doc.get(k), str) or not doc.get(k)]
    meta = doc.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise InputError(f"{where}: metadata must be a mapping, not {type(meta).__name__}")
    name = (meta or {}).get("name")
    if not isinstance(name, str) or not name:
        missing.append("metadata.name")
    if missing:
        kind = doc.get("kind") if isinstance(doc.get("kind"), str) else "object"
        raise InputError(f"{where}: {kind} has no {', '.join(missing)}")
    return doc


def load(paths: Iterable[str | Path], *, require_names: bool = True) -> list[Document]:
    """Every object under ``paths``, in order, ``List`` kinds flattened.

    Empty documents (``---`` at the end of a file) are skipped. ``-`` reads standard input once.

    :raises InputError: the first thing wrong, naming its file and line.
    """
    docs: list[Document] = []
    stdin_read = False
    for path in paths:
        for f in _files(str(path)):
            if f == STDIN:
                if stdin_read:
                    continue
                stdin_read = True
            text, source = read_text(f)
            for value, index, line in parse(text, source):
                if value is None:
                    continue
                if isinstance(value, dict) and str(value.get("kind", "")).endswith("List") and "items" in value:
                    items = value["items"]
                    if not isinstance(items, list):
                        raise InputError(f"{source}:{line}: document {index}: {value['kind']}.items must be a list")
                    for item in items:
                        docs.append(
                            Document(_check(item, source, index, line) if require_names else item, source, index, line)
                        )
                    continue
                obj = _check(value, source, index, line) if require_names else value
                docs.append(Document(obj, source, index, line))
    return docs


def load_documents(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The objects of :func:`load`, without where they came from."""
    return [d.obj for d in load(paths)]


def kubeconfig_problem(path: str | None) -> str | None:
    """Why the kubeconfig at ``path`` cannot be read as one (None: it can, or there is none to read)."""
    if path is None:
        return None
    text, source = read_text(path, stdin_ok=False)
    docs = parse(text, source)
    values = [v for v, _, _ in docs if v is not None]
    if not values:
        return f"{source}: empty, not a kubeconfig"
    if len(values) > 1:
        return f"{source}: {len(values)} documents; a kubeconfig is one"
    if not isinstance(values[0], dict):
        return f"{source}:{docs[0][2]}: not a kubeconfig (a mapping with clusters, contexts and users)"
    return None
