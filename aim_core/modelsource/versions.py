"""Semver constraints on image tags (F78).

A model source keeps a tag when it parses as strict semver (``MAJOR.MINOR.PATCH``
with optional ``-prerelease``; a leading ``v`` is dropped) and satisfies every
constraint of the filter. The syntax is the one users know from Helm and Go's
``Masterminds/semver``:

* comparisons ``=``, ``!=``, ``>``, ``>=``, ``<``, ``<=`` (``=>``/``=<`` too);
* ``~1.2.3`` (same major and minor, at least 1.2.3), ``~1`` (same major);
* ``^1.2.3`` (same major), ``^0.8.1`` (same 0.minor), ``^0.0.3`` (exactly 0.0.3);
* wildcards ``1.2.x``, ``1.*`` and partial versions ``1.2`` (a range for ``=``,
  padded with zeros for ``>=``/``<``: ``>=0.8`` is ``>=0.8.0``);
* hyphen ranges ``1.2 - 1.4.5``; ``,`` or a space means AND, ``||`` means OR.

Prereleases are ordinary versions here (the upstream operator includes them):
``0.8.1-rc1`` satisfies ``>=0.8.0``, and ``1.0.0-rc1`` satisfies ``<1.0.0``.
Tilde, caret and wildcard ranges compare version components, so ``1.3.0-rc1``
is not in ``~1.2.0``.

Unlike upstream, which drops a constraint it cannot parse (and so matches more
than asked), :func:`parse_constraints` raises :class:`ConstraintError` naming
the constraint, and the filter reports it.

Pure: uses the ``semver`` package for versions and ordering, no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import semver

__all__ = ["ConstraintError", "Constraints", "parse_constraints", "parse_tag", "tag_key"]

Predicate = Callable[[tuple[Any, ...]], bool]  # over a :func:`tag_key`

_WILD = {"x", "X", "*"}
_PARTIAL = re.compile(
    r"^v?(?P<major>0|[1-9]\d*|[xX*])"
    r"(?:\.(?P<minor>0|[1-9]\d*|[xX*]))?"
    r"(?:\.(?P<patch>0|[1-9]\d*|[xX*]))?"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)
_OPS = ("!=", ">=", "=>", "<=", "=<", "==", "~>", ">", "<", "=", "~", "^")
_OP_ALIASES = {"=>": ">=", "=<": "<=", "==": "=", "~>": "~"}
_MEMO_LIMIT = 200_000  # tags remembered per Constraints (one sync): names recur across repositories
_HYPHEN = re.compile(r"^\s*(\S+)\s+-\s+(\S+)\s*$")


class ConstraintError(ValueError):
    """A version constraint that cannot be read; the message names it and says why."""


def parse_tag(tag: str) -> semver.Version | None:
    """The version a tag stands for (``v1.2.3`` → 1.2.3), ``None`` for non-semver tags such as ``latest``."""
    text = tag[1:] if tag.startswith("v") else tag
    try:
        return semver.Version.parse(text)
    except (ValueError, TypeError):
        return None


Key = tuple[Any, ...]  # (major, minor, patch, prerelease order): compares like semver precedence


def _pre_key(prerelease: str | None) -> tuple[Any, ...]:
    """Semver precedence of a prerelease: none sorts last; numeric identifiers below alphanumeric ones."""
    if not prerelease:
        return (1,)
    return (0, *((0, int(p), "") if p.isdigit() else (1, 0, p) for p in prerelease.split(".")))


# semver.org's strict grammar; tag_key agrees with semver.Version.parse (tests check it against the package)
_STRICT = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?$"
)


@functools.lru_cache(maxsize=65536)
def tag_key(tag: str) -> Key | None:
    """A sortable key for a semver tag (leading ``v`` dropped, build metadata ignored), ``None`` for
    other tags. Orders as :meth:`semver.Version.compare`; parsed with one regex and cached, because a
    sync may meet tens of thousands of tags and the same names recur across repositories."""
    match = _STRICT.match(tag[1:] if tag.startswith("v") else tag)
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch), _pre_key(pre))


@attrs.frozen
class _Partial:
    """A version as written in a constraint: missing or wildcard components are ``None``."""

    major: int | None
    minor: int | None
    patch: int | None
    prerelease: str | None

    @property
    def specified(self) -> int:
        """How many leading components are given (0-3)."""
        for n, part in enumerate((self.major, self.minor, self.patch)):
            if part is None:
                return n
        return 3

    @property
    def complete(self) -> bool:
        return self.specified == 3

    def floor(self) -> Key:
        """Missing components padded with zeros (``0.8`` → ``0.8.0``), as a :func:`tag_key`."""
        return (self.major or 0, self.minor or 0, self.patch or 0, _pre_key(self.prerelease if self.complete else None))

    def prefix(self) -> tuple[int, ...]:
        return tuple(p for p in (self.major, self.minor, self.patch)[: self.specified])  # type: ignore[misc]


def _prefix(v: Key, n: int) -> tuple[int, ...]:
    return v[:n]


def _parse_partial(text: str, whole: str) -> _Partial:
    match = _PARTIAL.match(text)
    if not match:
        raise ConstraintError(
            f"version constraint {whole!r}: {text!r} is not a version (write e.g. 1.2.3, 1.2, 1.2.x or v1.2.3)"
        )
    parts: list[int | None] = []
    seen_wild = False
    for key in ("major", "minor", "patch"):
        value = match.group(key)
        if value is None or value in _WILD:
            seen_wild = True
            parts.append(None)
        elif seen_wild:
            raise ConstraintError(f"version constraint {whole!r}: a number cannot follow a wildcard in {text!r}")
        else:
            parts.append(int(value))
    pre = match.group("pre")
    if pre and None in parts:
        raise ConstraintError(f"version constraint {whole!r}: a prerelease needs a full version, not {text!r}")
    return _Partial(parts[0], parts[1], parts[2], pre)


def _equal(p: _Partial) -> Predicate:
    if p.complete:
        want = p.floor()
        return lambda v: v == want
    n, prefix = p.specified, p.prefix()
    return lambda v: _prefix(v, n) == prefix


def _tilde(p: _Partial) -> Predicate:
    floor = p.floor()
    if p.specified == 0 or (p.specified == 3 and (p.major, p.minor, p.patch) == (0, 0, 0)):
        return lambda v: v >= floor
    keep = 1 if p.specified == 1 else 2
    prefix = _prefix(floor, keep)
    return lambda v: v >= floor and _prefix(v, keep) == prefix


def _caret(p: _Partial) -> Predicate:
    floor = p.floor()
    if p.specified == 0:
        return lambda v: True
    if floor[0] > 0 or p.specified == 1:
        keep = 1
    elif floor[1] > 0 or p.specified == 2:
        keep = 2
    else:
        keep = 3
    prefix = _prefix(floor, keep)
    return lambda v: v >= floor and _prefix(v, keep) == prefix


def _comparison(op: str, p: _Partial) -> Predicate:
    if p.specified == 0:  # ">= *" and friends: everything or nothing
        return (lambda v: False) if op in ("<", ">", "!=") else (lambda v: True)
    if op == "=":
        return _equal(p)
    if op == "!=":
        eq = _equal(p)
        return lambda v: not eq(v)
    if op == "~":
        return _tilde(p)
    if op == "^":
        return _caret(p)
    floor = p.floor()
    if op == ">=":
        return lambda v: v >= floor
    if op == "<":
        return lambda v: v < floor
    if p.complete:
        if op == ">":
            return lambda v: v > floor
        return lambda v: v <= floor  # "<="
    n, prefix = p.specified, p.prefix()
    if op == ">":  # ">1.2" means above every 1.2.x
        return lambda v: _prefix(v, n) > prefix
    return lambda v: _prefix(v, n) <= prefix  # "<=1.2" includes every 1.2.x


def _single(text: str, whole: str) -> Predicate:
    for op in _OPS:
        if text.startswith(op):
            rest = text[len(op) :].strip()
            if not rest:
                raise ConstraintError(f"version constraint {whole!r}: {op!r} needs a version after it")
            return _comparison(_OP_ALIASES.get(op, op), _parse_partial(rest, whole))
    return _equal(_parse_partial(text, whole))


def _all(predicates: Sequence[Predicate]) -> Predicate:
    if len(predicates) == 1:
        return predicates[0]

    def every(v: Key) -> bool:
        for p in predicates:
            if not p(v):
                return False
        return True

    return every


def _conjunction(text: str, whole: str) -> Predicate:
    hyphen = _HYPHEN.match(text)
    if hyphen:
        low = _parse_partial(hyphen.group(1), whole)
        high = _parse_partial(hyphen.group(2), whole)
        return _all([_comparison(">=", low), _comparison("<=", high)])
    # Operators may be separated from their version by spaces (">= 1.0"): glue them back.
    tokens = re.sub(r"(!=|>=|=>|<=|=<|==|~>|[<>=~^])\s+", r"\1", text.replace(",", " ")).split()
    if not tokens:
        raise ConstraintError(f"version constraint {whole!r} is empty")
    return _all([_single(token, whole) for token in tokens])


def _one_constraint(text: str) -> Predicate:
    if not isinstance(text, str) or not text.strip():
        raise ConstraintError(f"version constraint {text!r} is empty; remove it or write e.g. '>=1.0.0'")
    alternatives = [_conjunction(part.strip(), text) for part in text.split("||")]
    if len(alternatives) == 1:
        return alternatives[0]
    return lambda v: any(p(v) for p in alternatives)


@attrs.frozen
class Constraints:
    """Constraints that a tag must all satisfy. Empty constraints accept every tag, semver or not."""

    texts: tuple[str, ...] = ()
    _predicates: tuple[Predicate, ...] = attrs.field(default=(), repr=False, eq=False)
    _memo: dict[str, bool] = attrs.field(factory=dict, init=False, repr=False, eq=False)
    _every: Predicate = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_every", _all(self._predicates) if self._predicates else (lambda v: True))

    def __bool__(self) -> bool:
        return bool(self.texts)

    def allows(self, tag: str) -> bool:
        """Whether ``tag`` passes: any tag when there are no constraints, else a semver tag inside all of them."""
        if not self.texts:
            return True
        known = self._memo.get(tag)
        if known is not None:
            return known
        key = tag_key(tag)
        allowed = key is not None and self._every(key)
        if len(self._memo) < _MEMO_LIMIT:
            self._memo[tag] = allowed
        return allowed

    def filter(self, tags: Iterable[str]) -> list[str]:
        """The tags of ``tags`` that pass, in their order."""
        if not self.texts:
            return list(tags)
        allows = self.allows
        return [t for t in tags if allows(t)]


def parse_constraints(texts: Iterable[str] | None) -> Constraints:
    """Constraints from a ``versions`` list; raises :class:`ConstraintError` for the first bad one."""
    texts = tuple(texts or ())
    return Constraints(texts, tuple(_one_constraint(t) for t in texts))
