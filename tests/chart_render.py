"""Render the Helm chart in ``charts/aim-engine`` without Helm.

Helm is not installable from the package registries this project may use, so
the chart tests render its templates here. This is the subset of Go templates
and Sprig the chart uses, with Helm's semantics: ``{{- ... -}}`` whitespace
trimming, comments, ``define``/``include``, ``if``/``else``, ``range``,
``with``, pipelines, field access on ``.`` and ``$``, parenthesised
pipelines, and the functions ``include``, ``toYaml``, ``fromYaml``,
``nindent``, ``indent``, ``default``, ``quote``. Anything else raises, so a
template that needs more fails loudly instead of rendering wrongly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

_ACTION = re.compile(r"{{(-\s)?(.*?)(\s-)?}}", re.S)


class TemplateError(Exception):
    pass


# ------------------------------------------------------------------ parsing


def _tokens(text: str) -> list[tuple[str, str]]:
    """Text and action tokens, with Go's trim markers applied to the neighbouring text."""
    out: list[tuple[str, str]] = []
    pos = 0
    trim_next = False
    for m in _ACTION.finditer(text):
        chunk = text[pos : m.start()]
        if trim_next:
            chunk = chunk.lstrip()
        if m.group(1):
            chunk = chunk.rstrip()
        out.append(("text", chunk))
        body = m.group(2).strip()
        if not (body.startswith("/*") and body.endswith("*/")):
            out.append(("action", body))
        trim_next = bool(m.group(3))
        pos = m.end()
    chunk = text[pos:]
    out.append(("text", chunk.lstrip() if trim_next else chunk))
    return out


def _parse(tokens: list[tuple[str, str]], i: int, defines: dict[str, list]) -> tuple[list, int, str | None]:
    """Nodes up to a closing ``end``/``else``; returns (nodes, next index, the closer)."""
    nodes: list = []
    while i < len(tokens):
        kind, body = tokens[i]
        i += 1
        if kind == "text":
            if body:
                nodes.append(("text", body))
            continue
        word, _, rest = body.partition(" ")
        if word in ("end", "else"):
            return nodes, i, word
        if word in ("if", "range", "with"):
            then, i, closer = _parse(tokens, i, defines)
            other: list = []
            if closer == "else":
                other, i, closer = _parse(tokens, i, defines)
            if closer != "end":
                raise TemplateError(f"{word} {rest!r} is not closed")
            nodes.append((word, rest.strip(), then, other))
        elif word == "define":
            inner, i, closer = _parse(tokens, i, defines)
            if closer != "end":
                raise TemplateError(f"define {rest} is not closed")
            defines[json.loads(rest.strip())] = inner
        else:
            nodes.append(("action", body))
    return nodes, i, None


# --------------------------------------------------------------- evaluation


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (isinstance(value, (Mapping, list)) and not value)


def _split(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside quotes and parentheses."""
    parts, depth, quote, cur = [], 0, False, ""
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        if not quote and depth == 0 and (ch == sep if sep != " " else ch.isspace()):
            if cur.strip():
                parts.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


class Chart:
    def __init__(self, root: Path, values: Mapping[str, Any], *, namespace: str, release: str = "aim-engine"):
        self.root = root
        meta = yaml.safe_load((root / "Chart.yaml").read_text())
        self.context = {
            "Values": values,
            "Release": {"Name": release, "Namespace": namespace, "Service": "Helm"},
            "Chart": {"Name": meta["name"], "Version": meta["version"], "AppVersion": meta["appVersion"]},
            "Files": {"Get": lambda name: (root / name).read_text()},
        }
        self.defines: dict[str, list] = {}
        self.templates: dict[str, list] = {}
        for path in sorted((root / "templates").iterdir()):
            nodes, _, closer = _parse(_tokens(path.read_text()), 0, self.defines)
            if closer is not None:
                raise TemplateError(f"{path.name}: unexpected {closer}")
            if not path.name.startswith("_"):
                self.templates[path.name] = nodes

    def render(self) -> dict[str, str]:
        return {name: self._run(nodes, self.context) for name, nodes in self.templates.items()}

    def objects(self) -> list[dict[str, Any]]:
        docs: list[dict[str, Any]] = []
        for text in self.render().values():
            docs += [d for d in yaml.safe_load_all(text) if d]
        return docs

    def _run(self, nodes: list, dot: Any) -> str:
        out = []
        for node in nodes:
            kind = node[0]
            if kind == "text":
                out.append(node[1])
            elif kind == "action":
                out.append(_print(self._pipeline(node[1], dot)))
            elif kind == "if":
                out.append(self._run(node[2] if _truthy(self._pipeline(node[1], dot)) else node[3], dot))
            elif kind == "with":
                value = self._pipeline(node[1], dot)
                out.append(self._run(node[2], value) if _truthy(value) else self._run(node[3], dot))
            elif kind == "range":
                items = self._pipeline(node[1], dot)
                if _truthy(items):
                    out += [
                        self._run(node[2], item) for item in (items.values() if isinstance(items, Mapping) else items)
                    ]
                else:
                    out.append(self._run(node[3], dot))
        return "".join(out)

    def _pipeline(self, text: str, dot: Any) -> Any:
        value: Any = _NOTHING
        for command in _split(text, "|"):
            words = _split(command, " ")
            head, args = words[0], [self._term(w, dot) for w in words[1:]]
            if value is not _NOTHING:
                args.append(value)
            if head in _FUNCS or head == "include":
                value = self._include(*args) if head == "include" else _FUNCS[head](*args)
            else:
                value = self._term(head, dot)
                if callable(value):
                    value = value(*args)
                elif args:
                    raise TemplateError(f"{head} is not a function: {command!r}")
        return value

    def _term(self, word: str, dot: Any) -> Any:
        if word.startswith('"'):
            return json.loads(word)
        if re.fullmatch(r"-?\d+", word):
            return int(word)
        if word in ("true", "false"):
            return word == "true"
        if word.startswith("("):
            close = word.rindex(")")
            return _fields(self._pipeline(word[1:close], dot), word[close + 1 :])
        if word == ".":
            return dot
        if word.startswith("$"):
            return _fields(self.context, word[1:])
        if word.startswith("."):
            return _fields(dot, word)
        raise TemplateError(f"unsupported term {word!r}")

    def _include(self, name: str, data: Any) -> str:
        if name not in self.defines:
            raise TemplateError(f"no template {name!r}")
        return self._run(self.defines[name], data)


_NOTHING = object()


def _fields(value: Any, path: str) -> Any:
    for part in [p for p in path.split(".") if p]:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _print(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Mapping, list)):
        raise TemplateError(f"printing a collection needs toYaml: {value!r}")
    return str(value)


def _to_yaml(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=False, sort_keys=True).rstrip("\n")


def _indent(n: int, text: str) -> str:
    return "\n".join((" " * n + line) if line else line for line in str(text).split("\n"))


_FUNCS = {
    "toYaml": _to_yaml,
    "fromYaml": lambda text: yaml.safe_load(text) or {},
    "indent": _indent,
    "nindent": lambda n, text: "\n" + _indent(n, text),
    "default": lambda fallback, value=None: value if _truthy(value) else fallback,
    "quote": lambda value: json.dumps(_print(value)),
}
