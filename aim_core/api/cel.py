"""A small evaluator for the CEL rules in the project's CRDs (``x-kubernetes-validations``).

Enough of CEL for what the generated CRDs say: ``self`` and field selection, ``has()``,
``size()`` (and ``.size()``), ``.all()`` and ``.exists()`` over lists, integers, strings, booleans,
``!``, ``&&``, ``||``, ``? :``, comparisons and ``+ - * / %``. Anything else raises
:class:`CelUnsupported`, and so does an evaluation error (a field that is absent, a wrong type):
the caller then leaves the rule to the API server rather than refuse an object on a guess.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["CelUnsupported", "evaluate"]


class CelUnsupported(Exception):
    """A rule this evaluator does not read, or one whose evaluation failed."""


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<str>'[^'\\]*'|\"[^\"\\]*\")|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>&&|\|\||==|!=|<=|>=|[!<>+\-*/%?:().,\[\]]))"
)

Env = dict[str, Any]
Node = Callable[[Env], Any]


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise CelUnsupported(f"cannot read {text[pos:]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise CelUnsupported("unexpected end")
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise CelUnsupported(f"expected {want!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.ternary()
        if self.i != len(self.toks):
            raise CelUnsupported(f"unexpected {self.peek()!r}")
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.take("?")
        yes = self.ternary()
        self.take(":")
        no = self.ternary()
        return lambda env: _eval(yes, env) if _bool(cond(env)) else _eval(no, env)

    _LEVELS = (("||",), ("&&",), ("==", "!=", "<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            op = self.take()[1]
            right = self.binary(level + 1)
            left = _binary(op, left, right)
        return left

    def unary(self) -> Node:
        if self.peek() == "!":
            self.take()
            inner = self.unary()
            return lambda env: not _bool(inner(env))
        if self.peek() == "-":
            self.take()
            inner = self.unary()
            return lambda env: -_number(inner(env))
        return self.postfix(self.primary())

    def primary(self) -> Node:
        kind, text = self.take()
        if kind == "num":
            value = int(text)
            return lambda env: value
        if kind == "str":
            s = text[1:-1]
            return lambda env: s
        if text == "(":
            inner = self.ternary()
            self.take(")")
            return inner
        if kind != "id":
            raise CelUnsupported(f"unexpected {text!r}")
        if text in ("true", "false"):
            b = text == "true"
            return lambda env: b
        if text == "null":
            return lambda env: None
        if text == "has" and self.peek() == "(":
            self.take("(")
            target, field = self.selection()
            self.take(")")
            return lambda env: isinstance(m := target(env), Mapping) and field in m
        if text == "size" and self.peek() == "(":
            self.take("(")
            arg = self.ternary()
            self.take(")")
            return lambda env: _size(arg(env))
        if self.peek() == "(":
            raise CelUnsupported(f"function {text}() is not evaluated here")
        name = text
        return lambda env: _var(env, name)

    def selection(self) -> tuple[Node, str]:
        """``a.b.c`` inside ``has()``: the node of ``a.b`` and the field ``c``."""
        node = self.primary()
        field = None
        while self.peek() == ".":
            self.take(".")
            if field is not None:
                node = _select(node, field)
            field = self.take()[1]
        if field is None:
            raise CelUnsupported("has() needs a field selection")
        return node, field

    def postfix(self, node: Node) -> Node:
        while self.peek() in (".", "["):
            if self.take()[1] == "[":
                index = self.ternary()
                self.take("]")
                node = _index(node, index)
                continue
            kind, name = self.take()
            if kind != "id":
                raise CelUnsupported(f"unexpected {name!r}")
            if self.peek() != "(":
                node = _select(node, name)
                continue
            self.take("(")
            if name == "size":
                self.take(")")
                node = _call_size(node)
            elif name in ("all", "exists"):
                var = self.take()[1]
                self.take(",")
                body = self.ternary()
                self.take(")")
                node = _macro(name, node, var, body)
            else:
                raise CelUnsupported(f"method {name}() is not evaluated here")
        return node


def _eval(node: Node, env: Env) -> Any:
    return node(env)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise CelUnsupported("not a boolean")
    return value


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CelUnsupported("not a number")
    return value


def _size(value: Any) -> int:
    if isinstance(value, str | list | Mapping):
        return len(value)
    raise CelUnsupported("size() of a value without one")


def _var(env: Env, name: str) -> Any:
    if name not in env:
        raise CelUnsupported(f"unknown variable {name}")
    return env[name]


def _select(node: Node, field: str) -> Node:
    def run(env: Env) -> Any:
        value = node(env)
        if not isinstance(value, Mapping) or field not in value:
            raise CelUnsupported(f"no such key: {field}")
        return value[field]

    return run


def _index(node: Node, index: Node) -> Node:
    def run(env: Env) -> Any:
        value, key = node(env), index(env)
        try:
            return value[key]
        except (KeyError, IndexError, TypeError):
            raise CelUnsupported("no such index") from None

    return run


def _call_size(node: Node) -> Node:
    return lambda env: _size(node(env))


def _macro(name: str, node: Node, var: str, body: Node) -> Node:
    def run(env: Env) -> bool:
        items = node(env)
        if isinstance(items, Mapping):
            items = list(items)
        if not isinstance(items, list):
            raise CelUnsupported(f"{name}() over a value that is not a list")
        results = (_bool(body({**env, var: item})) for item in items)
        return all(results) if name == "all" else any(results)

    return run


def _binary(op: str, left: Node, right: Node) -> Node:
    if op == "&&":
        return lambda env: _bool(left(env)) and _bool(right(env))
    if op == "||":
        return lambda env: _bool(left(env)) or _bool(right(env))
    if op == "==":
        return lambda env: left(env) == right(env)
    if op == "!=":
        return lambda env: left(env) != right(env)

    def arith(env: Env) -> Any:
        a, b = left(env), right(env)
        if op == "+" and isinstance(a, str) and isinstance(b, str):
            return a + b
        if op == "+" and isinstance(a, list) and isinstance(b, list):
            return a + b
        if op in ("<", "<=", ">", ">=") and isinstance(a, str) and isinstance(b, str):
            pass
        else:
            a, b = _number(a), _number(b)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("/", "%"):
            if b == 0:
                raise CelUnsupported("division by zero")
            return a // b if op == "/" else a % b
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    return arith


@functools.lru_cache(maxsize=256)
def _compile(rule: str) -> Node:
    return _Parser(rule).parse()


def evaluate(rule: str, value: Any) -> Any:
    """The value of ``rule`` with ``self`` bound to ``value``.

    :raises CelUnsupported: the rule uses what this evaluator does not read, or its evaluation failed.
    """
    node = _compile(rule)
    try:
        return node({"self": value})
    except CelUnsupported:
        raise
    except (TypeError, ValueError, RecursionError) as exc:
        raise CelUnsupported(str(exc)) from None
