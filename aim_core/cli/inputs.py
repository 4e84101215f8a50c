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
    node: Any = attrs.field(default=None, eq=False, repr=False)  # its YAML node, for where a field is

    def at(self, field: str) -> str:
        """``file:line:column`` of a field path such as ``spec.adapters.sourceUri`` (kube-openapi's form,
        without list indices: the first list item that has the next key), else of the document."""
        node = self.node
        found = None
        for key in [k for k in field.split(".") if k]:
            node = _child(node, key)
            if node is None:
                break
            found = node
        if found is None:
            return self.where
        return f"{self.source}:{found.start_mark.line + 1}:{found.start_mark.column + 1}"

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}"


def _child(node: Any, key: str) -> Any:
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if (found := _child(item, key)) is not None:
                return found
        return None
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                return v if not isinstance(v, yaml.ScalarNode) else k if v.value in ("", "~", "null") else v
    return None


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


def parse(text: str, source: str) -> list[tuple[Any, int, int, Any]]:
    """The documents of ``text`` as ``(value, index, line)``; JSON is YAML, so one parser reads both.

    :raises InputError: ``source:line:column: what`` of the first syntax error.
    """
    out: list[tuple[Any, int, int, Any]] = []
    try:
        loader = _loader()(text)
        try:
            index = 0
            while loader.check_node():
                node = loader.get_node()
                index += 1
                value = loader.construct_document(node)
                out.append((value, index, node.start_mark.line + 1, node))
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
    kind = doc.get("kind") if isinstance(doc.get("kind"), str) else "object"
    if missing:
        raise InputError(f"{where}: {kind} has no {', '.join(missing)}")
    if problem := _metadata_problem(meta or {}):
        # the API server cannot even decode such an object (400, not 422): it is unreadable input
        raise InputError(f"{where}: {kind} {name}: {problem}")
    return doc


def _metadata_problem(meta: dict[str, Any]) -> str | None:
    for key in ("name", "namespace", "generateName", "uid", "resourceVersion"):
        if key in meta and meta[key] is not None and not isinstance(meta[key], str):
            return f"metadata.{key} must be a string, not {json.dumps(meta[key], default=str)}"
    for key in ("labels", "annotations"):
        value = meta.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            return f"metadata.{key} must be a mapping of strings, not {type(value).__name__}"
        for k, v in value.items():
            if not isinstance(k, str) or not isinstance(v, str):
                return f'metadata.{key}.{k}: must be a string (quote it: {k}: "{v}")'
    if "generation" in meta and (isinstance(meta["generation"], bool) or not isinstance(meta["generation"], int)):
        return "metadata.generation must be an integer"
    return None


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
            for value, index, line, node in parse(text, source):
                if value is None:
                    continue
                if isinstance(value, dict) and str(value.get("kind", "")).endswith("List") and "items" in value:
                    items = value["items"]
                    if not isinstance(items, list):
                        raise InputError(f"{source}:{line}: document {index}: {value['kind']}.items must be a list")
                    for item in items:
                        obj = _check(item, source, index, line) if require_names else item
                        docs.append(Document(obj, source, index, line))
                    continue
                obj = _check(value, source, index, line) if require_names else value
                docs.append(Document(obj, source, index, line, node))
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
    values = [v for v, _, _, _ in docs if v is not None]
    if not values:
        return f"{source}: empty, not a kubeconfig"
    if len(values) > 1:
        return f"{source}: {len(values)} documents; a kubeconfig is one"
    if not isinstance(values[0], dict):
        return f"{source}:{docs[0][2]}: not a kubeconfig (a mapping with clusters, contexts and users)"
    return None
